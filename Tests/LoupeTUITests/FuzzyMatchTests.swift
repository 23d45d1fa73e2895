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
        #expect(FuzzyMatch.match("check", in: "workspace check") != nil)
    }

    /// The first character must start a word: letters scattered from inside words are not a
    /// match ("sae" is not in "workspace init", "check" not in "rechecked").
    @Test func theFirstCharacterStartsAWord() {
        #expect(FuzzyMatch.match("check", in: "rechecked") == nil)
        #expect(FuzzyMatch.match("sae", in: "workspace init") == nil)
        #expect(FuzzyMatch.match("ws", in: "Traces: The step's raw source payload on or off") == nil)
        #expect(FuzzyMatch.match("sae", in: "sae train")?.positions == [0, 1, 2])
        #expect(FuzzyMatch.match("fork", in: "Traces: Fork at this step") != nil)
    }

    @Test func emptyQueryMatchesEverything() {
        #expect(FuzzyMatch.match("", in: "anything")?.score == 0)
    }
}
