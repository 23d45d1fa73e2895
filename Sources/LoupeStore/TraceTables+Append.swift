import Foundation
import LoupeBase

extension TraceTables {
    // MARK: - Append

    /// Adds arriving spans to stored traces, each trace in one write transaction with the rest:
    /// what a receiver does with every request, so that a trace which grows over thousands of
    /// requests costs each request what its own spans cost, not what the whole trace does.
    ///
    /// Each element of `arrivals` is the arriving spans of one trace put together as a trace of
    /// their own (``NewTrace``, as an import would store them alone: their rows, payloads,
    /// scores, and the summary and metadata those spans alone give). A trace not stored yet is
    /// stored as it is. For a stored one (same format and external id):
    ///
    /// * Spans that land after every stored span (most requests of an agent exporting its steps
    ///   as they end) are added by ``appendAtEnd(_:trace:into:)`` in what they alone cost:
    ///   lookups by key, their rows, the summary moved on. The rest of this list is the path of
    ///   a request with a span that belongs before a stored one (a parent after its children, a
    ///   span sent again), which reads the whole trace's columns.
    /// * Span rows are inserted; a span id already stored is replaced in place, keeping its
    ///   ordinal's slot; a span identical to the stored one is not written. A request sent twice
    ///   therefore writes nothing at all. No other span's payload or source is read or written.
    /// * The ordinal is the span's place in tree order (parents first, siblings by start time,
    ///   spans whose parent is missing as roots, ties in the order they were stored), which one
    ///   arriving span can change for every span after it. The order is computed from the stored
    ///   columns alone (ordinal, span id, parent id, start time: a narrow read, no payload decoded)
    ///   with the same rule as `OTLPImporter.treeOrder`, and only rows whose ordinal changes are
    ///   written. Spans exported as they end arrive children first: each one lands after the
    ///   others and moves nothing; the root, arriving last, moves every stored span once.
    /// * The summary columns (times, counts, steps, errors, tokens, cost, models, spans awaiting
    ///   their parent) are computed from those same columns in tree order, exactly as an import
    ///   of the whole trace computes them, and so is the model usage; a model call that a span
    ///   below it records again counts once (``NestedModelCalls``). Metadata is merged (the
    ///   arriving spans' keys win, as `service.name` of the last sender does).
    /// * The name is the root's: the arriving spans' name when the root is one of them, the stored
    ///   name while the root stays the stored one, else the new root's name column (a stored
    ///   span's `loupe.trace.name` attribute lives only in its payload, so a stored span that
    ///   becomes the root by losing another root gives its span name). The session id, once
    ///   stored, stays; a trace without one takes the arriving spans'.
    /// * Scores carry no span id: arriving scores not stored yet are added. A span replaced by one
    ///   without its scores leaves them (OTLP exporters resend spans unchanged).
    /// * The content hash becomes a mark no import produces, so importing the whole trace from a
    ///   file later replaces it rather than calling it unchanged.
    ///
    /// On PostgreSQL a transaction-scoped advisory lock per trace serialises two receivers adding
    /// to one trace; on SQLite the write transaction does (one writer per file).
    ///
    /// - Parameter deferringCheckpoint: on SQLite, commit without the automatic checkpoint.
    /// - Returns: the span rows written (inserted, replaced or moved).
    package func appendSpans(
        _ arrivals: [NewTrace], deferringCheckpoint: Bool = false
    ) throws(WorkspaceError) -> Int {
        guard !arrivals.isEmpty else { return 0 }
        let dialect = database.dialect
        let body: @Sendable (any SQLStatements) throws -> Int = { sql in
            try arrivals.reduce(0) { $0 + (try Self.append($1, dialect: dialect, into: sql)) }
        }
        return try database.writeStatements(deferringCheckpoint: deferringCheckpoint, body)
    }

    /// A trace's spans as their stored columns that order the trace and make its summary, a
    /// column to an array: read on every request that adds to a trace, so a row costs a few
    /// appends, not a structure of strings copied around.
    struct Columns {
        var ordinal: [Int] = []
        var spanID: [String] = []
        var parentID: [String?] = []
        var kind: [String] = []
        var name: [String] = []
        var startNs: [Int64] = []
        var endNs: [Int64?] = []
        var isError: [Bool] = []
        var model: [String?] = []
        var inputTokens: [Int?] = []
        var outputTokens: [Int?] = []
        var cacheReadTokens: [Int?] = []
        var cost: [Double?] = []

