import Foundation
import LoupeAgents
import LoupeBase
import LoupeKit
import LoupeStore
import Testing

/// Stored values decoded once at the Kit boundary: a row damaged by hand (a raw `UPDATE` on a
/// real workspace) is named by trace, span and column wherever it is read, instead of reading as
/// an empty span, and the rows around it read as before.
@Suite struct StoredValueDecodingTests {
    let workspace: Workspace
    let service: TraceService
    let browser: TracesBrowser
    /// The sample OTLP run: span 2 is the search tool's call, span 4 the calculator's failure.
    let trace: Int64

    init() throws {
        workspace = try KitFixtures.workspace("stored-values")
        service = TraceService(workspace: workspace)
        _ = try service.importFiles([
            KitFixtures.path("sample-data/traces/otlp-genai.jsonl"),
            KitFixtures.path("sample-data/traces/inspect-arith.json"),
        ])
        browser = TracesBrowser(workspace: workspace)
        trace = try #require(try service.list().first { $0.name == "invoke_agent cranfield-qa" }?.id)
    }

    private func damage(_ column: String, to value: SQLValue, ordinal: Int) throws {
        _ = try workspace.writeStatements { sql in
            try sql.execute(
                "UPDATE spans SET \(column) = ? WHERE trace_id = ? AND ordinal = ?",
                [value, .integer(trace), .integer(Int64(ordinal))])
        }
    }

    @Test func aPayloadThatDoesNotParseIsNamedByThePortAndStopsAnExport() throws {
        let before = try browser.span(trace: trace, ordinal: 2)
        #expect(before.unreadable.isEmpty && before.payload.tool?.name == "search")
        try damage("payload_json", to: .text(#"{"tool": {"name": "search""#), ordinal: 2)

        let detail = try browser.span(trace: trace, ordinal: 2)
        #expect(
            detail.unreadable.map(\.headline) == ["unreadable payload (trace \(trace), span 2, column payload_json)"])
        #expect(detail.unreadable.first?.reason.hasPrefix("line 1, column ") == true)
        #expect(detail.payload == SpanPayload())
        // The source is another column, and still reads.
        #expect(detail.raw?["name"] == "execute_tool search")
        // The spans beside it are untouched.
        #expect(try browser.span(trace: trace, ordinal: 1).unreadable.isEmpty)
        #expect(try browser.span(trace: trace, ordinal: 3).unreadable.isEmpty)

        // What reads one span or the whole trace for a caller that cannot show a warning in
        // place (MCP, export, diff) fails with the same place.
        let problem = "unreadable payload (trace \(trace), span 2, column payload_json)"
        let payload = #expect(throws: StoredValueError.self) { try service.payload(trace: trace, ordinal: 2) }
        #expect(payload?.headline == problem)
        let export = #expect(throws: StoredValueError.self) { try service.trace(trace) }
        #expect(export?.headline == problem)
        let diff = #expect(throws: StoredValueError.self) { try browser.diff(trace, trace) }
        #expect(diff?.headline == problem)
    }

    /// Valid JSON that is not the object the workspace writes (a number typed over it, say) is
    /// as unreadable as broken JSON: read as a payload it would be an empty span.
    @Test(arguments: [SQLValue.text("42"), .integer(42), .null, .blob([0xFF, 0xFE])])
    func aPayloadOfTheWrongShapeOrTypeIsUnreadable(value: SQLValue) throws {
        if value == .null {
            // The column is NOT NULL: the workspace refuses the damage itself.
            #expect(throws: (any Error).self) { try damage("payload_json", to: value, ordinal: 3) }
            return
        }
        try damage("payload_json", to: value, ordinal: 3)
        let detail = try browser.span(trace: trace, ordinal: 3)
        #expect(
            detail.unreadable.map(\.headline) == ["unreadable payload (trace \(trace), span 3, column payload_json)"])
    }

