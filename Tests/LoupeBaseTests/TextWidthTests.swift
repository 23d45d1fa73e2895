import LoupeBase
import Testing

@Suite struct TextWidthTests {
    @Test(arguments: [
        ("a", 1), ("é", 1), ("e\u{301}", 1), ("中", 2), ("한", 2), ("😀", 2), ("❤️", 2), ("\u{200B}", 0), ("ｱ", 1),
        ("Ａ", 2),
    ])
    func clusterWidths(text: String, expected: Int) {
        #expect(TextWidth.of(Character(text)) == expected)
    }

    @Test func stringWidthAddsClusters() {
        #expect(TextWidth.of("ab中文") == 6)
        #expect(TextWidth.of("") == 0)
    }

    @Test func truncateKeepsWideGlyphsWhole() {
        #expect(TextWidth.truncate("中文字符", toColumns: 5) == "中文…")
        #expect(TextWidth.truncate("hello", toColumns: 5) == "hello")
        #expect(TextWidth.truncate("hello world", toColumns: 6) == "hello…")
        #expect(TextWidth.of(TextWidth.truncate("中文字符", toColumns: 4)) <= 4)
    }

    @Test func fitPadsAndAligns() {
        #expect(TextWidth.fit("ab", toColumns: 4) == "ab  ")
        #expect(TextWidth.fit("ab", toColumns: 4, alignment: .trailing) == "  ab")
        #expect(TextWidth.fit("ab", toColumns: 5, alignment: .center) == " ab  ")
        #expect(TextWidth.fit("中", toColumns: 3) == "中 ")
    }
}
