import Foundation
import LoupeBase

extension TraceTables {
    // MARK: - Append at the end

    /// A stored span as far as finding an arriving span's place needs it.
    private struct Node {
        var ordinal: Int
        var id: String
        var parent: String?
        var start: Int64
    }

    private static let nodeColumns = "ordinal, span_id, parent_span_id, start_ns"

    private static func nodes(_ rows: [SQLRow]) -> [Node] {
        rows.map { row in
            let v = row.values
            return Node(
                ordinal: Int(v[0].integer ?? -1), id: v[1].text ?? "", parent: v[2].text, start: v[3].integer ?? 0)
        }
    }

    /// Adds `arrival`'s spans to stored trace `id` after all of its spans, when that is where
    /// tree order puts each of them, in what those spans alone cost: a few lookups by key (the
    /// indexes of migration v26), their rows inserted, the trace's summary moved on by their
    /// columns, their model's usage row changed. Nil, having written nothing, when one of them
    /// is already stored (a resend or a replacement), is the parent a stored or earlier
    /// arriving span waits for, or belongs before a stored span: ``appendSpans(_:deferringCheckpoint:)``
    /// then reorders the trace from its columns.
    ///
    /// A span lands last when its parent is on the trace's rightmost path (the last root and
    /// its last descendants down to the last span) and it starts no earlier than that parent's
    /// last child, or, as a root (no parent, or one not stored), when it starts no earlier than
    /// the last root: siblings go by start time, ties in the order stored. Spans exported as
    /// they end arrive children first, before their parent, and so land last as roots waiting
    /// for it; the parent, arriving later, adopts them and takes the reordering path once.
    ///
    /// The summary columns are what ``appendSpans(_:deferringCheckpoint:)`` computes from the
    /// whole trace: counts and times moved on, tokens and cost added to the stored sums in tree
    /// order (the same doubles an import adds up), the name kept while the first root does.
    static func appendAtEnd(_ arrival: NewTrace, trace id: Int64, into sql: any SQLStatements) throws -> Int? {
        let traceID = SQLValue.integer(id)
        guard !arrival.spans.isEmpty,
            let trace = try sql.execute(
                """
                SELECT name, started_ns, ended_ns, span_count, step_count, error_count, input_tokens, output_tokens,
                  cost, models, awaiting_parents, metadata_json, session_id FROM traces WHERE id = ?
                """, [traceID]
            ).first
        else { return nil }
        let count = Int(trace.integer("span_count") ?? 0)
        guard count > 0,
            let last = nodes(
                try sql.execute(
                    "SELECT \(nodeColumns) FROM spans WHERE trace_id = ? ORDER BY ordinal DESC LIMIT 1", [traceID])
            ).first, last.ordinal == count - 1
        else { return nil }
        func stored(_ spanID: String) throws -> [Node] {
            nodes(
                try sql.execute(
                    "SELECT \(nodeColumns) FROM spans WHERE trace_id = ? AND span_id = ? LIMIT 2",
                    [traceID, .text(spanID)]))
        }
        func awaited(_ spanID: String) throws -> Bool {
            try !sql.execute(
                "SELECT 1 FROM spans WHERE trace_id = ? AND parent_span_id = ? LIMIT 1", [traceID, .text(spanID)]
            ).isEmpty
        }

        // The rightmost path, root first: each parent stored before its child, or the stored
        // order is not tree order and the reordering path repairs it.
        var path = [last]
        while let parent = path[0].parent, parent != path[0].id {
            let above = try stored(parent)
            if above.isEmpty { break }
            guard above.count == 1, above[0].ordinal < path[0].ordinal else { return nil }
            path.insert(above[0], at: 0)
        }
        var arrived = Set<String>()
        var waitedFor = Set<String>()
        var newlyAwaiting = 0
        for (offset, span) in arrival.spans.enumerated() {
            let row = span.row
            guard !arrived.contains(row.spanID), !waitedFor.contains(row.spanID), row.parentSpanID != row.spanID,
                try stored(row.spanID).isEmpty, try !awaited(row.spanID)
            else { return nil }
            let node = Node(ordinal: count + offset, id: row.spanID, parent: row.parentSpanID, start: row.startNs)
            if let parent = row.parentSpanID, let depth = path.lastIndex(where: { $0.id == parent }) {
                if depth + 1 < path.count && row.startNs < path[depth + 1].start { return nil }
                path.removeSubrange((depth + 1)...)
                path.append(node)
            } else {
                if let parent = row.parentSpanID {
                    // A parent stored off the rightmost path puts the span before others.
                    guard !arrived.contains(parent), try stored(parent).isEmpty else { return nil }
                    waitedFor.insert(parent)
                    newlyAwaiting += 1
                }
                guard row.startNs >= path[0].start else { return nil }
                path = [node]
            }
            arrived.insert(row.spanID)
        }

        // The summary moved on by the arriving spans, in tree order.
        func add<T: AdditiveArithmetic>(_ a: T?, _ b: T?) -> T? {
            a == nil && b == nil ? nil : (a ?? .zero) + (b ?? .zero)
        }
        let steps = Int(trace.integer("step_count") ?? 0)
        var work = steps
        if steps == count {
            // All spans are steps, or none is (then the step count is the span count).
            let none = try sql.execute(
                "SELECT 1 FROM spans WHERE trace_id = ? AND kind NOT IN ('agent', 'other') LIMIT 1", [traceID]
            ).isEmpty
            work = none ? 0 : count
        }
        var errors = Int(trace.integer("error_count") ?? 0)
        var started = trace.integer("started_ns") ?? 0
        var ended = trace.integer("ended_ns") ?? 0
        var inputTokens = trace.integer("input_tokens").map(Int.init)
        var outputTokens = trace.integer("output_tokens").map(Int.init)
        var cost = trace.real("cost")
        var models = Set((trace.text("models") ?? "").split(separator: "\u{1F}").map(String.init))
        for span in arrival.spans {
            let row = span.row
            if row.kind != "agent" && row.kind != "other" { work += 1 }
            if row.status == "error" { errors += 1 }
            started = min(started, row.startNs)
            ended = max(ended, row.endNs ?? row.startNs)
            inputTokens = add(inputTokens, row.inputTokens)
            outputTokens = add(outputTokens, row.outputTokens)
            cost = add(cost, row.cost)
            if let model = row.model { models.insert(model) }
        }
        let total = count + arrival.spans.count
        let before = JSONValue.objectIn(trace.text("metadata_json"))
        let after = before.merging(JSONValue.objectIn(arrival.metadataJSON)) { _, new in new }
        let name: String
        if try !sql.execute("SELECT 1 FROM spans WHERE trace_id = ? AND parent_span_id IS NULL LIMIT 1", [traceID])
            .isEmpty
        {
            name = trace.text("name") ?? arrival.summary.name
        } else if arrival.spans.contains(where: { $0.row.parentSpanID == nil }) {
            name = arrival.summary.name
        } else {
            name = after["service.name"]?.string ?? arrival.summary.externalID
        }

        try sql.insertRows(
            into: "spans", columns: spanColumns,
            rows: arrival.spans.enumerated().map { offset, span in
                var span = span
                span.row.ordinal = count + offset
                return [traceID] + spanValues(span).dropFirst()
            })
        let sortedModels = models.sorted()
        let values: [(String, SQLValue)] = [
            ("source_file", SQLValue(arrival.summary.sourceFile)), ("name", .text(name)),
            ("started_ns", .integer(started)), ("ended_ns", .integer(ended)),
            ("timed", SQLValue(arrival.summary.timed)), ("span_count", SQLValue(total)),
            ("step_count", SQLValue(work > 0 ? work : total)), ("error_count", SQLValue(errors)),
            ("input_tokens", SQLValue(inputTokens)), ("output_tokens", SQLValue(outputTokens)),
            ("cost", SQLValue(cost)), ("metadata_json", .text(JSONValue.object(after).compactJSON)),
            ("content_hash", .text(appendedHashPrefix + arrival.contentHash)),
            ("imported_at", SQLValue(arrival.summary.importedAt)),
            ("models", sortedModels.isEmpty ? .null : .text(sortedModels.joined(separator: "\u{1F}"))),
            ("session_id", trace.text("session_id").map(SQLValue.text) ?? SQLValue(arrival.summary.sessionID)),
            ("awaiting_parents", SQLValue(Int(trace.integer("awaiting_parents") ?? 0) + newlyAwaiting)),
        ]
        try sql.execute(
            "UPDATE traces SET \(values.map { "\($0.0) = ?" }.joined(separator: ", ")) WHERE id = ?",
            values.map(\.1) + [traceID])
        try addUsage(of: arrival.spans.map(\.row).filter { $0.kind == "llm" }, trace: id, into: sql)
        try addScores(arrival.scores, trace: id, into: sql)
        return arrival.spans.count
    }

