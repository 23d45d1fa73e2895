/// Digits in groups of three, as a person reads large counts: 100000 as "100,000", -1234 as
/// "-1,234".
package func grouped(_ value: Int) -> String {
    let digits = String(value.magnitude)
    var out = value < 0 ? "-" : ""
    for (index, character) in digits.enumerated() {
        if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
        out.append(character)
    }
    return out
}
