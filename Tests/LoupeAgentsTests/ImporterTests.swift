import Foundation
import LoupeAgents
import Testing

/// The importers on files the real tools wrote (scripts/fixtures/): the OpenTelemetry SDK's
/// OTLP/JSON file exporter and the openai SDK's message types.
@Suite struct ImporterTests {
    static func sample(_ name: String) throws -> (Data, String) {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "../../sample-data/traces/\(name)"
        ).standardized.path
        return (try Data(contentsOf: URL(fileURLWithPath: path)), path)
    }

    @Test func otlpFileExportBecomesThreeTracesWithParentsFirst() throws {
        let (data, file) = try Self.sample("otlp-genai.jsonl")
        #expect(TraceImport.detect(data, file: file) == .otlp)
        let traces = try TraceImport.traces(data, file: file)
        #expect(traces.count == 3)
        let current = traces[0]
        #expect(current.name == "invoke_agent cranfield-qa")
        #expect(current.metadata["service.name"] == .string("cranfield-qa-agent"))
        // The exporter wrote children first; the model orders parents first, siblings by start.
        #expect(current.spans.map(\.kind) == [.agent, .llm, .tool, .llm, .tool, .llm])
        #expect(current.spans.dropFirst().allSatisfy { $0.parentID == current.spans[0].spanID })
        let chat = current.spans[1]
        #expect(chat.model == "gpt-4o-mini-2024-07-18")
        #expect(chat.usage == Usage(inputTokens: 412, outputTokens: 23, cacheReadTokens: 256))
        #expect(chat.input.map(\.role) == ["system", "user"])
        #expect(chat.output.first?.toolCalls.first?.name == "search")
        #expect(chat.durationNs == 1_168_000_000)
        let failed = current.spans[4]
        #expect(failed.status == .error("division by zero"))
        #expect(failed.tool?.name == "calculator" && failed.tool?.error == "division by zero")
        #expect(current.errorCount == 1)
        #expect(current.usage.inputTokens == 412 + 498 + 575)
        #expect(
            current.scores == [
                Score(scorer: "cites_sources", value: .number(1), answer: "pass", explanation: "cites 2 chunk ids")
            ])
        // The older generation: per-message events.
        let legacy = traces[1].spans[1]
        #expect(legacy.input.map(\.role) == ["system", "user"])
        #expect(legacy.output.first?.text.hasPrefix("Aerodynamic heating") == true)
        #expect(legacy.usage.inputTokens == 96 && legacy.usage.outputTokens == 52)
        // OpenInference.
        #expect(traces[2].spans.map(\.kind) == [.agent, .retrieval, .llm])
        let llm = traces[2].spans[2]
        #expect(llm.model == "llama-3.1-8b-instruct" && llm.usage.inputTokens == 310)
        #expect(llm.input.map(\.text) == ["Use the context.", "how do swept wings flutter?"])
    }

    @Test func aMalformedSpanNamesItsLineAndField() throws {
        let (data, file) = try Self.sample("otlp-genai.jsonl")
        var lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        lines[3] = lines[3].replacingOccurrences(of: #""spanId":""#, with: #""spanId":"zz"#)
        #expect(throws: TraceImportError.self) {
            try OTLPImporter.traces(Data(lines.joined(separator: "\n").utf8), file: file)
        }
        do {
            _ = try OTLPImporter.traces(Data(lines.joined(separator: "\n").utf8), file: "x.jsonl")
        } catch {
            #expect(error.description.hasPrefix("x.jsonl:4: resourceSpans[0].scopeSpans[0].spans[0].spanId: \"zz"))
        }
        lines[3] = "{\"resourceSpans\": [oops"
        do {
            _ = try OTLPImporter.traces(Data(lines.joined(separator: "\n").utf8), file: "x.jsonl")
            Issue.record("a broken line was accepted")
        } catch {
            #expect(error.description.hasPrefix("x.jsonl:4: not JSON (line 1, column 20: expected a value)"))
        }
    }

    @Test func chatConversationsKeepBadArgumentsRawAndFlagged() throws {
        let (data, file) = try Self.sample("openai-chat.jsonl")
        #expect(TraceImport.detect(data, file: file) == .openai)
        let traces = try TraceImport.traces(data, file: file)
        #expect(traces.count == 3 && traces.allSatisfy { !$0.timed })
        let first = traces[0]
        #expect(first.spans.map(\.kind) == [.agent, .llm, .tool, .llm])
        #expect(first.spans[2].tool?.result?.hasPrefix("[1] 12#0") == true)
        #expect(first.spans[3].input.count == 4)
        let cut = try #require(traces[1].spans[2].tool)
        #expect(cut.arguments == #"{"expression": "0.5 * 1.4 * 30000 * 2 ** "#)
        #expect(cut.argumentsError?.hasPrefix("arguments are not valid JSON") == true)
        #expect(traces[2].spans[2].tool?.name == "search")
        #expect(traces[0].metadata["tools"]?.array?.count == 2)
    }

    @Test func unknownFilesAreRefusedByName() {
        #expect(throws: TraceImportError.self) { try TraceImport.traces(Data("{\"x\": 1}".utf8), file: "a.json") }
    }
}
