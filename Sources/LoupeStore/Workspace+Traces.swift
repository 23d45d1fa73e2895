import Foundation
import GRDB
import LoupeBase

extension Workspace {
    /// The trace tables of this workspace (``TraceTables``).
    package var traces: TraceTables { TraceTables(self) }

    /// ``TraceTables/importTraces(_:leaseKind:deferringCheckpoint:)``.
    package func importTraces(
        _ traces: some Sequence<NewTrace> & Sendable, leaseKind: String? = nil, deferringCheckpoint: Bool = false
    ) throws(WorkspaceError) -> TraceImportCounts {
        try self.traces.importTraces(traces, leaseKind: leaseKind, deferringCheckpoint: deferringCheckpoint)
    }

    /// Every trace, oldest import first.
    package func traceSummaries() throws(WorkspaceError) -> [TraceSummary] { try traces.traceSummaries() }

    package func traceSummary(id: Int64) throws(WorkspaceError) -> TraceSummary? { try traces.traceSummary(id: id) }

    /// A trace's spans in tree order, without payloads.
    package func spanRows(trace: Int64) throws(WorkspaceError) -> [SpanRow] { try traces.spanRows(trace: trace) }

    /// ``TraceTables/spanRows(trace:)`` on SQLite.
    func spanRowsByPosition(trace: Int64) throws(WorkspaceError) -> [SpanRow] {
        try read { db in
            // A cursor and columns by position: a long trace has tens of thousands of rows, and
            // copying each into a Row and looking its columns up by name was most of the time it
            // took to open.
            let rows = try Row.fetchCursor(
                db,
                sql: "SELECT \(TraceTables.spanRowColumns) FROM spans WHERE trace_id = ? ORDER BY ordinal",
                arguments: [trace])
            var out: [SpanRow] = []
            while let r = try rows.next() {
                out.append(
                    SpanRow(
                        ordinal: r[0], spanID: r[1], parentSpanID: r[2], kind: r[3], name: r[4], startNs: r[5],
                        endNs: r[6], status: r[7], statusMessage: r[8], model: r[9], inputTokens: r[10],
                        outputTokens: r[11], cacheReadTokens: r[12], cacheWriteTokens: r[13], reasoningTokens: r[14],
                        cost: r[15], toolName: r[16]))
            }
            return out
        }
    }

    /// One span's payload and raw source (``TraceTables/spanPayload(trace:ordinal:)``).
    package func spanPayload(trace: Int64, ordinal: Int) throws(WorkspaceError) -> StoredPayload? {
        try traces.spanPayload(trace: trace, ordinal: ordinal)
    }

    /// A trace's scores: scorer, value (JSON), answer, explanation.
    package func traceScores(trace: Int64) throws(WorkspaceError) -> [NewTrace.ScoreRecord] {
        try traces.traceScores(trace: trace)
    }

    package func modelPrices() throws(WorkspaceError) -> [ModelPrice] { try traces.modelPrices() }

    /// Sets prices (replacing a model's earlier one) in one transaction.
    package func setModelPrices(_ prices: [ModelPrice]) throws(WorkspaceError) { try traces.setModelPrices(prices) }

    /// Removes a model's price; false when it had none.
    package func removeModelPrice(_ model: String) throws(WorkspaceError) -> Bool {
        try traces.removeModelPrice(model)
    }

    /// The LLM spans' tokens and recorded costs per trace and model.
    package func modelUsage() throws(WorkspaceError) -> [ModelUsage] { try traces.modelUsage() }

    /// Every span's payload and raw source, by ordinal (for export).
    package func spanPayloads(trace: Int64) throws(WorkspaceError) -> [StoredPayload] {
        try traces.spanPayloads(trace: trace)
    }

    /// A trace's metadata (JSON object text).
    package func traceMetadata(trace: Int64) throws(WorkspaceError) -> String? {
        try traces.traceMetadata(trace: trace)
    }

    /// ``TraceTables/searchSpans(trace:text:)``.
    package func searchSpans(trace: Int64, text: String) throws(WorkspaceError) -> [Int] {
        try traces.searchSpans(trace: trace, text: text)
    }
}
