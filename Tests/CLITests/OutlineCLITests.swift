import Foundation
import TestSupport
import Testing

/// A 1D code's outline on real frames where it once went wrong (`Tests/Fixtures/outline`), against the truth the
/// frame was made with.
@Suite(.suiteLimit) struct OutlineCLITests {
    typealias P = PolygonTests.P

    /// A Codabar whose bars (horizontal, 300 px long, modules of 5 px) fan out in perspective over a 760-px code, its
    /// label's left edge slanting across the first box's outer scan lines (the kit's 1080p hard clip, seed 9393,
    /// frame 43). Its outline was once a strip 35 px wide along that edge: the walk along the bars started on the
    /// line straddling the label's edge, and the re-fit across the leaning bars that found the strip replaced the
    /// first fit.
    @Test func aTallCodabarInPerspectiveIsBoxedWhole() throws {
        let truth: [P] = [(737.1, 148.4), (739.3, 909.0), (456.2, 880.0), (432.6, 151.0)]
        let frame = DocumentedExamplesTests.root.appendingPathComponent(
            "Tests/Fixtures/outline/codabar-perspective.jpg"
        ).path
        let r = try Tool.run([
            "run", "--input", frame, "--every-frame", "--confirm-frames", "1", "--viewfinder", "off", "--quiet",
            "--events", "-",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let read = try #require(
            Tool.events(r.stdout).first { $0["event"] as? String == "detection" && $0["data"] as? String == "A1082$A" },
            "\(r.stdout)")
        let polygon: [P] = ((read["polygon"] as? [[Double]]) ?? []).map { ($0[0], $0[1]) }
        #expect(polygon.count == 4, "\(read)")
        // Covers the code (nine tenths of the truth's area inside it), and little else (a twentieth of its own area
        // outside the truth: 1.5 modules along its 2,000-px rim is about a twentieth).
        let common = PolygonTests.area(PolygonTests.clip(polygon, by: truth))
        #expect(common >= 0.9 * PolygonTests.area(truth), "\(polygon)")
        #expect(common >= 0.95 * PolygonTests.area(polygon), "\(polygon)")
    }
}
