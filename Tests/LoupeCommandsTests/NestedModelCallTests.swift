import Foundation
import LoupeAgents
import LoupeBase
import LoupeKit
import LoupeStore
import Testing

/// One model call recorded at two levels of a trace, as an agent framework calling `loupe serve`
/// records it: the framework's generation span and, under it through `traceparent`, the server's
/// chat span, both with the call's usage. The trace counts the call once, the server's figures,
/// whether the spans arrive together, the generation first or the server's span first (the
/// receiver's three paths: a new trace, spans landing last, a trace reordered from its columns).
@Suite(.serialized) struct NestedModelCallTests {
    static let traceID = "0af7651916cd43dd8448eb211c80319c"

    /// Spans as the receiver decodes them: the SDK's root, its generation span (usage 120 in, 30
    /// out, $0.5, model "gpt-sdk"), the server's chat span under it (37 in, 9 out, "SmolLM2"), a
    /// tool call, and a hosted call no server recorded (50 in, 5 out, $0.25, "hosted").
    static func spans() throws -> [String: OTLPImporter.OTLPSpan] {
        func span(_ id: Int, parent: Int?, name: String, start: Int64, attributes: [String: String]) -> String {
            let list = attributes.sorted { $0.key < $1.key }.map { key, value in
                "{\"key\":\"\(key)\",\"value\":\(value)}"
            }
            let base: Int64 = 1_700_000_000_000_000_000
            return """
                {"traceId":"\(traceID)","spanId":"\(String(format: "%016x", id))",\
                "parentSpanId":"\(parent.map { String(format: "%016x", $0) } ?? "")","name":"\(name)",\
                "startTimeUnixNano":"\(base + start * 1_000_000)","endTimeUnixNano":"\(base + start * 1_000_000 + 900_000)",\
                "attributes":[\(list.joined(separator: ","))]}
                """
        }
        func text(_ value: String) -> String { "{\"stringValue\":\"\(value)\"}" }
        func int(_ value: Int) -> String { "{\"intValue\":\"\(value)\"}" }
        let all = [
            span(1, parent: nil, name: "Adder", start: 0, attributes: ["gen_ai.operation.name": text("invoke_agent")]),
            span(
                2, parent: 1, name: "generation", start: 1,
                attributes: [
                    "gen_ai.operation.name": text("chat"), "gen_ai.request.model": text("gpt-sdk"),
                    "gen_ai.usage.input_tokens": int(120), "gen_ai.usage.output_tokens": int(30),
                    "gen_ai.usage.cost": "{\"doubleValue\":0.5}",
                ]),
            span(
                3, parent: 2, name: "chat SmolLM2", start: 2,
                attributes: [
                    "gen_ai.operation.name": text("chat"), "gen_ai.request.model": text("SmolLM2"),
                    "gen_ai.usage.input_tokens": int(37), "gen_ai.usage.output_tokens": int(9),
                ]),
            span(4, parent: 1, name: "add", start: 3, attributes: ["gen_ai.tool.name": text("add")]),
            span(
                5, parent: 1, name: "hosted", start: 4,
                attributes: [
                    "gen_ai.operation.name": text("chat"), "gen_ai.request.model": text("hosted"),
                    "gen_ai.usage.input_tokens": int(50), "gen_ai.usage.output_tokens": int(5),
                    "gen_ai.usage.cost": "{\"doubleValue\":0.25}",
                ]),
        ]
        let body = """
            {"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"sdk"}}]},\
            "scopeSpans":[{"spans":[\(all.joined(separator: ","))]}]}]}
            """
        let read = try OTLPImporter.spans(in: try JSONValue.parse(body), file: "test", line: nil)
        try #require(read.rejected.isEmpty && read.read.count == 5)
        return Dictionary(uniqueKeysWithValues: read.read.map { ($0.span.name, $0) })
    }

    /// The orders spans reach the receiver in, by name, one request per inner list.
    static let orders: [(label: String, requests: [[String]])] = [
        ("one request", [["Adder", "generation", "chat SmolLM2", "add", "hosted"]]),
        ("generation first", [["Adder", "generation"], ["chat SmolLM2"], ["add"], ["hosted"]]),
        ("server's span first", [["chat SmolLM2"], ["generation"], ["add", "hosted"], ["Adder"]]),
        ("each as it ends", [["chat SmolLM2"], ["generation"], ["add"], ["hosted"], ["Adder"]]),
        ("generation alone first", [["generation"], ["chat SmolLM2"], ["Adder", "add", "hosted"]]),
    ]

