import Barscope
import TestSupport
import Testing

/// The live demo draws its background once and copies it into every frame; the pictures must be the ones the
/// scene draws whole (the truth and the generated clips come from those).
@Suite(.suiteLimit) struct DemoSceneTests {
    @Test(arguments: [DemoScene.Kind.codes, .conveyor])
    func aCopiedBackgroundGivesTheSamePicture(kind: DemoScene.Kind) {
        let scene = DemoScene(size: Size(width: 640, height: 360), fps: 30, kind: kind)
        let stride = 640 * 4
        var background = [UInt8](repeating: 0, count: stride * 360)
        background.withUnsafeMutableBytes { scene.renderBackground(into: $0.baseAddress!, stride: stride) }
        for frame in [0, 17, 123] {
            var whole = [UInt8](repeating: 0, count: stride * 360)
            whole.withUnsafeMutableBytes { scene.render(frame: frame, into: $0.baseAddress!, stride: stride) }
            var copied = background
            copied.withUnsafeMutableBytes {
                scene.render(frame: frame, into: $0.baseAddress!, stride: stride, background: true)
            }
            #expect(copied == whole, "frame \(frame)")
            #expect(copied != background, "frame \(frame) drew nothing over the background")
        }
    }
}
