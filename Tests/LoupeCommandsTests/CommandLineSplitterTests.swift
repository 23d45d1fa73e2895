import LoupeCommands
import Testing

@Suite struct CommandLineSplitterTests {
    @Test(arguments: [
        ("workspace info --json", ["workspace", "info", "--json"]),
        ("  search   \"two words\"  ", ["search", "two words"]),
        ("attention 'it''s'", ["attention", "its"]),
        ("say \"a \\\"quoted\\\" word\"", ["say", "a \"quoted\" word"]),
        ("path with\\ space", ["path", "with space"]),
        ("empty \"\" arg", ["empty", "", "arg"]),
        ("", []),
    ])
    func splitsLikeAShell(line: String, words: [String]) throws {
        #expect(try CommandLineSplitter.split(line) == words)
    }

    @Test func unterminatedQuotesAreErrors() {
        let error = #expect(throws: CommandLineSplitter.SplitError.self) {
            try CommandLineSplitter.split("search \"open")
        }
        #expect(error?.message.contains("unterminated double quote") == true)
        #expect(throws: CommandLineSplitter.SplitError.self) { try CommandLineSplitter.split("trailing \\") }
    }
}
