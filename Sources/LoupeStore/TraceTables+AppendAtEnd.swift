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
        var kind: String
    }

    private static let nodeColumns = "ordinal, span_id, parent_span_id, start_ns, kind"

    private static func nodes(_ rows: [SQLRow]) -> [Node] {
        rows.map { row in
            let v = row.values
            return Node(
                ordinal: Int(v[0].integer ?? -1), id: v[1].text ?? "", parent: v[2].text, start: v[3].integer ?? 0,
                kind: v[4].text ?? "")
        }
    }

    /// Adds `arrival`'s spans to stored trace `id` after all of its spans, when that is where
    /// tree order puts each of them, in what those spans alone cost: a few lookups by key (the
    /// indexes of migration v26), their rows inserted, the trace's summary moved on by their
    /// columns, their model's usage row changed. Nil, having written nothing, when one of them
    /// is already stored (a resend or a replacement), is the parent a stored or earlier
    /// arriving span waits for, belongs before a stored span, or is a model call with usage below
    /// another model call (whose usage and step then stop counting, ``NestedModelCalls``):
    /// ``appendSpans(_:deferringCheckpoint:)`` then reorders and sums the trace from its columns.
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
            let node = Node(
                ordinal: count + offset, id: row.spanID, parent: row.parentSpanID, start: row.startNs, kind: row.kind)
            if let parent = row.parentSpanID, let depth = path.lastIndex(where: { $0.id == parent }) {
                if depth + 1 < path.count && row.startNs < path[depth + 1].start { return nil }
                // A model call under another (the server's span of a request an agent's generation
                // span made) takes the outer one's usage and step out of the totals: summed again
                // from the columns, where the rule (NestedModelCalls) sees the whole tree.
                if row.kind == "llm",
                    NestedModelCalls.carriesUsage(
                        inputTokens: row.inputTokens, outputTokens: row.outputTokens, cost: row.cost),
                    path[...depth].contains(where: { $0.kind == "llm" })
                {
                    return nil
                }
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
        let before = try JSONValue.metadataObject(trace.text("metadata_json"), row: "trace \(id)")
        let after = before.merging(try arrival.metadataObject()) { _, new in new }
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
    /// ``ModelUsageSums`` makes of the whole trace would come out with them as the last rows
    /// summed: the trace's few rows (one per model) read, moved on, and written back.
    private static func addUsage(of calls: [SpanRow], trace id: Int64, into sql: any SQLStatements) throws {
        guard !calls.isEmpty else { return }
        var usage = try ModelUsageSums(trace: id, sql)
        for call in calls {
            usage.add(
                model: call.model, inputTokens: call.inputTokens, outputTokens: call.outputTokens,
                cacheReadTokens: call.cacheReadTokens, cost: call.cost)
        }
        try writeUsage([(id, usage)], into: sql)
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
    /// The object a trace's `metadata_json` holds, stored or arriving to be merged into it;
    /// empty when there is none. `row` names the trace. The column is the workspace's own, so a
    /// value that does not parse, or is not an object, is a damaged row: a ``StoredValueError``
    /// stops the append, since merging over it as empty would lose what it held for good.
    static func metadataObject(_ text: String?, row: String) throws(StoredValueError) -> JSONObject {
        guard let text else { return [:] }
        guard let object = try JSONValue.parse(stored: text, "metadata", row: row, column: "metadata_json").object
        else {
            throw StoredValueError("metadata", row: row, column: "metadata_json", reason: "not a JSON object")
        }
        return object
    }
}

extension NewTrace {
    /// The metadata arriving with these spans, to merge into the stored trace's.
    func metadataObject() throws(StoredValueError) -> JSONObject {
        try JSONValue.metadataObject(metadataJSON, row: "arriving trace \(summary.externalID)")
    }
}
