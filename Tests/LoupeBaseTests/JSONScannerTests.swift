import LoupeBase
import Testing

struct JSONScannerTests {
    private func scan<R>(_ text: String, _ body: (JSONScanner) throws -> R) rethrows -> R {
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBufferPointer { try body(JSONScanner($0)) }
    }

    /// Members and elements come with their offsets; values are skipped by their brackets, with
    /// brackets, quotes and escaped quotes inside strings left alone, and escaped keys unescaped.
    @Test func membersAndElementsAreFoundWithoutParsing() throws {
        let text = #" { "a" : [1, {"b": "]}\"["}, "x\\y", -2.5e3, true, null] , "k\"ey": {}, "z":"" } "#
        let found = try scan(text) { scanner in
            var members: [(String, String)] = []
            var elements: [String] = []
            let end = try scanner.forEachMember(of: 0) { (key, value) throws(JSONSyntaxError) -> Int? in
                let end = try scanner.skipValue(value)
                members.append((key, String(decoding: scanner.bytes[value..<end], as: UTF8.self)))
                guard key == "a" else { return end }
                return try scanner.forEachElement(of: value) { (_, element) throws(JSONSyntaxError) -> Int? in
                    let end = try scanner.skipValue(element)
                    elements.append(String(decoding: scanner.bytes[element..<end], as: UTF8.self))
                    return end
                }
            }
            return (members, elements, end)
        }
        #expect(found.0.map(\.0) == ["a", "k\"ey", "z"])
        #expect(found.0.map(\.1) == [#"[1, {"b": "]}\"["}, "x\\y", -2.5e3, true, null]"#, "{}", "\"\""])
        #expect(found.1 == ["1", #"{"b": "]}\"["}"#, #""x\\y""#, "-2.5e3", "true", "null"])
        #expect(found.2 == text.utf8.count - 1)
    }

    @Test(arguments: [
        (#"{"a": [1, 2}"#, "'}' closes no open bracket of its kind", 1, 12),
        (#"{"a": [1, [2]"#, "the value is not closed", 1, 7),
        (#"{"a": "open}"#, "the string is not closed", 1, 7),
        ("{\n  \"a\" 1}", "expected ':'", 2, 7),
        (#"{"a": 1 "b": 2}"#, "expected ','", 1, 9),
        ("[1, 2", "the array is not closed", 1, 6),
        (#"{a: 1}"#, "expected a member name in quotes", 1, 2),
    ])
    func malformedStructureIsNamedWithItsPlace(text: String, message: String, line: Int, column: Int) {
        let error = #expect(throws: JSONSyntaxError.self) {
            try scan(text) { scanner in
                if text.hasPrefix("[") {
                    try scanner.forEachElement(of: 0) { _, _ in nil }
                } else {
                    try scanner.forEachMember(of: 0) { _, _ in nil }
                }
            }
        }
        // Where and what; whether the text ran out is checked apart.
        #expect(
            error.map { JSONSyntaxError(message: $0.message, line: $0.line, column: $0.column) }
                == JSONSyntaxError(message: message, line: line, column: column))
        #expect(error?.ranOut == message.hasSuffix("not closed"))
    }
}
