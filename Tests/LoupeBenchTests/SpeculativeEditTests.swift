import Foundation
import LoupeModels
import Testing

@testable import LoupeBench

/// Prompt-lookup speculative decoding gives plain greedy decoding's answer on the four edits of
/// `loupe bench speculative` (issue 59: "same output with greedy sampling"), with the bench's
/// settings, on the q8 model it runs. A draft is verified in one pass of many rows, and every
/// row of that pass has the bits a single-row decode step gives it (`RowExactnessTests`), so
/// the accepted tokens are the ones plain decoding picks.
@Suite(.serialized)
struct SpeculativeEditTests {
    /// The real SmolLM2 file (`$LOUPE_MODELS` or `~/.cache/loupe/models`).
    static let smolLM2Path: String = {
        let environment = ProcessInfo.processInfo.environment
        let root =
            environment["LOUPE_MODELS"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? "") + "/.cache/loupe/models")
        return root + "/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf"
    }()
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test func promptLookupGivesPlainDecodingsTextOnEveryBenchEdit() throws {
        try #require(
            FileManager.default.fileExists(atPath: Self.smolLM2Path),
            "SmolLM2 weights not found at \(Self.smolLM2Path): run scripts/fetch-smollm2")
        let file = try GGUFFile(path: Self.smolLM2Path)
        let generator = Generator(
            model: try LlamaModel(file: file, precision: .q8), tokenizer: try BPETokenizer(file: file),
            template: try ChatTemplate(file: file))
        let defaults = BenchCommand.Speculative.defaults
        let corpus = Self.repositoryRoot.appendingPathComponent("sample-data/cranfield/corpus.jsonl").path
        let abstracts = try BenchCommand.Speculative.abstracts(at: corpus)
        var plainOptions = GenerationOptions()
        plainOptions.maxTokens = defaults.maxTokens
        var speculativeOptions = plainOptions
        var speculation = SpeculationOptions(draftTokens: defaults.draftTokens)
        speculation.minimumNgram = defaults.minNgram
        speculativeOptions.speculation = speculation
        var accepted = 0
        for edit in BenchCommand.Speculative.edits {
            let abstract = try #require(abstracts[edit.document], "document \(edit.document)")
            let prompt = try generator.prompt([.user(BenchCommand.Speculative.instruction(edit, abstract: abstract))])
            let plain = try generator.generate(prompt: prompt, options: plainOptions)
            let fast = try generator.generate(prompt: prompt, options: speculativeOptions)
            #expect(fast.tokens.map(\.id) == plain.tokens.map(\.id), "abstract \(edit.document)")
            #expect(fast.text == plain.text && fast.stopReason == plain.stopReason, "abstract \(edit.document)")
            // The same bits, so the same log-probabilities too.
            #expect(
                fast.tokens.map(\.choice.token.logprob) == plain.tokens.map(\.choice.token.logprob),
                "abstract \(edit.document)")
            accepted += fast.speculation?.accepted ?? 0
        }
        #expect(accepted > 0, "no draft token was accepted: the test compared nothing speculative")
    }
}
