import Foundation
import LoupeAgents
import LoupeBase
import LoupeKit
import LoupeStore
import Testing

/// `loupe agent run --json` prints the run's trace as OTLP/JSON with every span attribute the
/// workspace stored: a local model call's prompt token ids, its tokens with their
/// log-probabilities, its timings and grammar, the root's provider and tools. Real SmolLM2
/// (`scripts/fetch-smollm2`), one step.
@Suite(.serialized) struct AgentRunJSONTests {
    @Test func theJSONHoldsEveryAttributeTheWorkspaceStored() throws {
        try #require(
            FileManager.default.fileExists(atPath: LocalAgentTests.modelPath),
            "\(LocalAgentTests.modelPath) is missing: run scripts/fetch-smollm2")
        let file = TestEnvironment.temporaryDirectory() + "/w.sqlite"
        let run = try TestEnvironment.run([
            "--workspace", file, "agent", "run", "--provider", "local", "--max-steps", "1", "--json",
            "What is (17 + 25) * 3?",
        ])
        // One step rarely finishes; the JSON holds the trace either way.
        #expect(run.status == 0 || run.error.contains("step limit 1 reached"), "\(run.error)")
        let printed = try #require(
            try OTLPImporter.traces(Data(run.output.utf8), file: "stdout").first,
            "no trace in \(run.output.prefix(300))")

        let workspace = try Workspace(path: file)
        let summary = try #require(try workspace.traces.traceSummaries().first)
        let stored = try TraceService(workspace: workspace).trace(summary.id)
        #expect(printed.spans.count == stored.spans.count)
        let call = try #require(stored.spans.first { $0.kind == .llm }, "no model call was recorded")
        #expect(call.attributes["loupe.llm.tokens"] != nil && call.attributes["loupe.llm.prompt_token_ids"] != nil)
        #expect(stored.spans[0].attributes["agent.provider"] == "local")
        for (kept, read) in zip(stored.spans, printed.spans) {
            #expect(kept.name == read.name && kept.kind == read.kind)
            for member in kept.attributes {
                #expect(read.attributes[member.key] == member.value, "\(kept.name): \(member.key)")
            }
        }
        // The tokens decode from the JSON as from the workspace.
        let printedCall = try #require(printed.spans.first { $0.kind == .llm })
        #expect(
            try GeneratedTokens.decode(printedCall.attributes, span: "printed")
                == GeneratedTokens.decode(call.attributes, span: "stored"))
    }
}
