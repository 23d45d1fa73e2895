import Foundation
import GRDB
import LoupeBase

extension Workspace {
    /// Stores traces in one transaction: a trace already stored (same format and external id)
    /// with the same content is left as is, with other content it is replaced. Either every
    /// trace lands or none does. `traces` is read once, inside the transaction: a sequence whose
    /// elements are still being made keeps the writer busy meanwhile.
    ///
    /// - Parameter leaseKind: when given, this process takes a lease of that kind on each new
    ///   trace in the same transaction, so no kill can leave a trace being recorded without one.
    /// - Parameter deferringCheckpoint: commit without SQLite's automatic checkpoint (see
    ///   ``write(deferringCheckpoint:_:)``); the caller checkpoints once it has answered.
    package func importTraces(
        _ traces: some Sequence<NewTrace> & Sendable, leaseKind: String? = nil, deferringCheckpoint: Bool = false
    ) throws(WorkspaceError) -> TraceImportCounts {
        try write(deferringCheckpoint: deferringCheckpoint) { db in
            var counts = TraceImportCounts()
            let insertSpan = try db.makeStatement(
                sql: """
                    INSERT INTO spans (trace_id, ordinal, span_id, parent_span_id, kind, name, start_ns, end_ns, status,
                      status_message, model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
                      reasoning_tokens, cost, tool_name, payload_json, raw_zstd)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
            func insert(_ trace: NewTrace, id: Int64) throws {
                for span in trace.spans {
                    let r = span.row
                    try insertSpan.execute(arguments: [
                        id, r.ordinal, r.spanID, r.parentSpanID, r.kind, r.name, r.startNs, r.endNs, r.status,
                        r.statusMessage, r.model, r.inputTokens, r.outputTokens, r.cacheReadTokens, r.cacheWriteTokens,
                        r.reasoningTokens, r.cost, r.toolName, span.payloadJSON, span.rawZstd,
                    ])
                }
                for score in trace.scores {
                    try db.execute(
                        sql:
                            "INSERT INTO trace_scores (trace_id, scorer, value_json, answer, explanation) VALUES (?, ?, ?, ?, ?)",
                        arguments: [id, score.scorer, score.valueJSON, score.answer, score.explanation])
                }
            }
            for trace in traces {
                let s = trace.summary
                if let existing = try Row.fetchOne(
                    db, sql: "SELECT id, content_hash FROM traces WHERE format = ? AND external_id = ?",
                    arguments: [s.format, s.externalID])
                {
                    if existing["content_hash"] as String == trace.contentHash {
                        counts.unchanged += 1
                        counts.ids.append(existing["id"])
                        continue
                    }
                    // Replaced in place: the id stays, so forks, eval rows and an open view of a
                    // trace being recorded live keep pointing at it.
                    let id: Int64 = existing["id"]
                    try db.execute(sql: "DELETE FROM spans WHERE trace_id = ?", arguments: [id])
                    try db.execute(sql: "DELETE FROM trace_scores WHERE trace_id = ?", arguments: [id])
                    try db.execute(
                        sql: """
                            UPDATE traces SET source_file = ?, name = ?, started_ns = ?, ended_ns = ?, timed = ?,
                              span_count = ?, step_count = ?, error_count = ?, input_tokens = ?, output_tokens = ?,
                              cost = ?, parent_trace_id = COALESCE(?, parent_trace_id),
                              fork_ordinal = COALESCE(?, fork_ordinal), metadata_json = ?, content_hash = ?,
                              imported_at = ?, models = ?, session_id = ?, awaiting_parents = ?
                            WHERE id = ?
                            """,
                        arguments: [
                            s.sourceFile, s.name, s.startedNs, s.endedNs, s.timed, s.spanCount, s.stepCount,
                            s.errorCount, s.inputTokens, s.outputTokens, s.cost, s.parentTraceID, s.forkOrdinal,
                            trace.metadataJSON, trace.contentHash, s.importedAt, Self.models(trace), s.sessionID,
                            s.awaitingParents, id,
                        ])
                    counts.replaced += 1
                    counts.ids.append(id)
                    try insert(trace, id: id)
                    continue
                }
                counts.added += 1
                try db.execute(
                    sql: """
                        INSERT INTO traces (external_id, format, source_file, name, started_ns, ended_ns, timed, span_count,
                          step_count, error_count, input_tokens, output_tokens, cost, parent_trace_id, fork_ordinal,
                          metadata_json, content_hash, imported_at, models, session_id, awaiting_parents)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        s.externalID, s.format, s.sourceFile, s.name, s.startedNs, s.endedNs, s.timed, s.spanCount,
                        s.stepCount, s.errorCount, s.inputTokens, s.outputTokens, s.cost, s.parentTraceID,
                        s.forkOrdinal, trace.metadataJSON, trace.contentHash, s.importedAt, Self.models(trace),
                        s.sessionID, s.awaitingParents,
                    ])
                let id = db.lastInsertedRowID
                counts.ids.append(id)
                try insert(trace, id: id)
                if let leaseKind { try JobLease.mine(kind: leaseKind, targetID: id).save(db) }
            }
            return counts
        }
    }

    private static let summaryColumns = """
        id, external_id, format, source_file, name, started_ns, ended_ns, timed, span_count, step_count, error_count,
        input_tokens, output_tokens, cost, parent_trace_id, fork_ordinal, imported_at, models, session_id,
        awaiting_parents
        """

    /// The models a trace's spans called, in name order, as the `models` column keeps them
    /// (separated by U+001F): read with the summary, not gathered from 50,000 spans each time.
    static func models(_ trace: NewTrace) -> String? {
        let models = Set(trace.spans.compactMap(\.row.model)).sorted()
        return models.isEmpty ? nil : models.joined(separator: "\u{1F}")
    }

    private static func summary(_ row: Row) -> TraceSummary {
        TraceSummary(
            id: row["id"], externalID: row["external_id"], format: row["format"], sourceFile: row["source_file"],
            name: row["name"], startedNs: row["started_ns"], endedNs: row["ended_ns"], timed: row["timed"],
            spanCount: row["span_count"], stepCount: row["step_count"], errorCount: row["error_count"],
            inputTokens: row["input_tokens"], outputTokens: row["output_tokens"], cost: row["cost"],
            parentTraceID: row["parent_trace_id"], forkOrdinal: row["fork_ordinal"], importedAt: row["imported_at"],
            models: (row["models"] as String?)?.split(separator: "\u{1F}").map(String.init) ?? [],
            sessionID: row["session_id"], awaitingParents: row["awaiting_parents"])
    }

    /// Every trace, oldest import first.
    package func traceSummaries() throws(WorkspaceError) -> [TraceSummary] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.summaryColumns) FROM traces ORDER BY id").map(Self.summary)
        }
    }

    package func traceSummary(id: Int64) throws(WorkspaceError) -> TraceSummary? {
        try read { db in
            try Row.fetchOne(db, sql: "SELECT \(Self.summaryColumns) FROM traces WHERE id = ?", arguments: [id])
                .map(Self.summary)
        }
    }

    /// A trace's spans in tree order, without payloads.
    package func spanRows(trace: Int64) throws(WorkspaceError) -> [SpanRow] {
        try read { db in
            // A cursor and columns by position: a long trace has tens of thousands of rows, and
            // copying each into a Row and looking its columns up by name was most of the time it
            // took to open.
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT ordinal, span_id, parent_span_id, kind, name, start_ns, end_ns, status, status_message, model,
                      input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, cost, tool_name
                    FROM spans WHERE trace_id = ? ORDER BY ordinal
                    """, arguments: [trace])
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

    /// One span's payload and raw source (read when its step is shown): the source as
    /// uncompressed JSON (workspaces from before v9) or zstd.
    package func spanPayload(trace: Int64, ordinal: Int) throws(WorkspaceError) -> StoredPayload? {
        try read { db in
            try Row.fetchOne(
                db, sql: "SELECT payload_json, raw_json, raw_zstd FROM spans WHERE trace_id = ? AND ordinal = ?",
                arguments: [trace, ordinal]
            ).map { StoredPayload(payload: $0["payload_json"], rawJSON: $0["raw_json"], rawZstd: $0["raw_zstd"]) }
        }
    }

    /// A trace's scores: scorer, value (JSON), answer, explanation.
    package func traceScores(trace: Int64) throws(WorkspaceError) -> [NewTrace.ScoreRecord] {
        try read { db in
            try Row.fetchAll(
                db,
                sql:
                    "SELECT scorer, value_json, answer, explanation FROM trace_scores WHERE trace_id = ? ORDER BY rowid",
                arguments: [trace]
            ).map {
                NewTrace.ScoreRecord(
                    scorer: $0["scorer"], valueJSON: $0["value_json"], answer: $0["answer"],
                    explanation: $0["explanation"])
            }
        }
    }
}

extension Workspace {
    package func modelPrices() throws(WorkspaceError) -> [ModelPrice] {
        try read { db in
            try Row.fetchAll(
                db,
                sql:
                    "SELECT model, input_per_mtok, output_per_mtok, cached_input_per_mtok, source FROM model_prices ORDER BY model"
            ).map {
                ModelPrice(
                    model: $0["model"], inputPerMTok: $0["input_per_mtok"], outputPerMTok: $0["output_per_mtok"],
                    cachedInputPerMTok: $0["cached_input_per_mtok"], source: $0["source"])
            }
        }
    }

    /// Sets prices (replacing a model's earlier one) in one transaction.
    package func setModelPrices(_ prices: [ModelPrice]) throws(WorkspaceError) {
        try write { db in
            for p in prices {
                try db.execute(
                    sql: """
                        INSERT OR REPLACE INTO model_prices (model, input_per_mtok, output_per_mtok, cached_input_per_mtok, source)
                        VALUES (?, ?, ?, ?, ?)
                        """, arguments: [p.model, p.inputPerMTok, p.outputPerMTok, p.cachedInputPerMTok, p.source])
            }
        }
    }

    /// Removes a model's price; false when it had none.
    package func removeModelPrice(_ model: String) throws(WorkspaceError) -> Bool {
        try write { db in
            try db.execute(sql: "DELETE FROM model_prices WHERE model = ?", arguments: [model])
            return db.changesCount > 0
        }
    }
}

extension Workspace {
    /// The LLM spans' tokens and recorded costs per trace and model.
    package func modelUsage() throws(WorkspaceError) -> [ModelUsage] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT trace_id, model, COUNT(*) AS calls, SUM(input_tokens) AS input, SUM(output_tokens) AS output,
                      SUM(cache_read_tokens) AS cached, SUM(cost) AS cost, COUNT(cost) AS costed
                    FROM spans WHERE kind = 'llm' GROUP BY trace_id, model ORDER BY trace_id, model
                    """
            ).map {
                ModelUsage(
                    trace: $0["trace_id"], model: $0["model"], calls: $0["calls"], inputTokens: $0["input"],
                    outputTokens: $0["output"], cacheReadTokens: $0["cached"], cost: $0["cost"], costed: $0["costed"])
            }
        }
    }
}

