import Foundation
import Testing

@testable import LoupeModels

/// The sampler against distributions worked out by hand: each filter keeps exactly the tokens
/// its definition keeps, and seeded draws follow the filtered distribution.
@Suite struct SamplerTests {
    /// Logits whose softmax is `probabilities` (any shift of them gives the same distribution).
    private func logits(_ probabilities: [Double]) -> [Float] { probabilities.map { Float(log($0)) + 3 } }

    /// How often each token is drawn in `n` seeded draws.
    private func frequencies(_ logits: [Float], _ options: SamplingOptions, draws n: Int = 20_000) -> [Double] {
        var sampler = Sampler(options)
        var counts = [Int](repeating: 0, count: logits.count)
        logits.withUnsafeBufferPointer { buffer in
            for _ in 0..<n { counts[Int(sampler.choose(buffer, history: [Int32]()).token.id)] += 1 }
        }
        return counts.map { Double($0) / Double(n) }
    }

    /// Each frequency within 0.015 of its expected probability (20,000 draws: a standard error
    /// of at most 0.0035, so the bound is over four of them).
    private func expectClose(_ observed: [Double], _ expected: [Double], _ comment: Comment) {
        #expect(observed.count == expected.count)
        for (o, e) in zip(observed, expected) { #expect(abs(o - e) < 0.015, "\(comment): \(observed) vs \(expected)") }
    }

    @Test func greedyTakesTheHighestLogitAndTheLowerIdOnATie() {
        var sampler = Sampler(.greedy())
        let values: [Float] = [0.5, 2, -1, 2, 1.5]
        let choice = values.withUnsafeBufferPointer { sampler.choose($0, history: [Int32]()) }
        #expect(choice.token.id == 1)
    }

    @Test func logprobsAndEntropyAreTheRawLogSoftmax() {
        let values: [Float] = [1, 2, 3, -4, 0.5]
        let total = values.map { exp(Double($0)) }.reduce(0, +)
        let expected = values.map { Double($0) - log(total) }
        let entropy = -expected.map { exp($0) * $0 }.reduce(0, +)
        var options = SamplingOptions.greedy(alternatives: 3)
        options.repetitionPenalty = 2  // the penalty changes the choice's odds, not the model's logprobs
        var sampler = Sampler(options)
        let choice = values.withUnsafeBufferPointer { sampler.choose($0, history: [Int32(2)]) }
        #expect(choice.token.id == 1, "the penalty halves token 2's logit to 1.5")
        #expect(abs(Double(choice.token.logprob) - expected[1]) < 1e-5)
        #expect(choice.alternatives.map(\.id) == [2, 1, 0])
        for alternative in choice.alternatives {
            #expect(abs(Double(alternative.logprob) - expected[Int(alternative.id)]) < 1e-5)
        }
        #expect(abs(Double(choice.entropy) - entropy) < 1e-5)
    }

    @Test func temperatureDrawsFollowTheTemperedSoftmax() {
        let p = [0.5, 0.3, 0.15, 0.05]
        var options = SamplingOptions()
        options.temperature = 1
        expectClose(frequencies(logits(p), options), p, "T 1")
        options.temperature = 2
        let tempered = p.map { pow($0, 0.5) }
        expectClose(frequencies(logits(p), options), tempered.map { $0 / tempered.reduce(0, +) }, "T 2")
    }

    @Test func topKTopPAndMinPKeepWhatTheirDefinitionsKeep() {
        let p = [0.5, 0.3, 0.15, 0.05]
        var options = SamplingOptions()
        options.temperature = 1
        options.topK = 2
        expectClose(frequencies(logits(p), options), [0.625, 0.375, 0, 0], "top-k 2")
        options.topK = 0
        options.topP = 0.79  // 0.5 + 0.3 passes 0.79: two tokens
        expectClose(frequencies(logits(p), options), [0.625, 0.375, 0, 0], "top-p 0.79")
        options.topP = 0.81  // a third token is needed
        expectClose(frequencies(logits(p), options), [0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0], "top-p 0.81")
        options.topP = 1
        options.minP = 0.2  // floor 0.1: drops 0.05 only
        expectClose(frequencies(logits(p), options), [0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0], "min-p 0.2")
    }

    @Test func theSameSeedDrawsTheSameTokensAndAnotherSeedOthers() {
        let values = logits([0.25, 0.25, 0.25, 0.25])
        func run(_ seed: UInt64) -> [Int32] {
            var options = SamplingOptions()
            options.temperature = 1
            options.seed = seed
            var sampler = Sampler(options)
            return values.withUnsafeBufferPointer { buffer in
                (0..<32).map { _ in sampler.choose(buffer, history: [Int32]()).token.id }
            }
        }
        #expect(run(7) == run(7))
        #expect(run(7) != run(8))
    }

    @Test func thePenaltyLooksOnlyAtItsWindow() {
        var options = SamplingOptions.greedy()
        options.repetitionPenalty = 4
        options.repetitionWindow = 2
        let values: [Float] = [2, 1.5, 0]
        var sampler = Sampler(options)
        // Token 0 seen three tokens ago: outside the window, not penalised.
        let outside = values.withUnsafeBufferPointer { sampler.choose($0, history: [Int32(0), 2, 2]) }
        #expect(outside.token.id == 0)
        let inside = values.withUnsafeBufferPointer { sampler.choose($0, history: [Int32(2), 0]) }
        #expect(inside.token.id == 1, "2 / 4 = 0.5 is below 1.5")
    }

    @Test func optionsOutOfRangeAreNamed() {
        var options = SamplingOptions()
        #expect(options.problem == nil)
        options.topP = 0
        #expect(options.problem?.hasPrefix("top-p 0.0") == true)
        options = SamplingOptions()
        options.temperature = -1
        #expect(options.problem?.hasPrefix("temperature") == true)
        options = SamplingOptions()
        options.topLogprobs = 21
        #expect(options.problem?.hasPrefix("top logprobs 21") == true)
    }
}
