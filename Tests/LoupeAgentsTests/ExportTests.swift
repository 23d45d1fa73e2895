import Foundation
import LoupeAgents
import LoupeBase
import Testing

/// Export then import again: what the model holds survives each format that can carry it.
@Suite struct ExportTests {
    static func otlpSample() throws -> [Trace] {
        let (data, file) = try ImporterTests.sample("otlp-genai.jsonl")
        return try TraceImport.traces(data, file: file)
    }

    @Test func otlpRoundTripsKindsUsageMessagesToolsAndErrors() throws {
        for original in try Self.otlpSample()
            + InspectImporter.traces(ImporterTests.sample("inspect-arith.eval").0, file: "a.eval")
        {
            let exported = TraceExport.export(original, as: .otlp).compactJSON
            let back = try #require(try OTLPImporter.traces(Data(exported.utf8), file: "x.json").first)
            #expect(back.spans.count == original.spans.count)
            for (a, b) in zip(original.spans, back.spans) {
                #expect(a.kind == b.kind && a.name == b.name && a.startNs == b.startNs && a.endNs == b.endNs)
                #expect(a.usage.inputTokens == b.usage.inputTokens && a.usage.outputTokens == b.usage.outputTokens)
                #expect(a.status.isError == b.status.isError)
                #expect(a.input.map(\.text) == b.input.map(\.text) && a.output.map(\.role) == b.output.map(\.role))
                #expect(a.tool?.name == b.tool?.name && a.tool?.result == b.tool?.result)
            }
            // Ids that were not hex are hashed to hex, the same way every time.
            #expect(TraceExport.export(original, as: .otlp) == TraceExport.export(original, as: .otlp))
        }
    }

    @Test func openaiExportIsTheLastCallsConversationAndReadsBack() throws {
        let original = try Self.otlpSample()[0]
        let exported = TraceExport.export(original, as: .openai)
        let messages = try #require(exported["messages"]?.array)
        #expect(
            messages.map { $0["role"]?.string } == [
                "system", "user", "assistant", "tool", "assistant", "tool", "assistant",
            ])
        // Chat-completions sends tool arguments as a JSON string.
        #expect(messages[2]["tool_calls"]?.array?.first?["function"]?["arguments"]?.string?.contains("\"k\":2") == true)
        let back = try #require(try ChatMessages.traces(Data(exported.compactJSON.utf8), file: "c.json").first)
        #expect(back.spans.filter { $0.kind == .llm }.count == 3)
        #expect(back.spans.filter { $0.kind == .tool }.map(\.name) == ["search", "calculator"])
    }

    @Test func atifHasSequentialStepsObservationsAndTotals() throws {
        let original = try Self.otlpSample()[0]
        let atif = TraceExport.export(original, as: .atif)
        #expect(atif["schema_version"] == "ATIF-v1.6")
        let steps = try #require(atif["steps"]?.array)
        #expect(steps.compactMap { $0["step_id"]?.int } == [1, 2, 3, 4, 5])
        #expect(steps.compactMap { $0["source"]?.string } == ["system", "user", "agent", "agent", "agent"])
        let first = steps[2]
        #expect(first["tool_calls"]?.array?.first?["arguments"]?["k"] == .number(2))
        #expect(first["observation"]?["results"]?.array?.first?["source_call_id"] == "call_s1")
        #expect(steps[3]["observation"]?["results"]?.array?.first?["content"] == "error: division by zero")
        #expect(atif["final_metrics"]?["total_prompt_tokens"] == .number(1485))
        #expect(steps[2]["timestamp"] == "2026-01-01T00:00:00.012000Z")
    }
}
