import Foundation
import LoupeAgents
import LoupeBase
import Testing

struct JSONLinesTests {
    /// JSON Lines close every bracket on the first line; a document spread over lines does not.
    /// Brackets and escaped quotes inside strings do not count.
    @Test(arguments: [
        (#"{"a":[1,{"b":"}]"}]}"# + "\n{\"c\":2}", true),
        (#"{"a":"quote \" and ] and \\"}"#, true),
        ("\n  \n[1, 2]\n", true),
        ("42\n", true),
        ("{\n  \"resourceSpans\": []\n}\n", false),
        ("[\n1]", false),
        (#"{"a":"\\"}]"#, false),
        ("", false),
        ("  \n\n", false),
    ])
    func theFirstLineIsWholeOrNot(text: String, whole: Bool) {
        #expect(JSONLines.firstLineIsWhole(Array(text.utf8)) == whole)
    }

    /// A block's lines are numbered from the block's first line; blank lines are skipped.
    @Test func blockLinesAreNumberedFromTheBlocksFirstLine() throws {
        let block = Array("{\"a\":1}\n\n  \n{\"a\":2}\n".utf8)
        let read = try JSONLines.map(lines: block, file: "f", firstLine: 41) { line, value in
            "\(line):\(value["a"]?.int ?? -1)"
        }
        #expect(read == ["41:1", "44:2"])
    }
}
