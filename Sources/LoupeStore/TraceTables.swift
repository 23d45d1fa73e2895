import Foundation
import GRDB
import LoupeBase

/// The traces, their spans and scores, and the model prices: written once, in SQL both backends
/// run, over a ``SQLDatabase`` (a SQLite ``Workspace`` or a PostgreSQL workspace).
///
/// Two places stay SQLite's own, for speed: an import on a ``Workspace`` may commit without the
/// automatic checkpoint (a receiver checkpoints once it has answered), and a trace's span rows
/// are read there through a cursor by column position (a 50,000-span trace opens in a fraction of
/// the time a row-by-name read takes).
///
/// Thread-safety: any thread; each method is one read or one transaction.
package struct TraceTables: Sendable {
    package let database: any SQLDatabase

    package init(_ database: any SQLDatabase) {
        self.database = database
    }

    // MARK: - Import

    /// Stores traces in one transaction: a trace already stored (same format and external id)
    /// with the same content is left as is, with other content it is replaced. Either every
    /// trace lands or none does. `traces` is read once, inside the transaction: a sequence whose
    /// elements are still being made keeps the writer busy meanwhile.
    ///
    /// - Parameter leaseKind: when given, this process takes a lease of that kind on each new
    ///   trace in the same transaction, so no kill can leave a trace being recorded without one.
    /// - Parameter deferringCheckpoint: on SQLite, commit without the automatic checkpoint (see
    ///   ``Workspace/write(deferringCheckpoint:_:)``); the caller checkpoints once it has answered.
    package func importTraces(
        _ traces: some Sequence<NewTrace> & Sendable, leaseKind: String? = nil, deferringCheckpoint: Bool = false
    ) throws(WorkspaceError) -> TraceImportCounts {
        try database.writeStatements(deferringCheckpoint: deferringCheckpoint) { sql in
            try Self.importTraces(traces, leaseKind: leaseKind, into: sql)
        }
    }

    static let spanColumns = [
        "trace_id", "ordinal", "span_id", "parent_span_id", "kind", "name", "start_ns", "end_ns", "status",
        "status_message", "model", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
        "reasoning_tokens", "cost", "tool_name", "payload_json", "raw_zstd",
    ]

    static let traceColumns = [
        "external_id", "format", "source_file", "name", "started_ns", "ended_ns", "timed", "span_count", "step_count",
        "error_count", "input_tokens", "output_tokens", "cost", "parent_trace_id", "fork_ordinal", "metadata_json",
        "content_hash", "imported_at", "models", "session_id", "awaiting_parents",
    ]

    /// A trace's row as ``traceColumns`` lists its columns.
    static func traceValues(_ trace: NewTrace) -> [SQLValue] {
        let s = trace.summary
        return [
            .text(s.externalID), .text(s.format), SQLValue(s.sourceFile), .text(s.name), SQLValue(s.startedNs),
            SQLValue(s.endedNs), SQLValue(s.timed), SQLValue(s.spanCount), SQLValue(s.stepCount),
            SQLValue(s.errorCount), SQLValue(s.inputTokens), SQLValue(s.outputTokens), SQLValue(s.cost),
            SQLValue(s.parentTraceID), SQLValue(s.forkOrdinal), .text(trace.metadataJSON), .text(trace.contentHash),
            SQLValue(s.importedAt), SQLValue(models(trace)), SQLValue(s.sessionID), SQLValue(s.awaitingParents),
        ]
    }

    /// Traces stored a chunk at a time: at most this many traces, or this many spans, in one
    /// round of statements (what PostgreSQL's round trips are counted in).
    private static let chunkTraces = 256
    private static let chunkSpans = 8_192

    static func importTraces(
        _ traces: some Sequence<NewTrace>, leaseKind: String?, into sql: any SQLStatements
    ) throws -> TraceImportCounts {
        var counts = TraceImportCounts()
        var chunk: [NewTrace] = []
        var keys: Set<TraceKey> = []
        var spans = 0
        for trace in traces {
            let key = TraceKey(trace)
            // A trace given twice is stored after its first time, as a second import would be.
            if keys.contains(key) || chunk.count == chunkTraces || spans + trace.spans.count > chunkSpans {
                try store(chunk, leaseKind: leaseKind, into: sql, counts: &counts)
                chunk.removeAll(keepingCapacity: true)
                keys.removeAll(keepingCapacity: true)
                spans = 0
            }
            chunk.append(trace)
            keys.insert(key)
            spans += trace.spans.count
        }
        try store(chunk, leaseKind: leaseKind, into: sql, counts: &counts)
        return counts
    }

    /// A trace's identity in the workspace: its format and external id.
    private struct TraceKey: Hashable {
        var format: String
        var externalID: String

        init(_ trace: NewTrace) {
            format = trace.summary.format
            externalID = trace.summary.externalID
        }

        init(format: String, externalID: String) {
            self.format = format
            self.externalID = externalID
        }
    }

    /// Stores traces whose keys differ: one query finds those already stored, one statement adds
    /// the new ones, and their spans, usage and scores go in a statement each (a few on
    /// PostgreSQL for many rows).
    static func store(
        _ chunk: [NewTrace], leaseKind: String?, into sql: any SQLStatements, counts: inout TraceImportCounts
    ) throws {
        guard !chunk.isEmpty else { return }
        var stored: [TraceKey: (id: Int64, hash: String?)] = [:]
        for (format, group) in Dictionary(grouping: chunk, by: \.summary.format) {
            for row in try sql.execute(
                "SELECT id, external_id, content_hash FROM traces WHERE format = ? AND external_id IN "
                    + "(\(StoreTable.placeholders(group.count)))",
                [.text(format)] + group.map { .text($0.summary.externalID) })
            {
                guard let id = row.integer("id"), let externalID = row.text("external_id") else { continue }
                stored[TraceKey(format: format, externalID: externalID)] = (id, row.text("content_hash"))
            }
        }
        var ids: [Int64?] = []
        var written: [Int] = []
        var added: [Int] = []
        for (index, trace) in chunk.enumerated() {
            guard let existing = stored[TraceKey(trace)] else {
                ids.append(nil)
                added.append(index)
                continue
            }
            ids.append(existing.id)
            if existing.hash == trace.contentHash {
                counts.unchanged += 1
                continue
            }
            // Replaced in place: the id stays, so forks, eval rows and an open view of a trace
            // being recorded live keep pointing at it.
            let id = SQLValue.integer(existing.id)
            try sql.execute("DELETE FROM spans WHERE trace_id = ?", [id])
            try sql.execute("DELETE FROM trace_scores WHERE trace_id = ?", [id])
            try sql.execute("DELETE FROM trace_model_usage WHERE trace_id = ?", [id])
            let keep = ["parent_trace_id", "fork_ordinal"]
            let assignments = traceColumns.dropFirst(2).map { column in
                keep.contains(column) ? "\(column) = COALESCE(?, \(column))" : "\(column) = ?"
            }
            try sql.execute(
                "UPDATE traces SET \(assignments.joined(separator: ", ")) WHERE id = ?",
                Array(traceValues(trace).dropFirst(2)) + [id])
            counts.replaced += 1
            written.append(index)
        }
        if !added.isEmpty {
            let returned = try sql.insertRows(
                into: "traces", columns: traceColumns, rows: added.map { traceValues(chunk[$0]) },
                returning: ["id", "format", "external_id"])
            var given: [TraceKey: Int64] = [:]
            for row in returned {
                guard let id = row.integer("id"), let format = row.text("format"),
                    let externalID = row.text("external_id")
                else { continue }
                given[TraceKey(format: format, externalID: externalID)] = id
            }
            for index in added {
                guard let id = given[TraceKey(chunk[index])] else {
                    throw WorkspaceError(.database, path: "traces", message: "a new trace was given no id")
                }
                ids[index] = id
                if let leaseKind {
                    try sql.execute(
                        "DELETE FROM job_leases WHERE kind = ? AND target_id = ?", [.text(leaseKind), .integer(id)])
                    try sql.insert(JobLease.mine(kind: leaseKind, targetID: id))
                }
            }
            counts.added += added.count
            written += added
        }
        counts.ids += ids.map { $0! }
        written.sort()
        try sql.insertRows(
            into: "spans", columns: spanColumns,
            rows: written.flatMap { index in
                let id = SQLValue.integer(ids[index]!)
                return chunk[index].spans.map { span in
                    let r = span.row
                    return [
                        id, SQLValue(r.ordinal), .text(r.spanID), SQLValue(r.parentSpanID), .text(r.kind),
                        .text(r.name), .integer(r.startNs), SQLValue(r.endNs), .text(r.status),
                        SQLValue(r.statusMessage), SQLValue(r.model), SQLValue(r.inputTokens), SQLValue(r.outputTokens),
                        SQLValue(r.cacheReadTokens), SQLValue(r.cacheWriteTokens), SQLValue(r.reasoningTokens),
                        SQLValue(r.cost), SQLValue(r.toolName), .text(span.payloadJSON), SQLValue(span.rawZstd),
                    ]
                }
            })
        // Summed as every other path sums them: in tree order, a model call recorded again below
        // it once (the rows of a trace replaced in place were deleted above).
        try writeUsage(
            written.map { index in
                var sums = ModelUsageSums()
                sums.add(counted: chunk[index].spans.map(\.row))
                return (ids[index]!, sums)
            }, into: sql)
        try sql.insertRows(
            into: "trace_scores", columns: ["trace_id", "scorer", "value_json", "answer", "explanation"],
            rows: written.flatMap { index in
                chunk[index].scores.map {
                    [
                        .integer(ids[index]!), .text($0.scorer), .text($0.valueJSON), SQLValue($0.answer),
                        SQLValue($0.explanation),
                    ]
                }
            })
    }

    /// The models a trace's spans called, in name order, as the `models` column keeps them
    /// (separated by U+001F): read with the summary, not gathered from 50,000 spans each time.
    static func models(_ trace: NewTrace) -> String? {
        let models = Set(trace.spans.compactMap(\.row.model)).sorted()
        return models.isEmpty ? nil : models.joined(separator: "\u{1F}")
    }

    // MARK: - Traces

    private static let summaryColumns = """
        id, external_id, format, source_file, name, started_ns, ended_ns, timed, span_count, step_count, error_count,
        input_tokens, output_tokens, cost, parent_trace_id, fork_ordinal, imported_at, models, session_id,
        awaiting_parents
        """

    /// Read by position (``summaryColumns``' order) from the row as either backend gave it: no
    /// GRDB row made and no column looked up by name per trace, for a list of 20,000 traces is
    /// 400,000 cells.
    private static func summary(_ row: SQLRow) -> TraceSummary {
        let v = row.values
        return TraceSummary(
            id: v[0].integer ?? 0, externalID: v[1].text ?? "", format: v[2].text ?? "", sourceFile: v[3].text,
            name: v[4].text ?? "", startedNs: v[5].integer ?? 0, endedNs: v[6].integer ?? 0,
            timed: (v[7].integer ?? 0) != 0, spanCount: v[8].integer.map(Int.init) ?? 0,
            stepCount: v[9].integer.map(Int.init) ?? 0, errorCount: v[10].integer.map(Int.init) ?? 0,
            inputTokens: v[11].integer.map(Int.init), outputTokens: v[12].integer.map(Int.init), cost: v[13].real,
            parentTraceID: v[14].integer, forkOrdinal: v[15].integer.map(Int.init),
            importedAt: date(v[16]) ?? Date(timeIntervalSince1970: 0),
            models: v[17].text?.split(separator: "\u{1F}").map(String.init) ?? [], sessionID: v[18].text,
            awaitingParents: v[19].integer.map(Int.init) ?? 0)
    }

    /// A date as GRDB writes it ("2026-11-25 22:14:17.123", UTC), read without a calendar (the
    /// list reads one per trace); any other form through GRDB.
    package static func date(_ value: SQLValue) -> Date? {
        guard case .text(let text) = value else { return Date.fromDatabaseValue(value.databaseValue) }
        let b = Array(text.utf8)
        func digits(_ range: Range<Int>) -> Int? {
            var n = 0
            for i in range {
                let d = Int(b[i]) - 48
                guard d >= 0, d <= 9 else { return nil }
                n = n * 10 + d
            }
            return n
        }
        guard b.count == 23, b[4] == 45, b[7] == 45, b[10] == 32, b[13] == 58, b[16] == 58, b[19] == 46,
            let year = digits(0..<4), let month = digits(5..<7), let day = digits(8..<10),
            let hour = digits(11..<13), let minute = digits(14..<16), let second = digits(17..<19),
            let millisecond = digits(20..<23), (1...12).contains(month), (1...31).contains(day)
        else { return Date.fromDatabaseValue(value.databaseValue) }
        // Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's civil days).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        let seconds = Double(days * 86_400 + hour * 3_600 + minute * 60 + second) + Double(millisecond) / 1_000
        return Date(timeIntervalSince1970: seconds)
    }

    private static let summariesQuery = "SELECT \(summaryColumns) FROM traces ORDER BY id"
    private static let firstSummariesQuery = "SELECT \(summaryColumns) FROM traces ORDER BY id LIMIT ?"

    /// The queries the Traces panel's list runs over every trace (for `bench team`'s EXPLAIN).
    package static var listQueries: [(name: String, sql: String)] {
        [
            ("traces", summariesQuery), ("model usage", usageQuery),
            ("first 500 traces", firstSummariesQuery.replacingOccurrences(of: "?", with: "500")),
            ("their model usage", firstUsageQuery.replacingOccurrences(of: "?", with: "500")),
        ]
    }

    /// Every trace, oldest import first.
    package func traceSummaries() throws(WorkspaceError) -> [TraceSummary] {
        try database.readStatements { sql in try sql.execute(Self.summariesQuery).map(Self.summary) }
    }

    /// The first `limit` traces in import order, and how many there are in all: what the Traces
    /// panel shows while it reads the rest.
    package func firstTraceSummaries(_ limit: Int) throws(WorkspaceError) -> (traces: [TraceSummary], total: Int) {
        try database.readStatements { sql in
            let traces = try sql.execute(Self.firstSummariesQuery, [.integer(Int64(limit))]).map(Self.summary)
            let total = try sql.execute("SELECT COUNT(*) AS n FROM traces").first?.integer("n") ?? 0
            return (traces, Int(total))
        }
    }

    /// The column that numbers each trace row as it is inserted or changed (v25): a counter on
    /// SQLite, the writing transaction's id on PostgreSQL, set by triggers on both, so that every
    /// writer (imports, the receiver, a copy) numbers what it writes. It belongs to the database
    /// it is in: a copy leaves it out.
    package static let revisionColumn = "revision"

    /// SQLite's counter of trace revisions (one row, only ever counting up): the workspace file's
    /// own, so neither PostgreSQL's schema nor a copy has it.
    package static let revisionClock = "trace_revision_clock"

    /// The traces inserted or changed since the read that returned `watermark` (every trace when
    /// nil), their model usage, how many traces there are in all and the watermark for the next
    /// read: what a list kept between reads (the Traces panel while spans stream in) needs
    /// instead of every trace again.
    ///
    /// The watermark is read first, in the same consistent read. On SQLite it is one past the
    /// counter's last number (one writer at a time, so numbers are commit order). On PostgreSQL numbers
    /// are transaction ids, which commit out of order, so it is the read's snapshot: the first id
    /// not yet handed out and the ids still running. A row the read did not see was written by
    /// one of those or a later one, and nothing the read saw is read again.
    package func traceChanges(since watermark: TraceWatermark?) throws(WorkspaceError) -> TraceChanges {
        let snapshot =
            switch database.dialect {
            case .sqlite: "SELECT last + 1 AS next, '' AS running FROM \(Self.revisionClock)"
            case .postgres:
                """
                SELECT CAST(CAST(pg_snapshot_xmax(s) AS TEXT) AS BIGINT) AS next,
                  (SELECT string_agg(CAST(x AS TEXT), ',') FROM pg_snapshot_xip(s) AS x) AS running
                FROM (SELECT pg_current_snapshot() AS s) AS now
                """
            }
        return try database.readStatements { sql in
            let row = try sql.execute(snapshot).first
            let mark = TraceWatermark(
                next: row?.integer("next") ?? 0,
                running: (row?.text("running") ?? "").split(separator: ",").compactMap { Int64($0) })
            guard let watermark else {
                let traces = try sql.execute(Self.summariesQuery).map(Self.summary)
                let usage = try sql.execute(Self.usageQuery).map(Self.usage)
                return TraceChanges(traces: traces, usage: usage, total: traces.count, watermark: mark)
            }
            var condition = "\(Self.revisionColumn) >= ?"
            if !watermark.running.isEmpty {
                condition += " OR \(Self.revisionColumn) IN (\(StoreTable.placeholders(watermark.running.count)))"
            }
            let since = ([watermark.next] + watermark.running).map { SQLValue.integer($0) }
            let traces = try sql.execute(
                "SELECT \(Self.summaryColumns) FROM traces WHERE \(condition) ORDER BY id", since
            ).map(Self.summary)
            let usage =
                traces.isEmpty
                ? []
                : try sql.execute(
                    """
                    SELECT \(Self.usageColumns)
                    FROM trace_model_usage WHERE trace_id IN (SELECT id FROM traces WHERE \(condition))
                    ORDER BY trace_id, model
                    """, since
                ).map(Self.usage)
            let total = try sql.execute("SELECT COUNT(*) AS n FROM traces").first?.integer("n") ?? 0
            return TraceChanges(traces: traces, usage: usage, total: Int(total), watermark: mark)
        }
    }

    package func traceSummary(id: Int64) throws(WorkspaceError) -> TraceSummary? {
        try database.readStatements { sql in
            try sql.execute("SELECT \(Self.summaryColumns) FROM traces WHERE id = ?", [.integer(id)]).first
                .map(Self.summary)
        }
    }

    /// A trace's metadata (JSON object text).
    package func traceMetadata(trace: Int64) throws(WorkspaceError) -> String? {
        try database.readStatements { sql in
            try sql.execute("SELECT metadata_json FROM traces WHERE id = ?", [.integer(trace)]).first?.text(
                "metadata_json")
        }
    }

    // MARK: - Spans

    static let spanRowColumns = """
        ordinal, span_id, parent_span_id, kind, name, start_ns, end_ns, status, status_message, model,
        input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, cost, tool_name
        """

    /// A trace's spans in tree order, without payloads: read from the cursor by column position
    /// (``SQLStatements/forEachRow(_:_:_:)``), since a long trace has tens of thousands of rows
    /// and copying each into a row of its own and looking its columns up by name was most of
    /// the time it took to open.
    package func spanRows(trace: Int64) throws(WorkspaceError) -> [SpanRow] {
        try database.readStatements { sql in
            var out: [SpanRow] = []
            try sql.forEachRow(
                "SELECT \(Self.spanRowColumns) FROM spans WHERE trace_id = ? ORDER BY ordinal", [.integer(trace)]
            ) { r in
                out.append(
                    SpanRow(
                        ordinal: r.int(0) ?? 0, spanID: r.text(1) ?? "", parentSpanID: r.text(2), kind: r.text(3) ?? "",
                        name: r.text(4) ?? "", startNs: r.integer(5) ?? 0, endNs: r.integer(6), status: r.text(7) ?? "",
                        statusMessage: r.text(8), model: r.text(9), inputTokens: r.int(10), outputTokens: r.int(11),
                        cacheReadTokens: r.int(12), cacheWriteTokens: r.int(13), reasoningTokens: r.int(14),
                        cost: r.real(15), toolName: r.text(16)))
            }
            return out
        }
    }

    /// The columns as stored, whatever their type: GRDB's typed read stops the process on a
    /// blob that is not UTF-8 where text belongs. A value of the wrong type comes back as text
    /// (or bytes) that its decoder then refuses, naming the span and column.
    private static func payload(_ row: SQLRow) -> StoredPayload {
        func text(_ value: SQLValue) -> String? {
            switch value {
            case .null: nil
            case .text(let text): text
            case .blob(let bytes): String(decoding: bytes, as: UTF8.self)
            case .integer(let number): String(number)
            case .real(let number): String(number)
            }
        }
        func bytes(_ value: SQLValue) -> Data? {
            switch value {
            case .null: nil
            case .blob(let bytes): Data(bytes)
            default: text(value).map { Data($0.utf8) }
            }
        }
        return StoredPayload(
            payload: text(row["payload_json"]) ?? "", rawJSON: text(row["raw_json"]), rawZstd: bytes(row["raw_zstd"]))
    }

    /// One span's payload and raw source (read when its step is shown): the source as
    /// uncompressed JSON (workspaces from before v9) or zstd.
    package func spanPayload(trace: Int64, ordinal: Int) throws(WorkspaceError) -> StoredPayload? {
        try database.readStatements { sql in
            try sql.execute(
                "SELECT payload_json, raw_json, raw_zstd FROM spans WHERE trace_id = ? AND ordinal = ?",
                [.integer(trace), SQLValue(ordinal)]
            ).first.map(Self.payload)
        }
    }

    /// Every span's payload and raw source, by ordinal (for export).
    package func spanPayloads(trace: Int64) throws(WorkspaceError) -> [StoredPayload] {
        try database.readStatements { sql in
            try sql.execute(
                "SELECT payload_json, raw_json, raw_zstd FROM spans WHERE trace_id = ? ORDER BY ordinal",
                [.integer(trace)]
            ).map(Self.payload)
        }
    }

    /// A trace's scores: scorer, value (JSON), answer, explanation.
    package func traceScores(trace: Int64) throws(WorkspaceError) -> [NewTrace.ScoreRecord] {
        try database.readStatements { sql in
            try sql.execute(
                "SELECT scorer, value_json, answer, explanation FROM trace_scores WHERE trace_id = ? ORDER BY rowid",
                [.integer(trace)]
            ).map {
                NewTrace.ScoreRecord(
                    scorer: $0.text("scorer") ?? "", valueJSON: $0.text("value_json") ?? "null",
                    answer: $0.text("answer"), explanation: $0.text("explanation"))
            }
        }
    }

    /// The ordinals of a trace's spans whose name, tool, model, error or content (messages, tool
    /// arguments and results) contain `text`, ignoring case: the Traces panel's `/`.
    package func searchSpans(trace: Int64, text: String) throws(WorkspaceError) -> [Int] {
        let escaped = text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
        let pattern = SQLValue.text("%" + escaped + "%")
        let like = database.dialect.likeIgnoringCase
        let columns = ["name", "tool_name", "model", "status_message", "payload_json"]
        let test = columns.map { "\($0) \(like) ? ESCAPE '\\'" }.joined(separator: " OR ")
        return try database.readStatements { sql in
            try sql.execute(
                "SELECT ordinal FROM spans WHERE trace_id = ? AND (\(test)) ORDER BY ordinal",
                [.integer(trace)] + Array(repeating: pattern, count: columns.count)
            ).compactMap { $0.integer("ordinal").map(Int.init) }
        }
    }

    /// The migration that keeps each trace's model usage (``modelUsage()``) in a table.
    package static let usageMigration = "v24: each trace's model usage kept beside it"

    /// Sums the LLM spans of each trace per model into `trace_model_usage` (`INSERT … SELECT`,
    /// which both backends run, casting the sums into the integer columns): the migration's
    /// backfill, as it shipped. Traces stored since sum in ``ModelUsageSums``, which counts a model
    /// call recorded again below it once.
    private static let usageSums = """
        INSERT INTO trace_model_usage (trace_id, model, calls, input_tokens, output_tokens, cache_read_tokens, cost,
          costed)
        SELECT trace_id, model, COUNT(*), SUM(input_tokens), SUM(output_tokens), SUM(cache_read_tokens), SUM(cost),
          COUNT(cost)
        FROM spans WHERE kind = 'llm'
        """

    /// Fills `trace_model_usage` from every trace's spans: the migration's, on SQLite and on
    /// PostgreSQL alike.
    package static let usageBackfill = usageSums + " GROUP BY trace_id, model"

    /// What ``usage(_:)`` reads of a `trace_model_usage` row.
    private static let usageColumns =
        "trace_id, model, calls, input_tokens, output_tokens, cache_read_tokens, cost, costed"

    private static let usageQuery = """
        SELECT \(usageColumns)
        FROM trace_model_usage ORDER BY trace_id, model
        """

    /// The usage of the traces with ids up to the `?`th (those ``firstTraceSummaries(_:)`` reads).
    private static let firstUsageQuery = """
        SELECT \(usageColumns)
        FROM trace_model_usage
        WHERE trace_id <= (SELECT COALESCE(MAX(id), 0) FROM (SELECT id FROM traces ORDER BY id LIMIT ?) AS first)
        ORDER BY trace_id, model
        """

    /// The LLM spans' tokens and recorded costs per trace and model.
    package func modelUsage() throws(WorkspaceError) -> [ModelUsage] {
        try database.readStatements { sql in try sql.execute(Self.usageQuery).map(Self.usage) }
    }

    /// The model usage of the first `limit` traces in import order.
    package func modelUsage(ofFirst limit: Int) throws(WorkspaceError) -> [ModelUsage] {
        try database.readStatements { sql in
            try sql.execute(Self.firstUsageQuery, [.integer(Int64(limit))]).map(Self.usage)
        }
    }

    private static func usage(_ row: SQLRow) -> ModelUsage {
        ModelUsage(
            trace: row.integer("trace_id") ?? 0, model: row.text("model"), calls: Int(row.integer("calls") ?? 0),
            inputTokens: row.integer("input_tokens").map(Int.init),
            outputTokens: row.integer("output_tokens").map(Int.init),
            cacheReadTokens: row.integer("cache_read_tokens").map(Int.init), cost: row.real("cost"),
            costed: Int(row.integer("costed") ?? 0))
    }

    // MARK: - Model prices

    package func modelPrices() throws(WorkspaceError) -> [ModelPrice] {
        try database.readStatements { sql in
            try sql.execute(
                "SELECT model, input_per_mtok, output_per_mtok, cached_input_per_mtok, source FROM model_prices ORDER BY model"
            ).map {
                ModelPrice(
                    model: $0.text("model") ?? "", inputPerMTok: $0.real("input_per_mtok") ?? 0,
                    outputPerMTok: $0.real("output_per_mtok") ?? 0,
                    cachedInputPerMTok: $0.real("cached_input_per_mtok"),
                    source: $0.text("source") ?? "")
            }
        }
    }

    /// Sets prices (replacing a model's earlier one) in one transaction.
    package func setModelPrices(_ prices: [ModelPrice]) throws(WorkspaceError) {
        try database.writeStatements { sql in
            for p in prices {
                try sql.execute(
                    """
                    INSERT INTO model_prices (model, input_per_mtok, output_per_mtok, cached_input_per_mtok, source)
                    VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (model) DO UPDATE SET input_per_mtok = excluded.input_per_mtok,
                      output_per_mtok = excluded.output_per_mtok, cached_input_per_mtok = excluded.cached_input_per_mtok,
                      source = excluded.source
                    """,
                    [
                        .text(p.model), .real(p.inputPerMTok), .real(p.outputPerMTok), SQLValue(p.cachedInputPerMTok),
                        .text(p.source),
                    ])
            }
        }
    }

    /// Removes a model's price; false when it had none.
    package func removeModelPrice(_ model: String) throws(WorkspaceError) -> Bool {
        try database.writeStatements { sql in
            try sql.changes("DELETE FROM model_prices WHERE model = ?", [.text(model)]) > 0
        }
    }
}