        var count: Int { ordinal.count }

        static let sql =
            "SELECT ordinal, span_id, parent_span_id, kind, name, start_ns, end_ns, status, model, input_tokens, "
            + "output_tokens, cost, cache_read_tokens FROM spans WHERE trace_id = ? ORDER BY ordinal"

        /// The stored spans of trace `id`, in ordinal order, from the cursor by column position.
        init(trace id: Int64, _ sql: any SQLStatements) throws {
            try sql.forEachRow(Self.sql, [.integer(id)]) { r in
                ordinal.append(r.int(0) ?? 0)
                spanID.append(r.text(1) ?? "")
                parentID.append(r.text(2))
                kind.append(r.text(3) ?? "")
                name.append(r.text(4) ?? "")
                startNs.append(r.integer(5) ?? 0)
                endNs.append(r.integer(6))
                isError.append(r.text(7) == "error")
                model.append(r.text(8))
                inputTokens.append(r.int(9))
                outputTokens.append(r.int(10))
                cost.append(r.real(11))
                cacheReadTokens.append(r.int(12))
            }
        }

        /// Sets span `i` (or adds it, at the end) from an arriving row.
        mutating func set(_ i: Int, _ row: SpanRow) {
            if i == count {
                ordinal.append(row.ordinal)
                spanID.append(row.spanID)
                parentID.append(nil)
                kind.append("")
                name.append("")
                startNs.append(0)
                endNs.append(nil)
                isError.append(false)
                model.append(nil)
                inputTokens.append(nil)
                outputTokens.append(nil)
                cacheReadTokens.append(nil)
                cost.append(nil)
            }
            ordinal[i] = row.ordinal
            spanID[i] = row.spanID
            parentID[i] = row.parentSpanID
            kind[i] = row.kind
            name[i] = row.name
            startNs[i] = row.startNs
            endNs[i] = row.endNs
            isError[i] = row.status == "error"
            model[i] = row.model
            inputTokens[i] = row.inputTokens
            outputTokens[i] = row.outputTokens
            cacheReadTokens[i] = row.cacheReadTokens
            cost[i] = row.cost
        }
    }

