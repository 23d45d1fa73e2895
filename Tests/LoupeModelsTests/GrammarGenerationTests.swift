import Foundation
import LoupeBase
import LoupeModels
import Testing

/// The grammar on the real model: SmolLM2-135M sampling at temperature 1 (where it would wander
/// most) under a tool-call grammar, and greedy under a `response_format` schema, writes replies
/// that parse and that Python's `jsonschema` finds valid (GrammarTests.expectValid).
///
/// Needs the model (`scripts/fetch-smollm2`) and the peers' Python; a missing one fails with
/// the command that fetches it.
@Suite(.serialized)
struct GrammarGenerationTests {
    static func generator() throws -> Generator { try PromptCacheTests.generator(try SmolLM2.quantizedModel()) }

    @Test func sampledRepliesUnderAToolGrammarAreValidCalls() throws {
        let generator = try Self.generator()
        let table = TokenTable(generator.tokenizer)
        let grammar = try Grammar.toolCalls(GrammarTests.tools, choice: .required)
        let system = SmolLM2ToolFormat.systemPrompt("You answer with tools.", tools: GrammarTests.tools)
        let prompt = try generator.prompt([.system(system), .user("What is (17 + 25) * 3?")])
        let schemas = Dictionary(uniqueKeysWithValues: GrammarTests.tools.map { ($0.name, $0.parameters) })
        var cases: [(schema: JSONValue, text: String)] = []
        for seed in UInt64(1)...4 {
            var options = GenerationOptions()
            options.maxTokens = 160
            options.sampling.temperature = 1
            options.sampling.seed = seed
            options.constraint = GrammarConstraint(grammar, tokens: table)
            let generation = try generator.generate(prompt: prompt, options: options)
            // Cut off by the token limit is the one way a reply may be unfinished.
            guard generation.stopReason == .eos else {
                #expect(generation.stopReason == .limit, "\(generation.stopReason)")
                continue
            }
            let calls = try #require(try SmolLM2ToolFormat.calls(in: generation.text), "\(generation.text)")
            #expect(!calls.isEmpty)
            for call in calls {
                let schema = try #require(schemas[call.name], "unknown tool in \(generation.text)")
                cases.append((schema, call.arguments))
            }
        }
        try #require(!cases.isEmpty, "no sampled reply ended within 160 tokens")
        try GrammarTests.expectValid(cases, distinct: false)
    }

    @Test func aGreedyReplyUnderAResponseSchemaIsValid() throws {
        let generator = try Self.generator()
        let schema = GrammarTests.json(
            #"{"type": "object", "properties": {"city": {"type": "string", "maxLength": 30}, "#
                + #""population": {"type": "integer", "minimum": 0}}, "required": ["city", "population"]}"#)
        var options = GenerationOptions()
        options.maxTokens = 80
        options.constraint = GrammarConstraint(
            try Grammar.json(schema: schema), tokens: TokenTable(generator.tokenizer))
        let prompt = try generator.prompt([
            .user("Give the capital of France and its population as JSON with the keys city and population.")
        ])
        let generation = try generator.generate(prompt: prompt, options: options)
        #expect(generation.stopReason == .eos, "\(generation.text)")
        try GrammarTests.expectValid([(schema, generation.text)], distinct: false)
    }
}
