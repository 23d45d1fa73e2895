import Foundation
import LoupeKit
import Testing

/// The Attention panel's port on the real MiniLM, when it is installed.
@Suite(.enabled(if: KitFixtures.models.hasMiniLM, "needs MiniLM (scripts/fetch-minilm)"))
struct AttentionBrowserTests {
    @Test func aSentenceHasEveryHeadOfEveryLayerOverItsWordPieces() throws {
        let analysis = try AttentionBrowser(models: KitFixtures.models).analyze(AttentionRequest("The cat sat."))
        #expect(analysis.layers == 6 && analysis.heads == 12)
        #expect(analysis.tokens == ["[CLS]", "the", "cat", "sat", ".", "[SEP]"])
        #expect(analysis.statistics.count == 6 * 12 && analysis.lens.count == 6)
        // Every query's attention is a distribution over the keys.
        let row = (0..<analysis.count).map { analysis.probability(layer: 5, head: 11, query: 2, key: $0) }
        #expect(abs(row.reduce(0, +) - 1) < 1e-4)
        #expect(analysis.secondStart == nil)
    }

    @Test func aPairMarksWhereTheSecondSentenceStarts() throws {
        let analysis = try AttentionBrowser(models: KitFixtures.models).analyze(
            AttentionRequest("The cat sat.", second: "It slept."))
        let start = try #require(analysis.secondStart)
        #expect(analysis.tokens[start...].first == "it")
        #expect(analysis.tokens.filter { $0 == "[SEP]" }.count == 2)
    }
}

@Suite struct AttentionBrowserWithoutModelTests {
    @Test func aMissingModelSaysHowToFetchIt() throws {
        let models = ModelLibrary(root: try KitFixtures.temporaryDirectory("no-models"))
        let error = #expect(throws: (any Error).self) {
            try AttentionBrowser(models: models).analyze(AttentionRequest("The cat sat."))
        }
        #expect("\(error.map { "\($0)" } ?? "")".contains("fetch-minilm"))
    }
}
