import Foundation
import LoupeModels
import Testing

/// Prompt-lookup drafts, and speculative decoding with them on the real model: the same tokens,
/// log-probabilities, stops and limits as one token per pass.
///
/// Needs the model (`scripts/fetch-smollm2`); a missing one fails with the command that fetches it.
@Suite(.serialized)
struct PromptLookupTests {
    // MARK: drafts

    @Test func theLongestMatchingNgramProposesWhatFollowedIt() {
        let lookup = PromptLookup(SpeculationOptions(draftTokens: 4))
        // The last trigram (7, 8, 9) occurred at 2; what followed it is proposed.
        #expect(lookup.draft(after: [1, 2, 7, 8, 9, 10, 11, 12, 13, 14, 3, 7, 8, 9], limit: 10) == [10, 11, 12, 13])
        // The limit is the smaller of the two.
        #expect(lookup.draft(after: [1, 2, 7, 8, 9, 10, 11, 12, 13, 14, 3, 7, 8, 9], limit: 2) == [10, 11])
    }

    @Test func aShorterNgramIsTriedWhenTheLongerHasNoEarlierOccurrence() {
        let lookup = PromptLookup(SpeculationOptions(draftTokens: 3))
        // (5, 8, 9) and (8, 9) never occurred before; the unigram 9 did, followed by 4, 6.
        #expect(lookup.draft(after: [9, 4, 6, 5, 8, 9], limit: 10) == [4, 6, 5])
        // The most recent earlier occurrence of the bigram (1, 2) wins.
        #expect(lookup.draft(after: [1, 2, 3, 1, 2, 4, 1, 2], limit: 10) == [4, 1, 2])
    }

    @Test func nothingIsProposedWithoutAnEarlierOccurrenceOrRoom() {
        let lookup = PromptLookup(SpeculationOptions())
        #expect(lookup.draft(after: [1, 2, 3, 4, 5], limit: 10).isEmpty)
        #expect(lookup.draft(after: [7], limit: 10).isEmpty)
        #expect(lookup.draft(after: [], limit: 10).isEmpty)
        #expect(lookup.draft(after: [1, 2, 1], limit: 0).isEmpty)
        // A run of one token proposes more of it (the match overlaps the suffix).
        #expect(lookup.draft(after: [3, 3, 3, 3], limit: 10) == [3])
    }

    @Test func draftLengthsOutOfRangeAreRefused() {
        #expect(SpeculationOptions(draftTokens: 0).problem != nil)
        #expect(SpeculationOptions(draftTokens: 65).problem != nil)
        #expect(SpeculationOptions(draftTokens: 10).problem == nil)
    }

    // MARK: on the model

    /// The float path (the q8 one: ``aQuantizedEditIsTheSameAnswer()``). A pass of many rows gives
    /// each row the bits one row gives (`RowExactnessTests`).
    static func generator() throws -> Generator { try PromptCacheTests.generator(try SmolLM2.model()) }

    /// The first Cranfield abstract (sample-data/cranfield), to be rewritten with one word changed.
    static func editPrompt(_ generator: Generator) throws -> [Int32] {
        let corpus = SmolLM2.repositoryRoot.appendingPathComponent("sample-data/cranfield/corpus.jsonl")
        let line = try #require(try String(contentsOf: corpus, encoding: .utf8).split(separator: "\n").first)
        let document = try JSONDecoder().decode([String: String].self, from: Data(line.utf8))
        let text = try #require(document["text"])
        return try generator.prompt([
            .user("Rewrite this paragraph exactly, but replace the word \"wing\" with \"airfoil\":\n\n\(text)")
        ])
    }

    static func options(maxTokens: Int, speculate: Bool) -> GenerationOptions {
        var options = GenerationOptions()
        options.maxTokens = maxTokens
        options.sampling.topLogprobs = 3
        options.speculation = speculate ? SpeculationOptions() : nil
        return options
    }

