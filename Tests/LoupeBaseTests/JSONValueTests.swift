import Foundation
import LoupeBase
import Testing

@Suite struct JSONValueTests {
    @Test func parsesEveryKindOfValue() throws {
        let value = try JSONValue.parse(
            #" {"a": [1, -2.5e3, true, false, null], "s": "x\"\\\/\n\u00e9\ud83d\ude00", "o": {}} "#)
        #expect(value["a"] == .array([.number(1), .number(-2500), .bool(true), .bool(false), .null]))
        #expect(value["s"]?.string == "x\"\\/\né😀")
        #expect(value["o"] == .object([:]))
        #expect(value.compactJSON == #"{"a":[1,-2500,true,false,null],"o":{},"s":"x\"\\/\né😀"}"#)
    }

    @Test func int64sWrittenAsDecimalStringsReadAsIntegers() throws {
        let value = try JSONValue.parse(#"{"t": "1767225600125000000", "n": 42}"#)
        #expect(value["t"]?.int == 1_767_225_600_125_000_000)
        #expect(value["n"]?.int == 42)
        #expect(JSONValue.string("12x").int == nil)
    }

    @Test(arguments: [
        ("{\"a\": 1,}", 1, 9, "expected a member name in quotes"),
        ("[1, 2\n, oops]", 2, 3, "expected a value"),
        ("{\"a\": \"é\u{1}\"}", 1, 9, "control character in a string (escape it)"),
        ("[1] 2", 1, 5, "unexpected text after the JSON value"),
        ("{\"a\": tru}", 1, 7, "expected true"),
    ])
    func errorsSayWhereAndWhat(text: String, line: Int, column: Int, message: String) {
        #expect(throws: JSONSyntaxError(message: message, line: line, column: column)) { try JSONValue.parse(text) }
    }

    @Test func invalidUTF8InAStringIsRefused() {
        #expect(throws: JSONSyntaxError.self) { try JSONValue.parse(Data([0x22, 0xC3, 0x28, 0x22])) }
    }

    @Test func deepNestingIsRefusedNotACrash() {
        let text = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: JSONSyntaxError.self) { try JSONValue.parse(text) }
    }
}

@Suite struct ParallelTests {
    @Test func theOrderedStreamHandsEveryResultBackInOrder() {
        // Uneven work, so later items often finish before earlier ones.
        let items = Array(0..<500)
        let stream = ParallelOrderedStream(items, batch: 3) { (item: Int) -> Int in
            var x = item
            for _ in 0..<((item * 7919) % 50_000) { x = (x &* 31) &+ 7 }
            return item * 2 + (x == .min ? 1 : 0)
        }
        #expect(Array(stream) == items.map { $0 * 2 })
        #expect(stream.next() == nil)
    }

    @Test func aCancelledStreamStillEndsForItsReader() {
        let stream = ParallelOrderedStream(Array(0..<10)) { $0 }
        #expect(stream.next() == 0)
        stream.cancel()
        // Items already being made arrive in order; then the stream ends instead of waiting.
        let rest = Array(stream)
        #expect(rest == Array(1..<(1 + rest.count)))
    }

    @Test func escapedStringsParseToTheSameTextAsTheFastPath() throws {
        let text = "he said \"a\\b\"\n\tand\u{1F600} left"
        let json = JSONValue.string(text).compactJSON
        #expect(try JSONValue.parse(json) == .string(text))
        #expect(try JSONValue.parse(JSONValue.string(json).compactJSON) == .string(json))
    }

    /// JSON Loupe writes (exports, `--json`) reaches terminals: characters that reorder or hide
    /// text there (a right-to-left override, zero-width spaces, C1 controls, DEL, line separators,
    /// the BOM) are written as escapes, which read back as the same text; visible non-ASCII stays.
    @Test func charactersThatHideOrReorderTextAreEscaped() throws {
        let text = "a\u{202E}b\u{200B}c\u{85}d\u{7F}e\u{FEFF}f\u{2028}g\u{2066}h é—…中© \u{1F600}"
        let json = JSONValue.string(text).compactJSON
        #expect(
            json == #""a\u202eb\u200bc\u0085d\u007fe\ufefff\u2028g\u2066h é—…中© 😀""#)
        #expect(try JSONValue.parse(json) == .string(text))
        let foundation = String(decoding: try JSONEncoder().encode(["k": text]), as: UTF8.self)
        #expect(JSONValue.escapingInvisibleCharacters(in: foundation) == #"{"k":"# + json + "}")
    }

    /// Plain ASCII is skipped eight bytes at a time: a character that needs escaping is found at
    /// every offset within and across those words, next to plain text of every length.
    @Test func escapesAreFoundAtEveryOffsetOfARunOfPlainText() throws {
        let written: [(String, String)] = [
            ("\"", #"\""#), ("\\", #"\\"#), ("\n", #"\n"#), ("\u{01}", #"\u0001"#), ("\u{1F}", #"\u001f"#),
            ("\u{7F}", #"\u007f"#), ("\u{85}", #"\u0085"#), ("\u{200B}", #"\u200b"#), ("\u{FEFF}", #"\ufeff"#),
            ("é", "é"), ("中", "中"),
        ]
        for (special, escaped) in written {
            for before in 0..<18 {
                for after in [0, 1, 7, 8, 9] {
                    let (head, tail) = (String(repeating: "a", count: before), String(repeating: "z ", count: after))
                    let json = JSONValue.string(head + special + tail).compactJSON
                    #expect(json == "\"" + head + escaped + tail + "\"")
                    #expect(try JSONValue.parse(json) == .string(head + special + tail))
                }
            }
        }
    }
}
