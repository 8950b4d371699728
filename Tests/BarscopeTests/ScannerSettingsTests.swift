import Barscope
import TestSupport
import Testing

@Suite(.suiteLimit) struct ScannerSettingsTests {
    @Test func zbarimgSpellingsParse() throws {
        let s = try ScannerSettings(["disable", "qrcode.enable", "i25.disable", "ean13.enable=0"])
        #expect(s.configs.count == 4)
    }

    @Test func unknownSymbologyNamesTheValue() {
        do {
            _ = try ScannerSettings(["qrcodex.enable"])
            Issue.record("accepted an unknown symbology")
        } catch {
            #expect("\(error)".hasPrefix("-S 'qrcodex.enable': unknown symbology or setting"))
        }
        #expect(throws: BarscopeError.self) { try ScannerSettings([""]) }
    }
}
