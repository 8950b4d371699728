/// EAN-13 drawn from its specification (GS1 General Specifications, 5.2.2.1): start guard, six digits in the
/// L/G patterns chosen by the first digit, centre guard, six digits in R patterns, end guard: 95 modules.
public enum EAN13 {
    static let lPatterns = [
        "0001101", "0011001", "0010011", "0111101", "0100011",
        "0110001", "0101111", "0111011", "0110111", "0001011",
    ]
    /// R patterns are the L patterns inverted; G patterns are the R patterns reversed.
    static let rPatterns = lPatterns.map { String($0.map { $0 == "0" ? "1" : "0" }) }
    static let gPatterns = rPatterns.map { String($0.reversed()) }
    /// Which of digits 2...7 use G (true) for each leading digit.
    static let parity = [
        "LLLLLL", "LLGLGG", "LLGGLG", "LLGGGL", "LGLLGG",
        "LGGLLG", "LGGGLL", "LGLGLG", "LGLGGL", "LGGLGL",
    ]

    /// The check digit of the first 12 digits: weights 1,3,1,3... from the left, then 10 minus the sum mod 10.
    public static func checkDigit(_ twelve: String) -> Int? {
        let d = twelve.compactMap(\.wholeNumberValue)
        guard d.count == 12, twelve.count == 12 else { return nil }
        let sum = d.enumerated().reduce(0) { $0 + $1.element * ($1.offset % 2 == 0 ? 1 : 3) }
        return (10 - sum % 10) % 10
    }

    /// The 95 modules for 12 digits (check digit appended) or 13 digits (check digit verified).
    public static func symbol(_ digits: String) throws -> BarcodeSymbol {
        var text = digits
        if digits.count == 12, let c = checkDigit(digits) { text += String(c) }
        guard text.count == 13, let c = checkDigit(String(text.prefix(12))), text.last?.wholeNumberValue == c else {
            throw BarscopeError.badValue("EAN-13 '\(digits)': needs 12 digits or 13 with a valid check digit")
        }
        let d = text.compactMap(\.wholeNumberValue)
        var bits = "101"
        let p = Array(parity[d[0]])
        for i in 1...6 { bits += p[i - 1] == "G" ? gPatterns[d[i]] : lPatterns[d[i]] }
        bits += "01010"
        for i in 7...12 { bits += rPatterns[d[i]] }
        bits += "101"
        return BarcodeSymbol(
            type: "EAN-13", text: text, modules: [bits.map { $0 == "1" }], quietZone: 11,
            barHeightModules: 50)
    }
}
