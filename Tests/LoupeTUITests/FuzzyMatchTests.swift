import LoupeTUI
import Testing

@Suite struct FuzzyMatchTests {
    @Test func matchesSubsequencesCaseInsensitively() {
        let result = FuzzyMatch.match("WSI", in: "workspace info")
        #expect(result?.positions == [0, 4, 10])
        #expect(FuzzyMatch.match("xyz", in: "workspace info") == nil)
    }

    @Test func wordStartsAndRunsScoreHigher() throws {
        let contiguous = try #require(FuzzyMatch.match("info", in: "workspace info"))
        let spread = try #require(FuzzyMatch.match("info", in: "workspace initial foo"))
        #expect(contiguous.score > spread.score)
        let atWordStart = try #require(FuzzyMatch.match("check", in: "workspace check"))
        let inside = try #require(FuzzyMatch.match("check", in: "rechecked"))
        #expect(atWordStart.score > inside.score)
    }

    @Test func emptyQueryMatchesEverything() {
        #expect(FuzzyMatch.match("", in: "anything")?.score == 0)
    }
}
