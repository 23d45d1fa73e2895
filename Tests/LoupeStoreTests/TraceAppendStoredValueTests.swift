import Foundation
import LoupeStore
import Testing

/// Spans appended to a stored trace whose `metadata_json` was damaged by hand (a raw `UPDATE`
/// on a real workspace): the append merges the arriving metadata into the stored one, so it
/// stops with the trace and column named rather than merging over the damage as if it were
/// empty, and the trace stays as it was. Every case runs on SQLite and on a real PostgreSQL server.
@Suite struct TraceAppendStoredValueTests {
    private func damaged(_ backend: StoreBackend, _ label: String) throws -> (TraceTables, Int64) {
        let tables = TraceTables(try backend.database("append_\(label)"))
        let id = try #require(try tables.importTraces([WorkspaceTracesTests.trace()]).ids.first)
        try setMetadata(#"{"task":"#, trace: id, in: tables)
        return (tables, id)
    }

    private func setMetadata(_ text: String, trace id: Int64, in tables: TraceTables) throws {
        _ = try tables.database.writeStatements { sql in
            try sql.execute("UPDATE traces SET metadata_json = ? WHERE id = ?", [.text(text), .integer(id)])
        }
    }

    private func metadata(_ id: Int64, in tables: TraceTables) throws -> String? {
        try tables.database.readStatements { sql in
            try sql.execute("SELECT metadata_json FROM traces WHERE id = ?", [.integer(id)]).first?.text(
                "metadata_json")
        }
    }

    /// The arrivals that take each of the append's two paths: a span after the last stored one
    /// (written at the end) and a stored span sent again changed (the trace reordered).
    static let arrivals: [(String, [NewTrace.SpanRecord])] = [
        ("at the end", [WorkspaceTracesTests.span(4, "chat gpt-4o-mini", parent: "s0", tokens: (10, 1))]),
        (
            "reordered",
            [WorkspaceTracesTests.span(1, "chat gpt-4o-mini", parent: "s0", payload: #"{"output":[]}"#)]
        ),
    ]

    @Test(arguments: StoreBackend.allCases, [0, 1])
    func damagedMetadataStopsTheAppendNamedAndKeepsTheTrace(_ backend: StoreBackend, _ path: Int) throws {
        let (label, spans) = Self.arrivals[path]
        let (tables, id) = try damaged(backend, "\(path)")
        let before = try tables.spanRows(trace: id)
        var arrival = WorkspaceTracesTests.trace()
        arrival.metadataJSON = #"{"service.name":"agent"}"#
        arrival.spans = spans

        let error = #expect(throws: WorkspaceError.self, "\(label)") { try tables.appendSpans([arrival]) }
        #expect(
            error?.message.hasPrefix("unreadable metadata (trace \(id), column metadata_json): line 1, column ")
                == true, "\(label): \(error?.message ?? "")")
        // Nothing was written: the damaged value is there to repair, the spans are as they were.
        #expect(try metadata(id, in: tables) == #"{"task":"#)
        #expect(try tables.spanRows(trace: id) == before)

        // Repaired, the same arrival merges into it.
        try setMetadata(#"{"task":"arith"}"#, trace: id, in: tables)
        #expect(try tables.appendSpans([arrival]) > 0)
        let merged = try #require(try metadata(id, in: tables))
        #expect(merged.contains(#""task":"arith""#) && merged.contains(#""service.name":"agent""#), "\(merged)")
    }

    /// Valid JSON that is not an object is as damaged: merged over, it would be lost.
    @Test(arguments: StoreBackend.allCases) func metadataThatIsNotAnObjectStopsTheAppend(_ backend: StoreBackend)
        throws
    {
        let (tables, id) = try damaged(backend, "scalar")
        try setMetadata("42", trace: id, in: tables)
        var arrival = WorkspaceTracesTests.trace()
        arrival.spans = Self.arrivals[0].1
        let error = #expect(throws: WorkspaceError.self) { try tables.appendSpans([arrival]) }
        #expect(error?.message == "unreadable metadata (trace \(id), column metadata_json): not a JSON object")
        #expect(try metadata(id, in: tables) == "42")
    }
}
