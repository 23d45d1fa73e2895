import Foundation
import LoupeKit
import Testing

@Suite struct AttentionAnalysisTests {
    /// Two heads over 4 tokens: head 0 attends to the previous token (row 0 to itself), head 1
    /// spreads uniformly.
    static func sample() -> AttentionAnalysis {
        var previous = [Float](repeating: 0, count: 16)
        for q in 0..<4 { previous[q * 4 + max(0, q - 1)] = 1 }
        let uniform = [Float](repeating: 0.25, count: 16)
        return AttentionAnalysis(
            text: "a b.", tokens: ["[CLS]", "a", ".", "[SEP]"], layers: 1, heads: 2, probabilities: previous + uniform,
            lens: [1])
    }

    @Test func statisticsMatchHandComputedValues() throws {
        let analysis = Self.sample()
        let sharp = try #require(analysis.statistics.first { $0.head == 0 })
        #expect(sharp.entropy == 0)
        #expect(sharp.previousToken == 1)
        #expect(sharp.nextToken == 0)
        #expect(sharp.classifierMass == 0.5)  // rows 0 and 1 put everything on [CLS]
        #expect(sharp.punctuationMass == 0.25)  // row 3 puts everything on "."
        let flat = try #require(analysis.statistics.first { $0.head == 1 })
        #expect(abs(flat.entropy - 2) < 1e-12)  // log2(4)
        #expect(flat.separatorMass == 0.25)
        #expect(flat.previousToken == 0.25)
    }

    /// Head 0 looks back one token, head 1 is uniform: the layer mean is their average, the
    /// model mean equals it (one layer), and rollout through one layer is ½·mean + ½·I.
    @Test func aggregatesAverageHeadsAndRollOutWithTheResidual() {
        let analysis = Self.sample()
        // Row 2 ("."): head 0 puts 1 on key 1, head 1 puts 0.25 everywhere.
        #expect(analysis.weight(.layerMean, layer: 0, head: 0, query: 2, key: 1) == 0.625)
        #expect(analysis.weight(.layerMean, layer: 0, head: 1, query: 2, key: 3) == 0.125)
        #expect(analysis.weight(.modelMean, layer: 0, head: 0, query: 2, key: 1) == 0.625)
        #expect(analysis.weight(.rollout, layer: 0, head: 0, query: 2, key: 1) == 0.3125)
        #expect(analysis.weight(.rollout, layer: 0, head: 0, query: 2, key: 2) == 0.5625)
        #expect(analysis.weight(.head, layer: 0, head: 1, query: 2, key: 1) == 0.25)
        // Rollout rows stay distributions.
        for q in 0..<4 {
            let sum = (0..<4).reduce(Float(0)) { $0 + analysis.weight(.rollout, layer: 0, head: 0, query: q, key: $1) }
            #expect(abs(sum - 1) < 1e-6)
        }
    }

    /// Two layers: rollout through layer 1 is the product (layer 1's mixed matrix) × (layer 0's).
    @Test func rolloutMultipliesTheLayersInOrder() {
        // Layer 0: every token looks at [CLS]; layer 1: every token looks at the last token.
        var probabilities = [Float](repeating: 0, count: 2 * 9)
        for q in 0..<3 { probabilities[q * 3 + 0] = 1 }
        for q in 0..<3 { probabilities[9 + q * 3 + 2] = 1 }
        let analysis = AttentionAnalysis(
            text: "a", tokens: ["[CLS]", "a", "[SEP]"], layers: 2, heads: 1, probabilities: probabilities, lens: [1, 1])
        // Ā0 row 1 = [½, ½, 0]; Ā1 row 1 = [0, ½, ½]; rollout row 1 = Ā1[1]·Ā0.
        // Ā0 rows: [1,0,0], [½,½,0], [½,0,½]. So row 1 = ½·[½,½,0] + ½·[½,0,½] = [½, ¼, ¼].
        #expect(analysis.weight(.rollout, layer: 1, head: 0, query: 1, key: 0) == 0.5)
        #expect(analysis.weight(.rollout, layer: 1, head: 0, query: 1, key: 1) == 0.25)
        #expect(analysis.weight(.rollout, layer: 1, head: 0, query: 1, key: 2) == 0.25)
        #expect(analysis.weight(.rollout, layer: 0, head: 0, query: 1, key: 1) == 0.5)
    }

    @Test func csvHasAHeaderOfKeysAndARowPerQuery() {
        let csv = Self.sample().csv(layer: 0, head: 0)
        let lines = csv.split(separator: "\n")
        #expect(lines.count == 5)
        #expect(lines[0] == "query\\key,[CLS],a,.,[SEP]")
        #expect(lines[2] == "a,1.000000,0.000000,0.000000,0.000000")
        // Repeated tokens are named by position, so no two columns share a name.
        var repeated = Self.sample()
        repeated.tokens = ["[CLS]", "a", "a", "[SEP]"]
        #expect(repeated.csv(layer: 0, head: 0).hasPrefix("query\\key,[CLS],a@1,a@2,[SEP]\n[CLS],"))
        #expect(repeated.csv(layer: 0, head: 0).contains("\na@2,"))
    }
}

@Suite struct AttentionThumbnailTests {
    @Test func thumbnailsMaxPoolLongInputs() throws {
        // 40 tokens, one head that puts everything on the previous token.
        let t = 40
        var probabilities = [Float](repeating: 0, count: t * t)
        for q in 0..<t { probabilities[q * t + max(0, q - 1)] = 1 }
        let tokens = (0..<t).map { "t\($0)" }
        let analysis = AttentionAnalysis(
            text: "", tokens: tokens, layers: 1, heads: 1, probabilities: probabilities, lens: [1])
        let thumbnail = try #require(analysis.thumbnails.first)
        #expect(thumbnail.count == AttentionAnalysis.thumbnailSize)
        // The diagonal survives pooling: every thumbnail row has a 1 on or next to its diagonal.
        for row in 0..<thumbnail.count {
            #expect(thumbnail[row].max() == 1)
            #expect(thumbnail[row].firstIndex(of: 1).map { abs($0 - row) <= 1 } == true)
        }
    }
}
