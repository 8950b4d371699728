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
        try expectBoxed(
            "A1082$A", in: "codabar-perspective.jpg",
            truth: [(737.1, 148.4), (739.3, 909.0), (456.2, 880.0), (432.6, 151.0)])
    }

    /// A CODE-128 of 5-px modules, blurred, tilted 13 degrees, whose label ends 8 modules past its stop bar beside
    /// dark shapes of the background (the kit's 1080p hard clip, seed 9393, frame 37, its right two thirds and upper
    /// half, kept lossless: a JPEG's artefacts move ZBar's reads). ZBar reads it on two lines only, and the walk
    /// outward along its read line took the shapes for more bars: its box ran 90 px on past the code. Its ends are
    /// now the decoder's own on that line.
    @Test func aCode128WithAShortQuietZoneIsBoxedToItsStopBar() throws {
        try expectBoxed(
            "NyOp:S", in: "code128-short-quiet-zone.png", truth: [(338, 179), (805, 262), (768, 451), (302, 381)])
    }

    /// A Codabar of 3.3-px modules in perspective, its bars leaning 13 degrees at one end and 5 at the other, read
    /// on 129 lines that all finished at its right end (the kit's 1080p viewfinder clip, seed 8080, frame 117). Its
    /// box was once drawn through the first of those lines, at the code's top corner: a rhombus reaching 150 px
    /// above the code, which the 4:3 viewfinder (the code well inside it) then dropped as running into its edge.
    @Test(arguments: ["off", "4:3"])
    func aCodabarReadOnLinesPiledAtOneEndIsBoxedFromItsMiddle(viewfinder: String) throws {
        try expectBoxed(
            "A1.1965/7D", in: "codabar-piled-hits.jpg",
            truth: [(675, 158), (1519, 181), (1492, 516), (606, 451)], viewfinder: viewfinder)
    }

    /// `run` on the fixture reads `text`, in the viewfinder, and its box covers the code (nine tenths of the truth's
    /// area inside it) and little else (a twentieth of its own area outside the truth: 1.5 modules along a code's
    /// rim is about that).
    private func expectBoxed(_ text: String, in fixture: String, truth: [P], viewfinder: String = "off") throws {
        let frame = DocumentedExamplesTests.root.appendingPathComponent("Tests/Fixtures/outline/\(fixture)").path
        let r = try Tool.run([
            "run", "--input", frame, "--every-frame", "--confirm-frames", "1", "--viewfinder", viewfinder, "--quiet",
            "--events", "-",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let read = try #require(
            Tool.events(r.stdout).first { $0["event"] as? String == "detection" && $0["data"] as? String == text },
            "\(r.stdout)")
        #expect(read["in_viewfinder"] as? Bool == true, "\(read)")
        let polygon: [P] = ((read["polygon"] as? [[Double]]) ?? []).map { ($0[0], $0[1]) }
        #expect(polygon.count == 4, "\(read)")
        let common = PolygonTests.area(PolygonTests.clip(polygon, by: truth))
        #expect(common >= 0.9 * PolygonTests.area(truth), "\(polygon)")
        #expect(common >= 0.95 * PolygonTests.area(polygon), "\(polygon)")
    }
}
