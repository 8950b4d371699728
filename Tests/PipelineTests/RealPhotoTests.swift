import Barscope
import Foundation
import Testing

/// The real-photo set (../shared/testdata/real-photos: 374 photographed and rendered codes with their expected
/// text, from zxing-cpp's and ZBar's public test images), scanned through the still-image path, as zxing-cpp's
/// black-box tests do: a minimum count per format, raised as the reader improves, and a cap on misreads.
@Suite struct RealPhotoTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../../shared/testdata/real-photos").standardized

    /// Measured on 2026-11-30 (291 of 374 read, 13 misread; zbarimg reads 285 and misreads 15).
    static let minimumRead = [
        "code128": 15, "code39": 11, "ean13": 47, "ean8": 9, "itf": 20, "qrcode": 101, "upca": 52, "upce": 36,
    ]

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
            }
            let images: [Image]
        }
        let manifest = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: manifestURL))
        #expect(manifest.images.count == 374)
        let scanner = ImageScanner()
        var read: [String: Int] = [:], misread = 0
        for image in manifest.images {
            let found = (try? scanner.scan(path: Self.folder.appendingPathComponent(image.file).path)) ?? []
            if found.contains(where: { $0.data == image.expected }) {
                read[image.format, default: 0] += 1
            } else if !found.isEmpty {
                misread += 1
            }
        }
        print("real photos: read \(read.values.reduce(0, +)) of \(manifest.images.count), misread \(misread): \(read)")
        for (format, minimum) in Self.minimumRead {
            #expect(read[format, default: 0] >= minimum, "\(format): \(read[format, default: 0]) < \(minimum)")
        }
        #expect(misread <= 13)
    }
}
