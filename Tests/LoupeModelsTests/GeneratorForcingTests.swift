import Foundation
import LoupeBase
import LoupeModels
import Testing

/// A generation whose first tokens are given (a token fork) on the real SmolLM2-135M: the given
/// tokens carry the model's own distribution at their positions, what follows is the model's,
/// and a grammar follows the given tokens while it accepts them.
///
/// Needs the model (`scripts/fetch-smollm2`); a missing one fails with the command that fetches it.
@Suite(.serialized)
struct GeneratorForcingTests {
    static func generator() throws -> Generator { try PromptCacheTests.generator(try SmolLM2.quantizedModel()) }

    static var greedy: GenerationOptions {
        var options = GenerationOptions()
        options.maxTokens = 24
        options.sampling.topLogprobs = 5
        return options
    }

    /// Forcing a greedy answer's own first tokens gives the same answer, each forced token with
    /// the log-probability and alternatives a token-by-token decode gave it.
    @Test func forcingTheGreedyPrefixReproducesTheAnswer() throws {
        let generator = try Self.generator()
        let prompt = try generator.prompt([.user("Name three primary colours.")])
        let plain = try generator.generate(prompt: prompt, options: Self.greedy)
        try #require(plain.tokens.count >= 8, "\(plain.text)")
        var cache = PromptCache()
        let forced = try generator.generate(
            prompt: prompt, forcing: plain.tokens.prefix(6).map(\.id), options: Self.greedy, reusing: &cache)
        #expect(forced.forcedCount == 6 && forced.grammarRefusedAt == nil)
        #expect(forced.generation.tokens.map(\.id) == plain.tokens.map(\.id))
        #expect(forced.generation.text == plain.text)
        #expect(forced.generation.stopReason == plain.stopReason)
        for (given, decoded) in zip(forced.generation.tokens, plain.tokens) {
            // Read one token at a time, as the plain decode read them: the same numbers.
            #expect(abs(given.choice.token.logprob - decoded.choice.token.logprob) < 1e-4)
            #expect(given.choice.alternatives.map(\.id) == decoded.choice.alternatives.map(\.id))
        }
    }

    /// Forcing the second-best token at a position: the tokens before it are the greedy
    /// answer's, the forced one is the alternative with the probability the model gave it
    /// there, and greedy decoding from it is the same each time.
    @Test func forcingAnAlternativeContinuesFromItDeterministically() throws {
        let generator = try Self.generator()
        let prompt = try generator.prompt([.user("Name three primary colours.")])
        let plain = try generator.generate(prompt: prompt, options: Self.greedy)
        let index = 3
        try #require(plain.tokens.count > index)
        let second = plain.tokens[index].choice.alternatives[1]
        let given = plain.tokens.prefix(index).map(\.id) + [second.id]
        var cache = PromptCache()
        let first = try generator.generate(prompt: prompt, forcing: given, options: Self.greedy, reusing: &cache)
        var fresh = PromptCache()
        let again = try generator.generate(prompt: prompt, forcing: given, options: Self.greedy, reusing: &fresh)
        let tokens = first.generation.tokens
        #expect(tokens.prefix(index).map(\.id) == plain.tokens.prefix(index).map(\.id))
        #expect(tokens[index].id == second.id)
        #expect(abs(tokens[index].choice.token.logprob - second.logprob) < 2e-3)
        #expect(tokens.count <= Self.greedy.maxTokens && tokens.count > index)
        #expect(again.generation.tokens.map(\.id) == tokens.map(\.id))
        #expect(first.generation.text != plain.text)
        #expect(first.generation.text == generator.tokenizer.decode(tokens.map(\.id)))
    }

    /// Under a tool-call grammar: forcing the constrained answer's own first tokens keeps the
    /// grammar (the same answer follows); forcing text it refuses honours the text, drops the
    /// grammar from there and says where (the refused token's index and text).
    @Test func aGrammarFollowsTheForcedTokensWhileItAcceptsThem() throws {
        let generator = try Self.generator()
        let table = TokenTable(generator.tokenizer)
        let system = SmolLM2ToolFormat.systemPrompt("You answer with tools.", tools: GrammarTests.tools)
        let prompt = try generator.prompt([.system(system), .user("What is (17 + 25) * 3?")])
        var options = Self.greedy
        options.maxTokens = 80
        options.constraint = GrammarConstraint(
            try Grammar.toolCalls(GrammarTests.tools, choice: .required), tokens: table)
        let plain = try generator.generate(prompt: prompt, options: options)
        try #require(plain.tokens.count > 10, "\(plain.text)")
        var cache = PromptCache()
        let kept = try generator.generate(
            prompt: prompt, forcing: plain.tokens.prefix(5).map(\.id), options: options, reusing: &cache)
        #expect(kept.grammarRefusedAt == nil)
        #expect(kept.generation.tokens.map(\.id) == plain.tokens.map(\.id))

        // The grammar's reply starts with `<tool_call>`: plain words there are refused.
        let words = generator.tokenizer.encode("I think")
        let refused = try generator.generate(
            prompt: prompt, forcing: plain.tokens.prefix(2).map(\.id) + words, options: options, reusing: &cache)
        #expect(refused.grammarLeft?.index == 2 && refused.grammarLeft?.token == words[0])
        #expect(refused.grammarLeft?.text == generator.tokenizer.piece(words[0]))
        #expect(refused.grammarLeft?.summary.contains("went on unconstrained") == true)
        #expect(refused.generation.tokens.prefix(2 + words.count).map(\.id) == plain.tokens.prefix(2).map(\.id) + words)
        // The forced words are honoured and the rest is the model's own, unconstrained: the
        // same answer as forcing them with no grammar at all.
        var free = options
        free.constraint = nil
        let unconstrained = try generator.generate(
            prompt: prompt, forcing: plain.tokens.prefix(2).map(\.id) + words, options: free, reusing: &cache)
        #expect(unconstrained.grammarLeft == nil)
        #expect(refused.generation.tokens.map(\.id) == unconstrained.generation.tokens.map(\.id))
    }
}