    @Test func aSourceThatDoesNotDecompressIsNamedAndThePayloadStillShows() throws {
        try damage("raw_zstd", to: .blob([0x28, 0xB5, 0x2F, 0xFD, 0, 1, 2, 255]), ordinal: 4)
        let detail = try browser.span(trace: trace, ordinal: 4)
        #expect(detail.unreadable.map(\.headline) == ["unreadable source (trace \(trace), span 4, column raw_zstd)"])
        #expect(detail.payload.tool?.error == "division by zero")
        #expect(detail.raw == nil)

        // A workspace from before v9 keeps the source as JSON text.
        try damage("raw_zstd", to: .null, ordinal: 4)
        try damage("raw_json", to: .text("{\"name\":"), ordinal: 4)
        #expect(
            try browser.span(trace: trace, ordinal: 4).unreadable.map(\.headline) == [
                "unreadable source (trace \(trace), span 4, column raw_json)"
            ])
    }

    /// A frame that decompresses to neither a span message nor JSON says why, at JSON's position.
    @Test func aSourceThatDecompressesToNeitherSaysWhy() throws {
        try damage("raw_zstd", to: .blob([UInt8](Zstd.compress(#"{"name": "execute_tool"#))), ordinal: 4)
        let detail = try browser.span(trace: trace, ordinal: 4)
        let error = try #require(detail.unreadable.first)
        #expect(detail.unreadable.count == 1)
        #expect(error.headline == "unreadable source (trace \(trace), span 4, column raw_zstd)")
        #expect(error.reason.hasPrefix("not JSON: line 1, column "), "\(error.reason)")
        #expect(detail.payload.tool?.error == "division by zero")
    }

    @Test func aScoreValueThatDoesNotParseIsNamedWhileTheTraceStillOpens() throws {
        let scored = try #require(try service.list().first { $0.format == "inspect" }?.id)
        let opened = try browser.open(scored)
        #expect(!opened.scores.isEmpty && opened.scores.allSatisfy { (try? $0.value.get()) != nil })
        _ = try workspace.writeStatements { sql in
            try sql.execute(
                "UPDATE trace_scores SET value_json = '[1,' WHERE rowid = (SELECT MIN(rowid) FROM trace_scores "
                    + "WHERE trace_id = ?)", [.integer(scored)])
        }
        let damaged = try browser.open(scored)
        #expect(damaged.spans == opened.spans)
        let problem = "unreadable score value (trace \(scored), score 0, column value_json)"
        guard case .failure(let error) = damaged.scores[0].value else {
            Issue.record("a damaged score value read back as \(damaged.scores[0].value)")
            return
        }
        #expect(error.headline == problem)
        #expect(damaged.scores.dropFirst().map(\.value) == opened.scores.dropFirst().map(\.value))
        let export = #expect(throws: StoredValueError.self) { try service.trace(scored) }
        #expect(export?.headline == problem)
    }

    @Test func traceMetadataThatDoesNotParseStopsAnExport() throws {
        _ = try workspace.writeStatements { sql in
            try sql.execute("UPDATE traces SET metadata_json = '{' WHERE id = ?", [.integer(trace)])
        }
        let export = #expect(throws: StoredValueError.self) { try service.trace(trace) }
        #expect(export?.headline == "unreadable metadata (trace \(trace), column metadata_json)")
        // JSON that is not an object is as damaged: exported, the trace would lose its metadata.
        _ = try workspace.writeStatements { sql in
            try sql.execute("UPDATE traces SET metadata_json = '[]' WHERE id = ?", [.integer(trace)])
        }
        let scalar = #expect(throws: StoredValueError.self) { try service.trace(trace) }
        #expect(scalar?.description == "unreadable metadata (trace \(trace), column metadata_json): not a JSON object")
    }

    /// The step pane's text fields are laid out when the span is read, not on each redraw.
    @Test func theSpansJSONTextIsLaidOutOnceWhenRead() throws {
        let search = try browser.span(trace: trace, ordinal: 2)
        let arguments = try #require(search.payload.tool?.arguments)
        #expect(search.toolArguments == (try JSONValue.parse(arguments)).prettyJSON)
        #expect(search.toolArguments?.contains("\n") == true)
        let text = SpanDetail(
            payload: SpanPayload(
                tool: ToolCall(id: nil, name: "t", arguments: "not json", result: #"[{"a": 1}]"#, error: nil),
                attributes: ["input.value": .string(#"{"q": "x"}"#), "plain": .string("{not json")]),
            raw: nil)
        // Arguments that are not JSON keep the importer's verdict, which the pane shows instead.
        #expect(text.payload.tool?.argumentsError != nil && text.toolArguments == nil)
        #expect(text.toolResult == JSONValue.array([.object(["a": .number(1)])]).prettyJSON)
        #expect(text.laidOutAttributes == ["input.value": JSONValue.object(["q": .string("x")]).prettyJSON])
    }
}
