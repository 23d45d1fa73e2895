import Foundation
import Testing

/// `loupe generate` and `loupe logits` on the real SmolLM2-135M-Instruct, run as the real binary,
/// against the numpy float reference's figures (research brief local-llm.md §4: the ChatML
/// prompt of "What is the capital of France?" is 37 ids; the reference's greedy answer is
/// "The capital of France is Paris.", and its top 5 after the prompt are The, L, La, Al, Le).
@Suite(.serialized) struct GenerateCommandTests {
    static let promptIDs: [Int32] = [
        1, 9690, 198, 2683, 359, 253, 5356, 5646, 11173, 3365, 3511, 308, 34519, 28, 7018, 411, 407, 19712, 8182, 2,
        198, 1, 4093, 198, 1780, 314, 260, 3575, 282, 4649, 47, 2, 198, 1, 520, 9531, 198,
    ]

    /// `loupe ARGUMENTS` with SmolLM2's weights, in a new workspace (GlassBoxCommandTests too).
    static func run(_ arguments: [String], input: String? = nil) throws -> (
        status: Int32, output: String, error: String
    ) {
        try #require(
            FileManager.default.fileExists(atPath: ModelsCommandTests.smolLM2Path),
            "SmolLM2 weights not found at \(ModelsCommandTests.smolLM2Path): run scripts/fetch-smollm2")
        let directory = TestEnvironment.temporaryDirectory()
        let result = try TestEnvironment.run(
            arguments + ["--workspace", directory + "/w.sqlite"],
            environment: ["LOUPE_MODELS": ModelsCommandTests.modelsRoot], input: input)
        return (result.status, result.output, result.error)
    }

    static func object(_ text: String) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func theExactPathAnswersAsTheFloatReferenceDoes() throws {
        let result = try Self.run([
            "generate", "What is the capital of France?", "--precision", "f32", "--top-logprobs", "3", "--json",
        ])
        #expect(result.status == 0, "\(result.error)")
        let json = try Self.object(result.output)
        #expect(json["prompt_ids"] as? [Int] == Self.promptIDs.map(Int.init))
        #expect(json["text"] as? String == "The capital of France is Paris.")
        #expect(json["stop_reason"] as? String == "eos")
        let tokens = try #require(json["tokens"] as? [[String: Any]])
        #expect(tokens.compactMap { $0["id"] as? Int } == [504, 3575, 282, 4649, 314, 7042, 30])
        for token in tokens {
            let logprob = try #require(token["logprob"] as? Double)
            let alternatives = try #require(token["top_logprobs"] as? [[String: Any]])
            let values = alternatives.compactMap { $0["logprob"] as? Double }
            #expect(values.count == 3 && values == values.sorted(by: >))
            // Greedy: the chosen token is the most likely one, and a probability is at most 1.
            #expect(alternatives.first?["id"] as? Int == token["id"] as? Int)
            #expect(abs((values.first ?? 1) - logprob) < 1e-6 && logprob <= 0)
        }
        let timings = try #require(json["timings"] as? [String: Any])
        #expect(timings["prompt_tokens"] as? Int == 37)
        #expect(timings["generated_tokens"] as? Int == 7)
    }

    @Test func logitsAfterThePromptRankTheReferencesTopFive() throws {
        let prompt =
            "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
            + "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n"
        let result = try Self.run(["logits", prompt, "--precision", "f32", "--top", "5", "--json"])
        #expect(result.status == 0, "\(result.error)")
        let json = try Self.object(result.output)
        #expect(json["ids"] as? [Int] == Self.promptIDs.map(Int.init))
        let positions = try #require(json["positions"] as? [[String: Any]])
        #expect(positions.count == 37)
        let last = try #require(positions.last?["top"] as? [[String: Any]])
        #expect(last.compactMap { $0["text"] as? String } == ["The", "L", "La", "Al", "Le"])
        // The reference's logits are 25.325 and 25.243 for The and L: their log-probabilities differ by 0.082.
        let gap = (last[0]["logprob"] as? Double ?? 0) - (last[1]["logprob"] as? Double ?? 0)
        #expect(abs(gap - 0.082) < 0.002, "gap \(gap)")
        // Each position's next_logprob is the log-probability of the token that follows it.
        #expect(positions.last?["next_logprob"] == nil)
        #expect(positions.dropLast().allSatisfy { ($0["next_logprob"] as? Double ?? 1) <= 0 })

        // --logits-out: every position's whole row of logits, whose log-softmax is what was shown.
        let path = TestEnvironment.temporaryDirectory() + "/logits.f32"
        let written = try Self.run(["logits", prompt, "--precision", "f32", "--top", "5", "--logits-out", path])
        #expect(written.status == 0, "\(written.error)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let vocabulary = 49152
        #expect(bytes.count == 37 * vocabulary * 4)
        let row = bytes.withUnsafeBytes { raw in
            (0..<vocabulary).map { raw.loadUnaligned(fromByteOffset: (36 * vocabulary + $0) * 4, as: Float.self) }
        }
        let top = row.max()!
        let logSumExp = top + Float(log(row.reduce(0.0) { $0 + exp(Double($1 - top)) }))
        let best = try #require(row.indices.max { row[$0] < row[$1] })
        #expect(Int32(best) == last[0]["id"].flatMap { $0 as? Int }.map(Int32.init))
        #expect(abs(Double(row[best] - logSumExp) - (last[0]["logprob"] as? Double ?? 0)) < 1e-4)
        let refused = try Self.run(["logits", prompt, "--logits-out", "/nonexistent-directory/logits.f32"])
        #expect(refused.status != 0 && refused.error.contains("cannot write the logits to /nonexistent-directory"))
    }

    /// The greedy answer does not depend on the CPU's BLAS kernels: OpenBLAS loaded with Skylake-X's,
    /// Zen's and Haswell's sgemm kernels (`OPENBLAS_VERBOSE=2` shows which) gives the same tokens on
    /// both paths, because no product or attention of the model goes through OpenBLAS. (With the
    /// prompt's attention in sgemm, "Name three colors." began "1. Red" on Skylake-X's kernels and
    /// "The most obvious" on Zen's.) The kernels' own instruction forms: `RowExactnessTests`.
    @Test(arguments: ["q8", "f32"])
    func theAnswerIsTheSameWhicheverOpenBLASKernelsLoad(precision: String) throws {
        var answers: [String: [Int]] = [:]
        for core in ["SkylakeX", "Zen", "Haswell"] {
            let directory = TestEnvironment.temporaryDirectory()
            let result = try TestEnvironment.run(
                [
                    "generate", "Name three colors.", "--precision", precision, "--max-tokens", "32", "--json",
                    "--workspace", directory + "/w.sqlite",
                ],
                environment: [
                    "LOUPE_MODELS": ModelsCommandTests.modelsRoot, "OPENBLAS_CORETYPE": core, "OPENBLAS_VERBOSE": "2",
                ])
            #expect(result.status == 0, "\(core): \(result.error)")
            #expect(
                result.output.contains("Core: \(core)") || result.error.contains("Core: \(core)"), "\(core) not loaded")
            let json = try Self.object(String(result.output.drop { $0 != "{" }))
            answers[core] = try #require(json["tokens"] as? [[String: Any]]).compactMap { $0["id"] as? Int }
        }
        #expect(answers["SkylakeX"]?.isEmpty == false)
        #expect(answers["SkylakeX"] == answers["Zen"] && answers["Zen"] == answers["Haswell"], "\(answers)")
    }

    @Test func stopStringsSamplingOptionsAndAMissingModelAreAnsweredPlainly() throws {
        let stopped = try Self.run([
            "generate", "What is the capital of France?", "--precision", "f32", "--stop", " of", "--json",
        ])
        #expect(stopped.status == 0, "\(stopped.error)")
        let json = try Self.object(stopped.output)
        #expect(json["text"] as? String == "The capital")
        #expect(json["stop_reason"] as? String == "word")
        #expect(json["stopping_word"] as? String == " of")

        let bad = try Self.run(["generate", "hi", "--top-p", "0"])
        #expect(bad.status != 0)
        #expect(bad.error.contains("top-p 0.0: use a value in (0, 1]"), "\(bad.error)")

        let directory = TestEnvironment.temporaryDirectory()
        let missing = try TestEnvironment.run(
            ["generate", "hi", "--workspace", directory + "/w.sqlite"], environment: ["LOUPE_MODELS": directory])
        #expect(missing.status == 1)
        #expect(missing.error.contains("run loupe models fetch smollm2"), "\(missing.error)")
    }

    @Test func chatKeepsTheConversationAndForgetsItOnReset() throws {
        let result = try Self.run(
            ["chat", "--precision", "f32", "--max-tokens", "24"],
            input: "What is the capital of France?\nAnd of Germany?\n/reset\nAnd of Germany?\n")
        #expect(result.status == 0, "\(result.error)")
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.first == "The capital of France is Paris.")
        // The second turn reads the first: "And of Germany?" is understood as a capital.
        #expect(lines.count > 1 && lines[1].contains("Berlin"), "\(lines)")
        #expect(lines.contains("(the conversation is forgotten)"))
        // Without the first turn, the same words are answered differently.
        #expect(lines.last.map { !$0.contains("Berlin") } == true, "\(lines)")
    }
}