    /// The same ids, log-probabilities, entropies and alternatives, bit for bit: a verification
    /// pass's rows have a single row's bits.
    static func expectSame(
        _ fast: Generation, _ plain: Generation, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(fast.tokens.map(\.id) == plain.tokens.map(\.id), sourceLocation: sourceLocation)
        #expect(fast.text == plain.text, sourceLocation: sourceLocation)
        #expect(fast.stopReason == plain.stopReason, sourceLocation: sourceLocation)
        #expect(fast.stoppingWord == plain.stoppingWord, sourceLocation: sourceLocation)
        for (a, b) in zip(fast.tokens, plain.tokens) {
            #expect(a.choice.token.logprob == b.choice.token.logprob, sourceLocation: sourceLocation)
            #expect(a.choice.entropy == b.choice.entropy, sourceLocation: sourceLocation)
            #expect(
                a.choice.alternatives.map(\.id) == b.choice.alternatives.map(\.id), sourceLocation: sourceLocation)
            #expect(
                a.choice.alternatives.map(\.logprob) == b.choice.alternatives.map(\.logprob),
                sourceLocation: sourceLocation)
        }
    }

    @Test func anEditIsTheSameAnswerInFewerPasses() throws {
        let generator = try Self.generator()
        let prompt = try Self.editPrompt(generator)
        let plain = try generator.generate(prompt: prompt, options: Self.options(maxTokens: 64, speculate: false))
        var streamed: [Int32] = []
        let fast = try generator.generate(
            prompt: prompt, options: Self.options(maxTokens: 64, speculate: true),
            onText: { _, token in if let token { streamed.append(token.id) } })
        Self.expectSame(fast, plain)
        #expect(plain.speculation == nil)
        let counts = try #require(fast.speculation)
        // The answer copies the abstract: most drafts are taken, so far fewer passes than tokens.
        #expect(counts.drafted > 0 && counts.accepted > 0, "\(counts)")
        #expect(counts.passes + counts.accepted == fast.tokens.count - (fast.stopReason == .eos ? 0 : 1))
        #expect(counts.passes < fast.tokens.count / 2, "\(counts)")
        // Each token reached the stream once, in order.
        #expect(streamed == fast.tokens.map(\.id))
    }

    /// The default q8 path: the same answer, bit for bit (the four edits of `loupe bench
    /// speculative`: `SpeculativeEditTests`).
    @Test func aQuantizedEditIsTheSameAnswer() throws {
        let generator = try PromptCacheTests.generator(try SmolLM2.quantizedModel())
        let prompt = try Self.editPrompt(generator)
        let plain = try generator.generate(prompt: prompt, options: Self.options(maxTokens: 64, speculate: false))
        let fast = try generator.generate(prompt: prompt, options: Self.options(maxTokens: 64, speculate: true))
        Self.expectSame(fast, plain)
        #expect((fast.speculation?.accepted ?? 0) > 0)
    }

    @Test func aPromptWithLittleToLookUpIsTheSameAnswer() throws {
        let generator = try Self.generator()
        let prompt = try generator.prompt([.user("Name three colours.")])
        let plain = try generator.generate(prompt: prompt, options: Self.options(maxTokens: 40, speculate: false))
        let fast = try generator.generate(prompt: prompt, options: Self.options(maxTokens: 40, speculate: true))
        Self.expectSame(fast, plain)
        let counts = try #require(fast.speculation)
        #expect(counts.accepted <= counts.drafted)
    }

    @Test(arguments: [1, 2, 9, 23])
    func theTokenLimitEndsTheAnswerWhereItDoesWithoutDrafts(maxTokens: Int) throws {
        let generator = try Self.generator()
        let prompt = try Self.editPrompt(generator)
        let plain = try generator.generate(
            prompt: prompt, options: Self.options(maxTokens: maxTokens, speculate: false))
        var promptCache = PromptCache()
        let fast = try generator.generate(
            prompt: prompt, options: Self.options(maxTokens: maxTokens, speculate: true), reusing: &promptCache)
        Self.expectSame(fast, plain)
        #expect(fast.tokens.count == maxTokens)
        #expect(fast.stopReason == .limit)
        // The rejected drafts were forgotten: the cache holds the prompt and every token but the
        // last, as after plain decoding.
        #expect(promptCache.tokens == prompt + fast.tokens.dropLast().map(\.id))
    }

    @Test func aStopStringInsideAnAcceptedDraftEndsTheAnswerThere() throws {
        let generator = try Self.generator()
        let prompt = try Self.editPrompt(generator)
        // A phrase of the abstract the rewrite copies, well into the answer.
        var options = Self.options(maxTokens: 96, speculate: false)
        options.stops = ["slipstream velocity"]
        let plain = try generator.generate(prompt: prompt, options: options)
        options.speculation = SpeculationOptions()
        var promptCache = PromptCache()
        let fast = try generator.generate(prompt: prompt, options: options, reusing: &promptCache)
        Self.expectSame(fast, plain)
        #expect(fast.stopReason == .word && fast.stoppingWord == "slipstream velocity", "\(fast.text)")
        let counts = try #require(fast.speculation)
        #expect(counts.accepted > 0)
        #expect(promptCache.tokens == prompt + fast.tokens.dropLast().map(\.id))
    }

    /// Sampling: each token is drawn from the model's own distribution, as one token per pass
    /// draws it, so the same seed gives the same answer.
    @Test func aSampledAnswerIsTheSameForTheSameSeed() throws {
        let generator = try Self.generator()
        let prompt = try Self.editPrompt(generator)
        var options = Self.options(maxTokens: 48, speculate: false)
        options.sampling.temperature = 0.7
        options.sampling.seed = 11
        let plain = try generator.generate(prompt: prompt, options: options)
        options.speculation = SpeculationOptions()
        let fast = try generator.generate(prompt: prompt, options: options)
        Self.expectSame(fast, plain)
    }
}
