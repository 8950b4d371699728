import Barscope
import TestSupport
import Testing

/// The demo's encoders, checked against published check digits and the specifications' structure.
@Suite(.suiteLimit) struct EncoderTests {
    @Test func ean13CheckDigitsOfPublishedNumbers() {
        // 9876543210128: the stock zbar element's test image; 4006381333931 and 5901234123457: well-known examples.
        #expect(EAN13.checkDigit("987654321012") == 8)
        #expect(EAN13.checkDigit("400638133393") == 1)
        #expect(EAN13.checkDigit("590123412345") == 7)
        #expect(EAN13.checkDigit("12345") == nil)
    }

    @Test func ean13Has95ModulesWithGuards() throws {
        let s = try EAN13.symbol("987654321012")
        #expect(s.text == "9876543210128")
        let row = s.modules[0].map { $0 ? "1" : "0" }.joined()
        #expect(row.count == 95)
        #expect(row.hasPrefix("101") && row.hasSuffix("101"))
        #expect(Array(row)[45..<50].map(String.init).joined() == "01010")
        // Leading digit 9 → parity LGGLGL: 8 in L is 0110111, then 7 in G is 0010001.
        let chars = Array(row)
        #expect(String(chars[3..<10]) == "0110111")
        #expect(String(chars[10..<17]) == "0010001")
        #expect(throws: BarscopeError.self) { try EAN13.symbol("9876543210120") }
    }

    @Test func code128CheckValueOfTheStandardExample() throws {
        // ISO/IEC 15417's example: "PJJ123C" in code set B: 104 + 48·1 + 42·2 + 42·3 + 17·4 + 18·5 + 19·6 + 35·7
        // = 879 → 879 mod 103 = 55.
        let v = try Code128.values("PJJ123C")
        #expect(v.first == 104)
        #expect(v.last == 55)
        // Even-length digits use code set C: start C (105), then pairs.
        let c = try Code128.values("123456")
        #expect(Array(c.dropLast()) == [105, 12, 34, 56])
        let sum: Int = 105 + 12 * 1 + 34 * 2 + 56 * 3
        #expect(c.last == sum % 103)
    }

    @Test func code128ModulesAreElevenPerSymbolPlusStop() throws {
        let s = try Code128.symbol("BARSCOPE")
        // start + 8 data + check = 10 symbols of 11 modules, stop of 13.
        #expect(s.widthModules == 10 * 11 + 13)
        #expect(s.modules[0].first == true && s.modules[0].last == true)
    }

    @Test func qrMatrixHasFinderPatterns() throws {
        let s = try QRCode.symbol("hello")
        #expect(s.widthModules == 21 && s.modules.count == 21)
        // Top-left finder: a 7×7 dark ring.
        #expect(s.modules[0][0..<7].allSatisfy { $0 })
        #expect(s.modules[6][0..<7].allSatisfy { $0 })
        #expect(s.modules[1][1] == false)
    }
}
