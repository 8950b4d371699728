import Barscope
import Foundation
import TestSupport
import Testing

/// The real-photo set (../shared/testdata/real-photos: 374 photographed and rendered codes with their expected
/// text, from zxing-cpp's and ZBar's public test images), scanned through the still-image path, as zxing-cpp's
/// black-box tests do: a minimum count per format, raised as the reader improves, and a cap on misreads.
@Suite struct RealPhotoTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../../shared/testdata/real-photos").standardized

    /// Measured on 2026-11-30 with both engines and the second passes (347 of 374 read, 5 misread; ZBar alone
    /// once read 291 with 13 misread; zbarimg reads 285 and misreads 15). Raise these as the reader improves.
    static let minimumRead = [
        "code128": 16, "code39": 11, "ean13": 55, "ean8": 10, "itf": 20, "qrcode": 125, "upca": 71, "upce": 41,
    ]
    /// The target: 92% of the set read, at most 5 misread.
    static let minimumTotal = 345, maximumMisread = 5

    @Test func blackBoxCountsPerFormat() throws {
        let manifestURL = Self.folder.appendingPathComponent("manifest.json")
        guard FileManager.default.fileExists(atPath: manifestURL.path) else {
            print("skipped: the real-photo set is not at \(Self.folder.path) (it comes with ../shared)")
            return
        }
        struct Manifest: Decodable {
            struct Image: Decodable {
                let file: String
                let format: String
                let expected: String
                let kind: String
            }
            let images: [Image]
        }
        let manifest = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: manifestURL))
        #expect(manifest.images.count == 374)
        let scanner = ImageScanner()
        var read: [String: Int] = [:]
        var misread: [String] = []
        var bySource: [String: (read: Int, of: Int)] = [:]
        for image in manifest.images {
            let found = (try? scanner.scan(path: Self.folder.appendingPathComponent(image.file).path)) ?? []
            bySource[image.kind, default: (0, 0)].of += 1
            if found.contains(where: { $0.data == image.expected }) {
                read[image.format, default: 0] += 1
                bySource[image.kind, default: (0, 0)].read += 1
            } else if !found.isEmpty {
                misread.append("\(image.file): \(found.map(\.data))")
            }
        }
        let total = read.values.reduce(0, +)
        print("real photos: read \(total) of \(manifest.images.count), misread \(misread.count): \(read)")
        // Part of the set comes from zxing-cpp's own tests: each source apart.
        for (kind, n) in bySource.sorted(by: { $0.key < $1.key }) {
            print("real photos: \(kind): \(n.read) of \(n.of)")
        }
        for (format, minimum) in Self.minimumRead.sorted(by: { $0.key < $1.key }) {
            let got = read[format, default: 0]
            // Under a sanitizer the second passes' 2 s budget buys a fraction of the work: a few fewer reads.
            #expect(got >= (Sanitizer.active ? minimum * 95 / 100 : minimum), "\(format): \(got) < \(minimum)")
            // Unexpected extra reads: the count can be raised.
            if got > minimum { print("real photos: \(format) reads \(got), above its minimum \(minimum): raise it") }
        }
        #expect(total >= Self.minimumTotal)
        #expect(misread.count <= Self.maximumMisread, "\(misread)")
    }
}
