import Foundation
import LoupeModels
import LoupeTensor
import Testing

/// A chat's second turn reads only its new tokens (``PromptCache``), and gets the logits a fresh
/// prefill of the whole conversation gets.
///
/// Needs the model (`scripts/fetch-smollm2`); a missing one fails with the command that fetches it.
@Suite(.serialized)
struct PromptCacheTests {
    static func generator(_ model: LlamaModel) throws -> Generator {
        let file = try GGUFFile(path: SmolLM2.modelPath)
        return Generator(model: model, tokenizer: try BPETokenizer(file: file), template: try ChatTemplate(file: file))
    }

    static var greedy: GenerationOptions {
        var options = GenerationOptions()
        options.maxTokens = 12
        options.sampling.topLogprobs = 5
        return options
    }

    @Test func aSecondTurnReadsOnlyItsNewTokensAndMatchesAFreshPrefill() throws {
        let generator = try Self.generator(try SmolLM2.model())
        var messages: [ChatMessage] = [.user("What is the capital of France?")]
        var promptCache = PromptCache()
        let first = try generator.generate(
            prompt: try generator.prompt(messages), options: Self.greedy, reusing: &promptCache)
        #expect(first.timings.cachedPromptTokens == 0)
        // The cache holds the prompt and every answer token read back: all of them when the
        // answer ended at an end-of-generation token, all but the last at the token limit.
        let read = first.stopReason == .eos ? first.tokens : Array(first.tokens.dropLast())
        #expect(promptCache.tokens == first.promptIDs + read.map(\.id))

        messages += [.assistant(first.text), .user("And of Italy?")]
        let prompt = try generator.prompt(messages)
        let second = try generator.generate(prompt: prompt, options: Self.greedy, reusing: &promptCache)
        let fresh = try generator.generate(prompt: prompt, options: Self.greedy)

        // The first turn's prompt at least is reused; only the rest is read.
        #expect(second.timings.cachedPromptTokens >= first.promptIDs.count)
        #expect(second.timings.prefilledTokens == prompt.count - second.timings.cachedPromptTokens)
        #expect(second.timings.prefilledTokens < prompt.count / 2)
        #expect(fresh.timings.prefilledTokens == prompt.count)
        // The same answer, each token's log-probability and alternatives within float rounding.
        #expect(second.tokens.map(\.id) == fresh.tokens.map(\.id))
        for (reused, whole) in zip(second.tokens, fresh.tokens) {
            #expect(abs(reused.choice.token.logprob - whole.choice.token.logprob) < 1e-4)
            #expect(reused.choice.alternatives.map(\.id) == whole.choice.alternatives.map(\.id))
        }
    }

    /// The float path: the same logits within float rounding.
    @Test func logitsAfterAReusedPrefixEqualAFreshPrefills() throws {
        do {
            let model = try SmolLM2.model()
            let conversation: [Int32] = (0..<70).map { Int32(200 + 53 * $0) }
            // A first turn of 56 tokens; the next prompt shares its first 44.
            var promptCache = PromptCache()
            let next = Array(conversation.prefix(44)) + [5, 6, 7] + Array(conversation[47..<70])
            let generator = try Self.generator(model)
            var options = GenerationOptions()
            options.maxTokens = 1
            options.sampling.topLogprobs = 20
            // Through the generator: the first 56 tokens read, then `next`.
            _ = try generator.generate(prompt: Array(conversation.prefix(56)), options: options, reusing: &promptCache)
            let reused = try generator.generate(prompt: next, options: options, reusing: &promptCache)
            let whole = try generator.generate(prompt: next, options: options)
            #expect(reused.timings.cachedPromptTokens == 44)
            #expect(reused.timings.prefilledTokens == next.count - 44)
            let a = try #require(reused.tokens.first?.choice)
            let b = try #require(whole.tokens.first?.choice)
            #expect(a.alternatives.map(\.id) == b.alternatives.map(\.id))
            for (x, y) in zip(a.alternatives, b.alternatives) { #expect(abs(x.logprob - y.logprob) < 1e-4) }

            // Directly on the model: the shared prefix, then the rest, against the whole at once.
            var longer = try model.makeCache(context: 80)
            _ = try model.forward(Array(conversation.prefix(44)), cache: &longer)
            let tail = Array(next[44...])
            let fromPrefix = try model.forward(tail, cache: &longer, logits: .all)
            var freshCache = try model.makeCache(context: 80)
            let fromStart = try model.forward(next, cache: &freshCache, logits: .all)
            var largest: Float = 0
            for row in 0..<tail.count {
                for j in 0..<fromPrefix.columns {
                    let d = abs(
                        fromPrefix.storage[row * fromPrefix.columns + j]
                            - fromStart.storage[(44 + row) * fromStart.columns + j])
                    largest = max(largest, d)
                }
            }
            #expect(largest < 1e-3, "max |Δlogit| \(largest)")
        }
    }

    /// The q8 path: a reused prefix gives the fresh prefill's logits bit for bit (each row's
    /// arithmetic is its own: `RowExactnessTests`), where attention summed in blocks of other
    /// sizes once moved activations across 8-bit rounding levels (mean KL 4e-3 a position).
    @Test func quantizedLogitsAfterAReusedPrefixAreAFreshPrefillsBitForBit() throws {
        let model = try SmolLM2.quantizedModel()
        let conversation: [Int32] = (0..<70).map { Int32(200 + 53 * $0) }
        var longer = try model.makeCache(context: 80)
        _ = try model.forward(Array(conversation.prefix(44)), cache: &longer)
        let fromPrefix = try model.forward(Array(conversation[44...]), cache: &longer, logits: .all)
        var freshCache = try model.makeCache(context: 80)
        let fromStart = try model.forward(conversation, cache: &freshCache, logits: .all)
        #expect(fromPrefix.storage == Array(fromStart.storage[(44 * fromStart.columns)...]))
    }
}
