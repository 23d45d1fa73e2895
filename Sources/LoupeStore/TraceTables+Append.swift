import Foundation
import GRDB
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
    ///   of the whole trace computes them; the model usage is summed again in SQL, as an import
    ///   sums it. Metadata is merged (the arriving spans' keys win, as `service.name` of the last
    ///   sender does).
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
        if let workspace = database as? Workspace {
            return try workspace.writeStatements(deferringCheckpoint: deferringCheckpoint, body)
        }
        return try database.writeStatements(body)
    }

    /// A stored span's columns that order the trace and make its summary.
    private struct Node {
        var ordinal: Int
        var spanID: String
        var parentID: String?
        var kind: String
        var name: String
        var startNs: Int64
        var endNs: Int64?
        var status: String
        var model: String?
        var inputTokens: Int?
        var outputTokens: Int?
        var cost: Double?

        init(_ row: SpanRow) {
            ordinal = row.ordinal
            spanID = row.spanID
            parentID = row.parentSpanID
            kind = row.kind
            name = row.name
            startNs = row.startNs
            endNs = row.endNs
            status = row.status
            model = row.model
            inputTokens = row.inputTokens
            outputTokens = row.outputTokens
            cost = row.cost
        }

        init(stored v: [SQLValue]) {
            ordinal = Int(v[0].integer ?? 0)
            spanID = v[1].text ?? ""
            parentID = v[2].text
            kind = v[3].text ?? ""
            name = v[4].text ?? ""
            startNs = v[5].integer ?? 0
            endNs = v[6].integer
            status = v[7].text ?? ""
            model = v[8].text
            inputTokens = v[9].integer.map(Int.init)
            outputTokens = v[10].integer.map(Int.init)
            cost = v[11].real ?? v[11].integer.map(Double.init)
        }
    }

    private static let nodeColumns =
        "ordinal, span_id, parent_span_id, kind, name, start_ns, end_ns, status, model, input_tokens, output_tokens, cost"

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
        let traceID = SQLValue.integer(id)
        // The narrow read: what orders the trace and sums it, in stored (tree) order.
        var nodes = try sql.execute(
            "SELECT \(nodeColumns) FROM spans WHERE trace_id = ? ORDER BY ordinal", [traceID]
        ).map { Node(stored: $0.values) }
        var slot: [String: Int] = [:]
        for (i, node) in nodes.enumerated() { slot[node.spanID] = i }
        let previousRoot = nodes.first { $0.parentID == nil }?.spanID

        // Arriving spans already stored: read in full (by primary key) to tell a resend.
        let matched = arrival.spans.compactMap { slot[$0.row.spanID].map { nodes[$0].ordinal } }
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
        var nextOrdinal = (nodes.map(\.ordinal).max() ?? -1) + 1
        var written: [(ordinal: Int, span: NewTrace.SpanRecord)] = []
        var replaced: [Int] = []
        for span in arrival.spans {
            var record = span
            if let at = slot[span.row.spanID] {
                let ordinal = nodes[at].ordinal
                record.row.ordinal = ordinal
                if let before = stored[ordinal], before.row == Array(spanValues(record).dropFirst(2).prefix(16)),
                    before.payload == record.payloadJSON, before.raw == SQLValue(record.rawZstd)
                {
                    continue
                }
                replaced.append(ordinal)
                nodes[at] = Node(record.row)
                written.append((ordinal, record))
            } else {
                record.row.ordinal = nextOrdinal
                slot[span.row.spanID] = nodes.count
                nodes.append(Node(record.row))
                written.append((nextOrdinal, record))
                nextOrdinal += 1
            }
        }
        let before = JSONValue.parseObject(trace.text("metadata_json"))
        let after = before.merging(JSONValue.parseObject(arrival.metadataJSON)) { _, new in new }
        if written.isEmpty && after == before { return 0 }

        // Tree order over every span, stored and arriving, from their columns.
        let order = treeOrder(nodes)
        var place: [Int: Int] = [:]
        for (position, index) in (order.indices + order.unreached).enumerated() {
            place[nodes[index].ordinal] = position
        }
        let arriving = Dictionary(uniqueKeysWithValues: written.map { ($0.ordinal, $0.span) })
        // Stored rows not replaced whose place changes: moved through negative ordinals, since
        // (trace_id, ordinal) is the key and each row is checked as it is updated.
        let moves = nodes.compactMap { node -> (from: Int, to: Int)? in
            guard arriving[node.ordinal] == nil, let to = place[node.ordinal], to != node.ordinal else { return nil }
            return (node.ordinal, to)
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
            let ids = order.unreached.map { nodes[$0].spanID }
            try sql.execute(
                "UPDATE spans SET parent_span_id = NULL WHERE trace_id = ? AND span_id IN "
                    + "(\(StoreTable.placeholders(ids.count)))", [traceID] + ids.map(SQLValue.text))
            for index in order.unreached { nodes[index].parentID = nil }
        }
        try sql.insertRows(
            into: "spans", columns: spanColumns,
            rows: written.map { ordinal, span in
                var span = span
                span.row.ordinal = place[ordinal] ?? ordinal
                if order.unreached.contains(where: { nodes[$0].spanID == span.row.spanID }) {
                    span.row.parentSpanID = nil
                }
                return [traceID] + spanValues(span).dropFirst()
            })

        // The summary, from the columns in tree order, as Trace and TraceService.record make it.
        let ordered = order.indices.map { nodes[$0] } + order.unreached.map { nodes[$0] }
        let ids = Set(ordered.map(\.spanID))
        func sum<T: AdditiveArithmetic>(_ values: [T?]) -> T? {
            values.reduce(nil as T?) { a, b in a == nil && b == nil ? nil : (a ?? .zero) + (b ?? .zero) }
        }
        let work = ordered.filter { $0.kind != "agent" && $0.kind != "other" }.count
        let root = ordered.first { $0.parentID == nil }
        let name: String
        if let root {
            if arrival.spans.contains(where: { $0.row.spanID == root.spanID && $0.row.parentSpanID == nil }) {
                name = arrival.summary.name
            } else if root.spanID == previousRoot, let kept = trace.text("name") {
                name = kept
            } else {
                name = root.name
            }
        } else {
            name = after["service.name"]?.string ?? externalID
        }
        let models = Set(ordered.compactMap(\.model)).sorted()
        let values: [(String, SQLValue)] = [
            ("source_file", SQLValue(arrival.summary.sourceFile)), ("name", .text(name)),
            ("started_ns", .integer(ordered.map(\.startNs).min() ?? 0)),
            ("ended_ns", .integer(ordered.map { $0.endNs ?? $0.startNs }.max() ?? 0)),
            ("timed", SQLValue(arrival.summary.timed)), ("span_count", SQLValue(ordered.count)),
            ("step_count", SQLValue(work > 0 ? work : ordered.count)),
            ("error_count", SQLValue(ordered.filter { $0.status == "error" }.count)),
            ("input_tokens", SQLValue(sum(ordered.map(\.inputTokens)))),
            ("output_tokens", SQLValue(sum(ordered.map(\.outputTokens)))),
            ("cost", SQLValue(sum(ordered.map(\.cost)))),
            ("metadata_json", .text(JSONValue.object(after).compactJSON)),
            ("content_hash", .text(appendedHashPrefix + arrival.contentHash)),
            ("imported_at", SQLValue(arrival.summary.importedAt)),
            ("models", models.isEmpty ? .null : .text(models.joined(separator: "\u{1F}"))),
            ("session_id", trace.text("session_id").map(SQLValue.text) ?? SQLValue(arrival.summary.sessionID)),
            (
                "awaiting_parents",
                SQLValue(ordered.filter { $0.parentID.map { !ids.contains($0) } ?? false }.count)
            ),
        ]
        try sql.execute(
            "UPDATE traces SET \(values.map { "\($0.0) = ?" }.joined(separator: ", ")) WHERE id = ?",
            values.map(\.1) + [traceID])
        if written.contains(where: { $0.span.row.kind == "llm" }) || replaced.count > 0 {
            try sql.execute("DELETE FROM trace_model_usage WHERE trace_id = ?", [traceID])
            try sql.execute(usageOf(traces: 1), [traceID])
        }
        if !arrival.scores.isEmpty {
            var kept = try sql.execute(
                "SELECT scorer, value_json, answer, explanation FROM trace_scores WHERE trace_id = ?", [traceID]
            ).map { $0.values }
            var rows: [[SQLValue]] = []
            for score in arrival.scores {
                let row: [SQLValue] = [
                    .text(score.scorer), .text(score.valueJSON), SQLValue(score.answer), SQLValue(score.explanation),
                ]
                if let at = kept.firstIndex(of: row) {
                    kept.remove(at: at)
                } else {
                    rows.append([traceID] + row)
                }
            }
            try sql.insertRows(
                into: "trace_scores", columns: ["trace_id", "scorer", "value_json", "answer", "explanation"], rows: rows
            )
        }
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

    /// `OTLPImporter.treeOrder` over stored columns: parents before children, siblings by start
    /// time then by `nodes`' order; spans whose parent is missing are roots; spans no root
    /// reaches (a cycle of parents) come last, in `nodes`' order. Indices into `nodes`.
    private static func treeOrder(_ nodes: [Node]) -> (indices: [Int], unreached: [Int]) {
        let ids = Set(nodes.map(\.spanID))
        var children: [String: [Int]] = [:]
        var roots: [Int] = []
        for (i, node) in nodes.enumerated() {
            if let parent = node.parentID, ids.contains(parent), parent != node.spanID {
                children[parent, default: []].append(i)
            } else {
                roots.append(i)
            }
        }
        func byStart(_ a: Int, _ b: Int) -> Bool {
            nodes[a].startNs != nodes[b].startNs ? nodes[a].startNs < nodes[b].startNs : a < b
        }
        var out: [Int] = []
        out.reserveCapacity(nodes.count)
        var seen = Set<String>()
        var stack = roots.sorted(by: byStart).reversed().map { $0 }
        while let i = stack.popLast() {
            guard seen.insert(nodes[i].spanID).inserted else { continue }
            out.append(i)
            stack += (children[nodes[i].spanID] ?? []).sorted(by: byStart).reversed()
        }
        let unreached = nodes.indices.filter { !seen.contains(nodes[$0].spanID) }
        return (out, unreached)
    }
}

extension JSONValue {
    /// The object `text` holds; empty when it holds none.
    fileprivate static func parseObject(_ text: String?) -> JSONObject {
        text.flatMap { try? JSONValue.parse($0) }?.object ?? [:]
    }
}