    /// Adds model calls appended to trace `id` to its `trace_model_usage` rows, as the sums
    /// ``usageOf(traces:)`` makes would come out with them as the last rows summed: the trace's
    /// few rows (one per model) read, moved on, and written back.
    private static func addUsage(of calls: [SpanRow], trace id: Int64, into sql: any SQLStatements) throws {
        guard !calls.isEmpty else { return }
        struct Usage {
            var calls = 0
            var inputTokens: Int64?
            var outputTokens: Int64?
            var cacheReadTokens: Int64?
            var cost: Double?
            var costed = 0
        }
        func add<T: AdditiveArithmetic>(_ a: T?, _ b: T?) -> T? {
            a == nil && b == nil ? nil : (a ?? .zero) + (b ?? .zero)
        }
        var order: [String?] = []
        var usage: [String?: Usage] = [:]
        for row in try sql.execute(
            "SELECT model, calls, input_tokens, output_tokens, cache_read_tokens, cost, costed FROM trace_model_usage "
                + "WHERE trace_id = ?", [.integer(id)])
        {
            let v = row.values
            order.append(v[0].text)
            usage[v[0].text] = Usage(
                calls: Int(v[1].integer ?? 0), inputTokens: v[2].integer, outputTokens: v[3].integer,
                cacheReadTokens: v[4].integer, cost: v[5].real, costed: Int(v[6].integer ?? 0))
        }
        for call in calls {
            if usage[call.model] == nil { order.append(call.model) }
            var sums = usage[call.model] ?? Usage()
            sums.calls += 1
            sums.inputTokens = add(sums.inputTokens, call.inputTokens.map(Int64.init))
            sums.outputTokens = add(sums.outputTokens, call.outputTokens.map(Int64.init))
            sums.cacheReadTokens = add(sums.cacheReadTokens, call.cacheReadTokens.map(Int64.init))
            sums.cost = add(sums.cost, call.cost)
            if call.cost != nil { sums.costed += 1 }
            usage[call.model] = sums
        }
        try sql.execute("DELETE FROM trace_model_usage WHERE trace_id = ?", [.integer(id)])
        try sql.insertRows(
            into: "trace_model_usage",
            columns: [
                "trace_id", "model", "calls", "input_tokens", "output_tokens", "cache_read_tokens", "cost", "costed",
            ],
            rows: order.map { model in
                let sums = usage[model] ?? Usage()
                return [
                    .integer(id), SQLValue(model), SQLValue(sums.calls), SQLValue(sums.inputTokens),
                    SQLValue(sums.outputTokens), SQLValue(sums.cacheReadTokens), SQLValue(sums.cost),
                    SQLValue(sums.costed),
                ]
            })
    }

    /// Adds arriving scores that trace `id` does not hold yet. Scores carry no span id: a span
    /// replaced by one without its scores leaves them (OTLP exporters resend spans unchanged).
    static func addScores(_ scores: [NewTrace.ScoreRecord], trace id: Int64, into sql: any SQLStatements) throws {
        guard !scores.isEmpty else { return }
        let traceID = SQLValue.integer(id)
        var kept = try sql.execute(
            "SELECT scorer, value_json, answer, explanation FROM trace_scores WHERE trace_id = ?", [traceID]
        ).map { $0.values }
        var rows: [[SQLValue]] = []
        for score in scores {
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
            into: "trace_scores", columns: ["trace_id", "scorer", "value_json", "answer", "explanation"], rows: rows)
    }
}

extension JSONValue {
    /// The object `text` holds; empty when it holds none.
    static func objectIn(_ text: String?) -> JSONObject {
        text.flatMap { try? JSONValue.parse($0) }?.object ?? [:]
    }
}
