import Foundation
import TestSupport
import Testing

@testable import Barscope

/// The whole-file reader that replaces Foundation's (which leaks 4 KB on an empty file on Linux).
@Suite(.suiteLimit)
struct FileContentsTests {
    @Test func readsEveryByteAndTellsEmptyFromMissing() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("filecontents-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let empty = dir.appendingPathComponent("empty").path
        #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
        #expect(FileContents.read(atPath: empty) == Data())
        #expect(FileContents.text(atPath: empty) == "")
        // Bigger than one read's chunk (1 MB), and not a multiple of it.
        var generator = SystemRandomNumberGenerator()
        let bytes = Data((0..<(3 << 20) + 17).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let big = dir.appendingPathComponent("big").path
        #expect(FileManager.default.createFile(atPath: big, contents: bytes))
        #expect(FileContents.read(atPath: big) == bytes)
        let text = dir.appendingPathComponent("text").path
        #expect(FileManager.default.createFile(atPath: text, contents: Data("41\n".utf8)))
        #expect(FileContents.text(atPath: text) == "41\n")
        #expect(FileContents.read(atPath: dir.appendingPathComponent("missing").path) == nil)
        #expect(FileContents.read(atPath: dir.path) == nil)  // a folder
    }
}
