import TestSupport
import Testing

@testable import Barscope

/// How long a 1D code must be for its text: an EAN-13 may be a UPC-E's EAN-13 form (51 modules) only when UPC-E can
/// write that number.
@Suite(.suiteLimit) struct PlausibilityTests {
    /// Each of UPC-E's four ways of leaving zeros out, expanded to UPC-A and written as EAN-13 (zxing-cpp's and
    /// ZBar's rule), may be a UPC-E; UPC-A numbers it cannot write, and EAN-13s without the leading 0, may not.
    @Test func aUPCEMayOnlyBeANumberUPCECanWrite() {
        // UPC-E 0 123450 → UPC-A 0 12000 00345 (last digit 0-2: manufacturer 12d00, product 00345).
        #expect(Plausibility.couldBeUPCE("0012000003455"))
        // UPC-E 0 123453 → manufacturer 12300, product 00045.
        #expect(Plausibility.couldBeUPCE("0012300000451"))
        // UPC-E 0 123454 → manufacturer 12340, product 00005.
        #expect(Plausibility.couldBeUPCE("0012340000050"))
        // UPC-E 0 123457 → manufacturer 12345, product 00007.
        #expect(Plausibility.couldBeUPCE("0012345000070"))
        // A UPC-A of number system 6 (the small scene's 0611870833348, boxed square to the image before) and one
        // of number system 0 with a full product code: 95 modules.
        #expect(!Plausibility.couldBeUPCE("0611870833348"))
        #expect(!Plausibility.couldBeUPCE("0012345678905"))
        #expect(!Plausibility.couldBeUPCE("4006381333931"))
        #expect(Plausibility.minimumModules(type: "EAN-13", data: "0611870833348") == 95)
        #expect(Plausibility.minimumModules(type: "EAN-13", data: "0012345000070") == 51)
    }
}
