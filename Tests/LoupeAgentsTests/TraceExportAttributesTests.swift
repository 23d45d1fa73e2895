import Foundation
import LoupeAgents
import LoupeBase
import Testing

/// The OTLP export carries every attribute a span holds, not only those it maps from the span's
/// fields: a local model's tokens and timings, the agent's provider. `loupe agent run --json`,
/// `trace export` and `trace export --to` all write this form.
@Suite struct TraceExportAttributesTests {
    static let attributes: JSONObject = [
        "loupe.llm.stop_reason": "tool_call",
        "loupe.llm.prompt_tokens": .number(212),
        "loupe.llm.decode_tokens_per_s": .number(61.5),
        "loupe.llm.prompt_token_ids": .array([.number(1), .number(9690), .number(198)]),
        "loupe.llm.tokens": .array([
            .object([
                "id": .number(28), "text": "<", "logprob": .number(-0.25),
                "top": .array([.object(["id": .number(28), "text": "<", "logprob": .number(-0.25)])]),
            ])
        ]),
        "agent.streamed": .bool(false),
        "loupe.fork.note": .null,
    ]

    static func trace() -> Trace {
        var root = TraceSpan(spanID: "root", parentID: nil, kind: .agent, name: "agent", startNs: 1_000, endNs: 9_000)
        root.attributes = ["agent.provider": "local", "agent.tools": .array(["search", "calculator"])]
        var call = TraceSpan(spanID: "1", parentID: "root", kind: .llm, name: "chat", startNs: 2_000, endNs: 5_000)
        call.model = "SmolLM2-135M-Instruct"
        call.usage = Usage(inputTokens: 212, outputTokens: 1)
        call.output = [Message(role: "assistant", text: "<")]
        call.attributes = attributes
        return Trace(externalID: "local-run", format: .loupe, name: "agent", spans: [root, call])
    }

    @Test func everyAttributeReadsBackAsItWas() throws {
        let original = Self.trace()
        let exported = TraceExport.export(original, as: .otlp)
        let back = try #require(try OTLPImporter.traces(Data(exported.compactJSON.utf8), file: "x.json").first)
        #expect(back.spans.count == 2)
        for (sent, read) in zip(original.spans, back.spans) {
            for member in sent.attributes {
                #expect(read.attributes[member.key] == member.value, "\(member.key)")
            }
        }
        // Arrays and objects go as OTLP's arrayValue and kvlistValue, not as JSON text.
        let spans = try #require(exported["resourceSpans"]?.array?.first?["scopeSpans"]?.array?.first?["spans"]?.array)
        let written = try #require(spans[1]["attributes"]?.array)
        let tokens = try #require(written.first { $0["key"] == "loupe.llm.tokens" })
        #expect(tokens["value"]?["arrayValue"]?["values"]?.array?.first?["kvlistValue"] != nil)
    }

    @Test func anAttributeTheMappingWritesIsWrittenOnce() throws {
        var original = Self.trace()
        // A key the export writes from the span's fields, held in its attributes too (as an
        // imported span holds it): written once, from the fields.
        original.spans[1].attributes["gen_ai.request.model"] = "stale-name"
        let exported = TraceExport.export(original, as: .otlp)
        let spans = try #require(exported["resourceSpans"]?.array?.first?["scopeSpans"]?.array?.first?["spans"]?.array)
        for span in spans {
            let keys = span["attributes"]?.array?.compactMap { $0["key"]?.string } ?? []
            #expect(keys.count == Set(keys).count, "\(keys)")
        }
        let model = spans[1]["attributes"]?.array?.first { $0["key"] == "gen_ai.request.model" }
        #expect(model?["value"]?["stringValue"] == "SmolLM2-135M-Instruct")
    }
}