    func check(_ make: (String) throws -> TraceTables) async throws {
        let spans = try Self.spans()
        for order in Self.orders {
            let tables = try make(
                order.label.replacingOccurrences(of: " ", with: "-").replacingOccurrences(of: "'", with: ""))
            try await GrowingTraceTests.ingest(order.requests.map { $0.map { spans[$0]! } }, into: tables)
            let summaries = try tables.traceSummaries()
            try #require(summaries.count == 1, "\(order.label)")
            let summary = summaries[0]
            // The server's call and the hosted one; the generation span's figures are left out.
            #expect(summary.inputTokens == 37 + 50, "\(order.label)")
            #expect(summary.outputTokens == 9 + 5, "\(order.label)")
            #expect(summary.cost == 0.25, "\(order.label)")
            // Steps: the server's call, the tool, the hosted call.
            #expect(summary.stepCount == 3, "\(order.label)")
            #expect(summary.spanCount == 5 && summary.awaitingParents == 0, "\(order.label)")
            let usage = try tables.modelUsage().sorted { ($0.model ?? "") < ($1.model ?? "") }
            #expect(usage.map(\.model) == ["SmolLM2", "hosted"], "\(order.label)")
            #expect(usage.map(\.calls) == [1, 1], "\(order.label)")
            #expect(usage.map(\.inputTokens) == [37, 50] && usage.map(\.outputTokens) == [9, 5], "\(order.label)")
            #expect(usage.map(\.cost) == [nil, 0.25], "\(order.label)")
            // The trace view and the list agree: the steps, and the cost with the server's call
            // priced ($1 a token in, $2 out: 37 + 18) beside the hosted call's recorded $0.25.
            try tables.setModelPrices([
                ModelPrice(
                    model: "SmolLM2", inputPerMTok: 1e6, outputPerMTok: 2e6, cachedInputPerMTok: nil, source: "test")
            ])
            let service = TraceService(tables: tables)
            let loaded = try service.load(summary.id)
            #expect(loaded.steps.map { loaded.spans[$0].name } == ["chat SmolLM2", "add", "hosted"], "\(order.label)")
            #expect(loaded.summary.cost == 55.25, "\(order.label)")
            #expect(try service.list().first?.cost == 55.25, "\(order.label)")
            // So does the trace model read back whole (what export and eval read).
            let trace = try TraceService(tables: tables).trace(summary.id)
            #expect(trace.usage.inputTokens == 87 && trace.usage.outputTokens == 14, "\(order.label)")
            #expect(trace.steps.count == 3, "\(order.label)")
        }
    }

    @Test func aCallRecordedByTheAgentAndTheServerCountsOnceOnSQLite() async throws {
        try await check { TraceTables(try GrowingTraceTests.workspace("nested-\($0)")) }
    }

    @Test func aCallRecordedByTheAgentAndTheServerCountsOnceOnPostgreSQL() async throws {
        try await check(GrowingTraceTests.postgresTables("nested"))
    }

    /// The rule is the whole trace's, not a path's: an import of the file holding the same spans
    /// stores the same summary as the spans sent one request at a time.
    @Test func anImportOfTheSameSpansStoresTheSameSummary() async throws {
        let spans = try Self.spans()
        let grown = TraceTables(try GrowingTraceTests.workspace("nested-grown"))
        try await GrowingTraceTests.ingest(
            [["chat SmolLM2"], ["generation"], ["add"], ["hosted"], ["Adder"]].map { $0.map { spans[$0]! } },
            into: grown)
        let whole = TraceTables(try GrowingTraceTests.workspace("nested-whole"))
        try await GrowingTraceTests.ingest([Array(spans.values)], into: whole)
        var a = try #require(try grown.traceSummaries().first)
        var b = try #require(try whole.traceSummaries().first)
        (a.id, b.id) = (0, 0)
        (a.importedAt, b.importedAt) = (Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 0))
        #expect(a == b)
    }
}