extension Workspace {
    /// Every span's payload and raw source, by ordinal (for export).
    package func spanPayloads(trace: Int64) throws(WorkspaceError) -> [StoredPayload] {
        try read { db in
            try Row.fetchAll(
                db, sql: "SELECT payload_json, raw_json, raw_zstd FROM spans WHERE trace_id = ? ORDER BY ordinal",
                arguments: [trace]
            ).map { StoredPayload(payload: $0["payload_json"], rawJSON: $0["raw_json"], rawZstd: $0["raw_zstd"]) }
        }
    }

    /// A trace's metadata (JSON object text).
    package func traceMetadata(trace: Int64) throws(WorkspaceError) -> String? {
        try read { db in
            try String.fetchOne(db, sql: "SELECT metadata_json FROM traces WHERE id = ?", arguments: [trace])
        }
    }
}

extension Workspace {
    /// The ordinals of a trace's spans whose name, tool, model, error or content (messages, tool
    /// arguments and results) contain `text`, ignoring ASCII case: the Traces panel's `/`.
    package func searchSpans(trace: Int64, text: String) throws(WorkspaceError) -> [Int] {
        let escaped = text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
        let pattern = "%" + escaped + "%"
        return try read { db in
            try Int.fetchAll(
                db,
                sql: """
                    SELECT ordinal FROM spans WHERE trace_id = ?2 AND (
                      name LIKE ?1 ESCAPE '\\' OR tool_name LIKE ?1 ESCAPE '\\' OR model LIKE ?1 ESCAPE '\\'
                      OR status_message LIKE ?1 ESCAPE '\\' OR payload_json LIKE ?1 ESCAPE '\\')
                    ORDER BY ordinal
                    """,
                arguments: [pattern, trace])
        }
    }
}