    /// The span rows of `arrival` added to its stored trace; the rows written.
    private static func append(_ arrival: NewTrace, dialect: SQLDialect, into sql: any SQLStatements) throws -> Int {
        let format = arrival.summary.format
        let externalID = arrival.summary.externalID
        if dialect == .postgres {
            try sql.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", [.text(format + "\u{1F}" + externalID)])
        }
        guard
            let trace = try sql.execute(
                "SELECT id, name, metadata_json, session_id FROM traces WHERE format = ? AND external_id = ?",
                [.text(format), .text(externalID)]
            ).first, let id = trace.integer("id")
        else {
            var counts = TraceImportCounts()
            try store([arrival], leaseKind: nil, into: sql, counts: &counts)
            return arrival.spans.count
        }
        if let written = try appendAtEnd(arrival, trace: id, into: sql) { return written }
        let traceID = SQLValue.integer(id)
        // The narrow read: what orders the trace and sums it, in stored (tree) order.
        var nodes = try Columns(trace: id, sql)
        var slot: [String: Int] = [:]
        slot.reserveCapacity(nodes.count + arrival.spans.count)
        for i in 0..<nodes.count { slot[nodes.spanID[i]] = i }
        let previousRoot = nodes.parentID.firstIndex { $0 == nil }.map { nodes.spanID[$0] }

        // Arriving spans already stored: read in full (by primary key) to tell a resend.
        let matched = arrival.spans.compactMap { slot[$0.row.spanID].map { nodes.ordinal[$0] } }
        var stored: [Int: (row: [SQLValue], payload: String?, raw: SQLValue)] = [:]
        for start in stride(from: 0, to: matched.count, by: 8_000) {
            let chunk = matched[start..<min(matched.count, start + 8_000)]
            for row in try sql.execute(
                "SELECT \(spanRowColumns), payload_json, raw_zstd FROM spans WHERE trace_id = ? AND ordinal IN "
                    + "(\(StoreTable.placeholders(chunk.count)))",
                [traceID] + chunk.map { .integer(Int64($0)) })
            {
                let v = row.values
                stored[Int(v[0].integer ?? -1)] = (Array(v[1..<17]), v[17].text, v[18])
            }
        }
        var nextOrdinal = (nodes.ordinal.max() ?? -1) + 1
        var written: [(ordinal: Int, span: NewTrace.SpanRecord)] = []
        var replaced: [Int] = []
        for span in arrival.spans {
            var record = span
            if let at = slot[span.row.spanID] {
                let ordinal = nodes.ordinal[at]
                record.row.ordinal = ordinal
                if let before = stored[ordinal], before.row == Array(spanValues(record).dropFirst(2).prefix(16)),
                    before.payload == record.payloadJSON, before.raw == SQLValue(record.rawZstd)
                {
                    continue
                }
                replaced.append(ordinal)
                nodes.set(at, record.row)
                written.append((ordinal, record))
            } else {
                record.row.ordinal = nextOrdinal
                slot[span.row.spanID] = nodes.count
                nodes.set(nodes.count, record.row)
                written.append((nextOrdinal, record))
                nextOrdinal += 1
            }
        }
        let before = try JSONValue.metadataObject(trace.text("metadata_json"), row: "trace \(id)")
        let after = before.merging(try arrival.metadataObject()) { _, new in new }
        if written.isEmpty && after == before { return 0 }

        // Tree order over every span, stored and arriving, from their columns.
        let order = TreeOrder.indices(ids: nodes.spanID, parents: nodes.parentID, starts: nodes.startNs)
        let sequence = order.indices + order.unreached
        var place: [Int: Int] = [:]
        place.reserveCapacity(nodes.count)
        for (position, index) in sequence.enumerated() { place[nodes.ordinal[index]] = position }
        let arriving = Set(written.map(\.ordinal))
        // Stored rows not replaced whose place changes: moved through negative ordinals, since
        // (trace_id, ordinal) is the key and each row is checked as it is updated.
        var moves: [(from: Int, to: Int)] = []
        for (position, index) in sequence.enumerated() {
            let ordinal = nodes.ordinal[index]
            if ordinal != position && !arriving.contains(ordinal) { moves.append((ordinal, position)) }
        }
        if !replaced.isEmpty {
            for start in stride(from: 0, to: replaced.count, by: 8_000) {
                let chunk = replaced[start..<min(replaced.count, start + 8_000)]
                try sql.execute(
                    "DELETE FROM spans WHERE trace_id = ? AND ordinal IN (\(StoreTable.placeholders(chunk.count)))",
                    [traceID] + chunk.map { .integer(Int64($0)) })
            }
        }
        for start in stride(from: 0, to: moves.count, by: 4_000) {
            let chunk = moves[start..<min(moves.count, start + 4_000)]
            let cases = String(repeating: " WHEN ? THEN ?", count: chunk.count)
            try sql.execute(
                "UPDATE spans SET ordinal = -1 - (CASE ordinal\(cases) END) WHERE trace_id = ? AND ordinal IN "
                    + "(\(StoreTable.placeholders(chunk.count)))",
                chunk.flatMap { [.integer(Int64($0.from)), .integer(Int64($0.to))] } + [traceID]
                    + chunk.map { .integer(Int64($0.from)) })
        }
        if !moves.isEmpty {
            try sql.execute("UPDATE spans SET ordinal = -1 - ordinal WHERE trace_id = ? AND ordinal < 0", [traceID])
        }
        // Spans in a cycle of parents are reached from no root: kept as roots, as the import does.
        if !order.unreached.isEmpty {
            let ids = order.unreached.map { nodes.spanID[$0] }
            try sql.execute(
                "UPDATE spans SET parent_span_id = NULL WHERE trace_id = ? AND span_id IN "
                    + "(\(StoreTable.placeholders(ids.count)))", [traceID] + ids.map(SQLValue.text))
            for index in order.unreached { nodes.parentID[index] = nil }
        }
        try sql.insertRows(
            into: "spans", columns: spanColumns,
            rows: written.map { ordinal, span in
                var span = span
                span.row.ordinal = place[ordinal] ?? ordinal
                if order.unreached.contains(where: { nodes.spanID[$0] == span.row.spanID }) {
                    span.row.parentSpanID = nil
                }
                return [traceID] + spanValues(span).dropFirst()
            })

        // The summary, from the columns in tree order, as Trace and TraceService.record make it.
        let totals = Totals(nodes, in: sequence)
        let ids = Set(nodes.spanID)
        var errors = 0
        var awaiting = 0
        var started = Int64.max
        var ended = Int64.min
        var root: Int?
        var models = Set<String>()
        for i in sequence {
            if let model = nodes.model[i] { models.insert(model) }
            if nodes.isError[i] { errors += 1 }
            if let parent = nodes.parentID[i] {
                if !ids.contains(parent) { awaiting += 1 }
            } else if root == nil {
                root = i
            }
            started = min(started, nodes.startNs[i])
            ended = max(ended, nodes.endNs[i] ?? nodes.startNs[i])
        }
        let count = sequence.count
        let name: String
        if let root {
            let rootID = nodes.spanID[root]
            if arrival.spans.contains(where: { $0.row.spanID == rootID && $0.row.parentSpanID == nil }) {
                name = arrival.summary.name
            } else if rootID == previousRoot, let kept = trace.text("name") {
                name = kept
            } else {
                name = nodes.name[root]
            }
        } else {
            name = after["service.name"]?.string ?? externalID
        }
        let sortedModels = models.sorted()
        let values: [(String, SQLValue)] = [
            ("source_file", SQLValue(arrival.summary.sourceFile)), ("name", .text(name)),
            ("started_ns", .integer(count > 0 ? started : 0)), ("ended_ns", .integer(count > 0 ? ended : 0)),
            ("timed", SQLValue(arrival.summary.timed)), ("span_count", SQLValue(count)),
            ("step_count", SQLValue(totals.steps(of: count))), ("error_count", SQLValue(errors)),
            ("input_tokens", SQLValue(totals.inputTokens)), ("output_tokens", SQLValue(totals.outputTokens)),
            ("cost", SQLValue(totals.cost)),
            ("metadata_json", .text(JSONValue.object(after).compactJSON)),
            ("content_hash", .text(appendedHashPrefix + arrival.contentHash)),
            ("imported_at", SQLValue(arrival.summary.importedAt)),
            ("models", sortedModels.isEmpty ? .null : .text(sortedModels.joined(separator: "\u{1F}"))),
            ("session_id", trace.text("session_id").map(SQLValue.text) ?? SQLValue(arrival.summary.sessionID)),
            ("awaiting_parents", SQLValue(awaiting)),
        ]
        try sql.execute(
            "UPDATE traces SET \(values.map { "\($0.0) = ?" }.joined(separator: ", ")) WHERE id = ?",
            values.map(\.1) + [traceID])
        if written.contains(where: { $0.span.row.kind == "llm" }) || replaced.count > 0 {
            try writeUsage([(id, totals.usage)], into: sql)
        }
        try addScores(arrival.scores, trace: id, into: sql)
        return written.count + moves.count
    }

    /// What a grown trace's content hash starts with: no import makes it (theirs are hex).
    static let appendedHashPrefix = "appended "

    /// A span's row as ``spanColumns`` lists its columns, its trace id a placeholder.
    static func spanValues(_ span: NewTrace.SpanRecord) -> [SQLValue] {
        let r = span.row
        return [
            .null, SQLValue(r.ordinal), .text(r.spanID), SQLValue(r.parentSpanID), .text(r.kind), .text(r.name),
            .integer(r.startNs), SQLValue(r.endNs), .text(r.status), SQLValue(r.statusMessage), SQLValue(r.model),
            SQLValue(r.inputTokens), SQLValue(r.outputTokens), SQLValue(r.cacheReadTokens),
            SQLValue(r.cacheWriteTokens), SQLValue(r.reasoningTokens), SQLValue(r.cost), SQLValue(r.toolName),
            .text(span.payloadJSON), SQLValue(span.rawZstd),
        ]
    }
}
