/// CODE-128 drawn from its specification (ISO/IEC 15417): start, data symbols, modulo-103 check symbol, stop.
/// Digits-only text of even length uses code set C (two digits a symbol); anything else printable uses set B.
public enum Code128 {
    /// Bar and space widths (in modules, bar first) of symbol values 0...106; 106 is the stop (7 elements).
    static let widths: [String] = [
        "212222", "222122", "222221", "121223", "121322", "131222", "122213", "122312", "132212", "221213",
        "221312", "231212", "112232", "122132", "122231", "113222", "123122", "123221", "223211", "221132",
        "221231", "213212", "223112", "312131", "311222", "321122", "321221", "312212", "322112", "322211",
        "212123", "212321", "232121", "111323", "131123", "131321", "112313", "132113", "132311", "211313",
        "231113", "231311", "112133", "112331", "132131", "113123", "113321", "133121", "313121", "211331",
        "231131", "213113", "213311", "213131", "311123", "311321", "331121", "312113", "312311", "332111",
        "314111", "221411", "431111", "111224", "111422", "121124", "121421", "141122", "141221", "112214",
        "112412", "122114", "122411", "142112", "142211", "241211", "221114", "413111", "241112", "134111",
        "111242", "121142", "121241", "114212", "124112", "124211", "411212", "421112", "421211", "212141",
        "214121", "412121", "111143", "111341", "131141", "114113", "114311", "411113", "411311", "113141",
        "114131", "311141", "411131", "211412", "211214", "211232", "2331112",
    ]
    static let startB = 104, startC = 105, stop = 106

    /// Symbol values: start, data, check.
    public static func values(_ text: String) throws -> [Int] {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { throw BarscopeError.badValue("CODE-128: empty text") }
        var values: [Int]
        if bytes.count % 2 == 0, bytes.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
            values = [startC]
            for i in stride(from: 0, to: bytes.count, by: 2) {
                values.append(Int(bytes[i] - 48) * 10 + Int(bytes[i + 1] - 48))
            }
        } else {
            guard bytes.allSatisfy({ $0 >= 32 && $0 <= 127 }) else {
                throw BarscopeError.badValue("CODE-128 '\(text)': only printable ASCII is supported")
            }
            values = [startB] + bytes.map { Int($0) - 32 }
        }
        values.append(checkValue(values))
        return values
    }

    /// Modulo 103 of the start value plus each data value times its position (1-based).
    public static func checkValue(_ startAndData: [Int]) -> Int {
        var sum = startAndData[0]
        for (i, v) in startAndData.enumerated().dropFirst() { sum += v * i }
        return sum % 103
    }

    public static func symbol(_ text: String) throws -> BarcodeSymbol {
        var row: [Bool] = []
        for v in try values(text) + [stop] {
            for (i, w) in widths[v].enumerated() {
                row += Array(repeating: i % 2 == 0, count: w.wholeNumberValue!)
            }
        }
        return BarcodeSymbol(type: "CODE-128", text: text, modules: [row], quietZone: 10, barHeightModules: 36)
    }
}