extension Workspace {
    /// What a trace that grows over many requests is put together again from: for each of
    /// `externalIDs` stored in `format`, its metadata and every span's source as written
    /// (zstd-compressed JSON), in tree order. Ids not stored are absent.
    package func storedSources(
        format: String, externalIDs: some Collection<String>
    ) throws(WorkspaceError) -> [String: StoredSources] {
        guard !externalIDs.isEmpty else { return [:] }
        let ids = Array(externalIDs)
        return try read { db in
            var out: [String: StoredSources] = [:]
            // SQLite binds at most 32,766 parameters; a request holds far fewer traces.
            for start in stride(from: 0, to: ids.count, by: 10_000) {
                let chunk = Array(ids[start..<min(ids.count, start + 10_000)])
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
                let rows = try Row.fetchCursor(
                    db,
                    sql: """
                        SELECT t.external_id, t.metadata_json, s.raw_zstd, s.raw_json FROM traces t
                        LEFT JOIN spans s ON s.trace_id = t.id
                        WHERE t.format = ? AND t.external_id IN (\(marks))
                        ORDER BY t.id, s.ordinal
                        """,
                    arguments: StatementArguments([format] + chunk))
                while let row = try rows.next() {
                    let id: String = row[0]
                    var stored = out[id] ?? StoredSources(metadataJSON: row[1], spans: [])
                    // Sources stored before v9 are JSON text: compressed here like the others.
                    if let raw: Data = row[2] {
                        stored.spans.append(raw)
                    } else if let text: String = row[3] {
                        stored.spans.append(Zstd.compress(text))
                    }
                    out[id] = stored
                }
            }
            return out
        }
    }
}
