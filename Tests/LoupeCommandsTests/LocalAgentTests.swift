import Foundation
import GRDB
import LoupeBase
import Testing

/// `loupe agent run --provider local` end to end through the real binary, with the real
/// SmolLM2-135M-Instruct: whatever the 135M model answers, every model call is a tool call
/// that parses and names a real tool with its required arguments (the grammar sees to it), and
/// its span keeps the tokens with their log-probabilities and the generation's timings. Needs
/// the model (`scripts/fetch-smollm2`); a missing one fails with the command that fetches it.
@Suite(.serialized) struct LocalAgentTests {
    static var modelPath: String {
        let environment = ProcessInfo.processInfo.environment
        let root =
            environment["LOUPE_MODELS"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? "") + "/.cache/loupe/models")
        return root + "/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf"
    }

    /// The arguments each workspace tool requires, with their JSON types.
    static let required: [String: [String: String]] = [
        "calculator": ["expression": "string"], "search": ["query": "string"], "sql": ["query": "string"],
        "final_answer": ["answer": "string"], "read": [:],
    ]

    /// The calculator question answered by the agent on the local model (two steps at most) in a
    /// new workspace holding the sample corpus: the workspace file and `agent run`'s result.
    static func calculatorRun() throws -> (file: String, result: (status: Int32, output: String, error: String)) {
        try #require(
            FileManager.default.fileExists(atPath: modelPath), "\(modelPath) is missing: run scripts/fetch-smollm2")
        let directory = TestEnvironment.temporaryDirectory()
        let corpus = directory + "/corpus.jsonl"
        try AgentCommandTests.corpus.write(toFile: corpus, atomically: true, encoding: .utf8)
        let file = directory + "/w.sqlite"
        let ingest = try TestEnvironment.run(["--workspace", file, "ingest", corpus, "--no-embed"])
        try #require(ingest.status == 0, "\(ingest.error)")
        let result = try TestEnvironment.run([
            "--workspace", file, "agent", "run", "--provider", "local", "--max-steps", "2", "What is (17 + 25) * 3?",
        ])
        return (file, result)
    }

    @Test func theCalculatorTaskGivesValidToolCallsAndTokenLogprobs() throws {
        let (file, result) = try Self.calculatorRun()
        // The model may finish (final_answer) or use both steps; either way the run is recorded.
        #expect(
            result.status == 0 || result.error.contains("step limit 2 reached"), "\(result.output)\(result.error)")
        #expect(result.output.contains("provider local"), "\(result.output)")

        let payloads = try DatabaseQueue(path: file).read { db in
            try Row.fetchAll(
                db, sql: "SELECT kind, input_tokens, output_tokens, payload_json FROM spans ORDER BY ordinal")
        }
        let calls = payloads.filter { $0["kind"] == "llm" }
        try #require(!calls.isEmpty, "no model call was recorded")
        for row in calls {
            let payload = try JSONValue.parse(row["payload_json"] as String)
            let attributes = try #require(payload["attributes"])
            // A valid call: a real tool, its required arguments with their types.
            let toolCalls = try #require(payload["output"]?.array?.first?["tool_calls"]?.array)
            #expect(!toolCalls.isEmpty, "\(payload.compactJSON.prefix(400))")
            for call in toolCalls {
                let name = try #require(call["name"]?.string)
                let required = try #require(Self.required[name], "no tool named \(name)")
                let arguments = try JSONValue.parse(try #require(call["arguments"]?.string))
                for (key, type) in required {
                    let value = arguments[key]
                    #expect(type != "string" || value?.string != nil, "\(name): \(key) in \(arguments.compactJSON)")
                }
            }
            #expect(attributes["loupe.llm.grammar"] == .string("tool_calls (required)"))
            // The prompt as tokens, each generated token with its logprob and top 5.
            let promptTokens = try #require(attributes["loupe.llm.prompt_tokens"]?.int)
            #expect(Int64(row["input_tokens"] as Int) == promptTokens)
            #expect(attributes["loupe.llm.prompt_token_ids"]?.array?.count == Int(promptTokens))
            let tokens = try #require(attributes["loupe.llm.tokens"]?.array)
            #expect(tokens.count == row["output_tokens"] as Int)
            for token in tokens {
                let logprob = try #require(token["logprob"]?.number)
                let top = try #require(token["top"]?.array)
                #expect(logprob <= 0 && top.count == 5)
                let alternatives = top.compactMap { $0["logprob"]?.number }
                #expect(alternatives == alternatives.sorted(by: >))
                // A chosen token among the top 5 has the same logprob there; one that is not
                // is no more likely than the fifth.
                if let same = top.first(where: { $0["id"] == token["id"] }) {
                    #expect(same["logprob"]?.number == logprob)
                } else {
                    #expect(logprob <= alternatives.last ?? 0)
                }
            }
            #expect((attributes["loupe.llm.time_to_first_token_s"]?.number ?? 0) > 0)
            #expect((attributes["loupe.llm.prefill_tokens_per_s"]?.number ?? 0) > 0)
            #expect(attributes["loupe.llm.decode_tokens_per_s"]?.number != nil)
        }
        // The tools ran on what the model asked: no call failed for its name or its JSON.
        for row in payloads where row["kind"] == "tool" {
            let payload = try JSONValue.parse(row["payload_json"] as String)
            #expect(!payload.compactJSON.contains("no tool named"), "\(payload.compactJSON.prefix(300))")
            #expect(!payload.compactJSON.contains("not valid JSON"), "\(payload.compactJSON.prefix(300))")
        }
    }
}
