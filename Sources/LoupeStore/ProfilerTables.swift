import Foundation

/// Profiler traces (Kineto, Nsight Systems): a trace's row, its events, names, timeline lanes
/// and last report, written once for both backends over a ``SQLDatabase`` (a SQLite
/// ``Workspace`` or a PostgreSQL workspace), so a team's profiles meet with its kernels and roofs.
///
/// Thread-safety: any thread; each method is one read or one transaction.
package struct ProfilerTables: Sendable {
    package let database: any SQLDatabase

    package init(_ database: any SQLDatabase) {
        self.database = database
    }

    /// Imports a profiler trace in one transaction: `read` streams its events into the writer
    /// and returns the trace's row and names. A trace with the same source key is left as it
    /// is (`unchanged`); a throw stores nothing.
    package func importProfilerTrace(
        sourceKey: String,
        _ read:
            @Sendable (ProfilerEventWriter) throws -> (
                trace: ProfilerTraceRecord, names: [String], lanes: [ProfilerLaneRow]
            )
    ) throws(WorkspaceError) -> (id: Int64, unchanged: Bool) {
        try database.writeStatements { sql in
            if let id = try sql.execute("SELECT id FROM profiler_traces WHERE source_key = ?", [.text(sourceKey)])
                .first?.integer("id")
            {
                return (id, true)
            }
            // The row first (its id keys the events), completed once they are in.
            let placeholder = ProfilerTraceRecord(
                name: "", sourceKey: sourceKey, filesJSON: "[]", ranks: 0, events: 0, startNs: 0, endNs: 0)
            guard let id = try sql.insert(placeholder, returningID: true).id else {
                throw WorkspaceError(.database, path: "profiler_traces", message: "the new profile was given no id")
            }
            let writer = try ProfilerEventWriter(sql, traceID: id)
            let (trace, names, lanes) = try read(writer)
            try writer.flush()
            try sql.execute(
                """
                UPDATE profiler_traces SET name = ?, files_json = ?, ranks = ?, events = ?, start_ns = ?, end_ns = ?,
                imported_at = ? WHERE id = ?
                """,
                [
                    .text(trace.name), .text(trace.filesJSON), .integer(Int64(trace.ranks)),
                    .integer(Int64(trace.events)), .integer(trace.startNs), .integer(trace.endNs),
                    SQLValue(date: trace.importedAt), .integer(id),
                ])
            try sql.insertRows(
                into: "profiler_names", columns: ["trace_id", "id", "name"],
                rows: names.enumerated().map { [.integer(id), .integer(Int64($0.offset)), .text($0.element)] })
            try Self.insertLanes(lanes, traceID: id, sql)
            return (id, false)
        }
    }

    package func profilerTraces() throws(WorkspaceError) -> [ProfilerTraceRecord] {
        try database.readStatements { sql in
            try sql.fetch(ProfilerTraceRecord.self, "SELECT * FROM profiler_traces ORDER BY id DESC")
        }
    }

    package func profilerTrace(id: Int64) throws(WorkspaceError) -> ProfilerTraceRecord? {
        try database.readStatements { sql in
            try sql.fetch(ProfilerTraceRecord.self, "SELECT * FROM profiler_traces WHERE id = ?", [.integer(id)]).first
        }
    }

    package func profilerNames(traceID: Int64) throws(WorkspaceError) -> [String] {
        try database.readStatements { sql in
            try sql.execute("SELECT name FROM profiler_names WHERE trace_id = ? ORDER BY id", [.integer(traceID)])
                .map { $0.text("name") ?? "" }
        }
    }

    /// A trace's events in time order, of the given kinds (all when nil); `args` only when asked.
    package func profilerEvents(
        traceID: Int64, kinds: Set<Int>? = nil, withArgs: Bool = false
    ) throws(WorkspaceError) -> [ProfilerEventRow] {
        var query = """
            SELECT rank, kind, name, category, start_ns, dur_ns, pid, tid, correlation, external_id, event_index\
            \(withArgs ? ", args" : "") FROM profiler_events WHERE trace_id = ?
            """
        if let kinds { query += " AND kind IN (\(Self.list(kinds)))" }
        query += " ORDER BY rank, start_ns, event_index"
        return try eventRows(query, [.integer(traceID)], withArgs: withArgs)
    }

    /// One event's `args` (JSON), by its rank and index in its file.
    package func profilerEventArgs(traceID: Int64, rank: Int, index: Int) throws(WorkspaceError) -> String? {
        try database.readStatements { sql in
            try sql.execute(
                "SELECT args FROM profiler_events WHERE trace_id = ? AND rank = ? AND event_index = ?",
                [.integer(traceID), .integer(Int64(rank)), .integer(Int64(index))]
            ).first?.text("args")
        }
    }

    private static func insertLanes(_ lanes: [ProfilerLaneRow], traceID: Int64, _ sql: any SQLStatements) throws {
        try sql.execute("DELETE FROM profiler_lanes WHERE trace_id = ?", [.integer(traceID)])
        try sql.insertRows(
            into: "profiler_lanes",
            columns: [
                "trace_id", "lane", "rank", "tid", "pid", "is_gpu", "events", "start_ns", "end_ns", "bins",
                "long_events",
            ],
            rows: lanes.enumerated().map { index, lane in
                [
                    .integer(traceID), .integer(Int64(index)), .integer(Int64(lane.rank)), .integer(lane.tid),
                    .integer(lane.pid), .integer(lane.isGPU ? 1 : 0), .integer(Int64(lane.events)),
                    .integer(lane.startNs), .integer(lane.endNs), .blob(lane.bins), .blob(lane.longEvents),
                ]
            })
    }

    /// A profile's timeline lanes in order; empty for a profile imported before lanes were kept.
    package func profilerLanes(traceID: Int64) throws(WorkspaceError) -> [ProfilerLaneRow] {
        try database.readStatements { sql in
            try sql.execute(
                """
                SELECT rank, tid, pid, is_gpu, events, start_ns, end_ns, bins, long_events FROM profiler_lanes
                WHERE trace_id = ? ORDER BY lane
                """, [.integer(traceID)]
            ).map { row in
                func bytes(_ column: String) -> [UInt8] {
                    if case .blob(let bytes) = row[column] { return bytes }
                    return []
                }
                return ProfilerLaneRow(
                    rank: Int(row.integer("rank") ?? 0), tid: row.integer("tid") ?? 0, pid: row.integer("pid") ?? 0,
                    isGPU: (row.integer("is_gpu") ?? 0) != 0, events: Int(row.integer("events") ?? 0),
                    startNs: row.integer("start_ns") ?? 0, endNs: row.integer("end_ns") ?? 0, bins: bytes("bins"),
                    longEvents: bytes("long_events"))
            }
        }
    }

    /// Keeps the lanes worked out for a profile imported before they were (replacing any).
    package func storeProfilerLanes(_ lanes: [ProfilerLaneRow], traceID: Int64) throws(WorkspaceError) {
        try database.writeStatements { sql in try Self.insertLanes(lanes, traceID: traceID, sql) }
    }

    /// The profile's default report as last worked out (JSON), nil before.
    package func profilerReport(traceID: Int64) throws(WorkspaceError) -> String? {
        try database.readStatements { sql in
            try sql.execute("SELECT report_json FROM profiler_traces WHERE id = ?", [.integer(traceID)]).first?.text(
                "report_json")
        }
    }

    package func storeProfilerReport(_ json: String, traceID: Int64) throws(WorkspaceError) {
        try database.writeStatements { sql in
            try sql.execute(
                "UPDATE profiler_traces SET report_json = ? WHERE id = ?", [.text(json), .integer(traceID)])
        }
    }

    /// One rank's events that start in `from..<to`, of the given kinds, in time order: what a
    /// timeline window shows.
    package func profilerEvents(
        traceID: Int64, rank: Int, from: Int64, to: Int64, kinds: Set<Int>
    ) throws(WorkspaceError) -> [ProfilerEventRow] {
        try eventRows(
            """
            SELECT rank, kind, name, category, start_ns, dur_ns, pid, tid, correlation, external_id, event_index
            FROM profiler_events WHERE trace_id = ? AND rank = ? AND start_ns >= ? AND start_ns < ?
            AND kind IN (\(Self.list(kinds))) ORDER BY start_ns, event_index
            """, [.integer(traceID), .integer(Int64(rank)), .integer(from), .integer(to)])
    }

    /// The event on stream or thread `tid` of `rank` that comes next after (`forward`) or just
    /// before the one at `start` and `index`, of the given kinds.
    package func profilerEvent(
        traceID: Int64, rank: Int, tid: Int64, kinds: Set<Int>, after start: Int64, index: Int, forward: Bool
    ) throws(WorkspaceError) -> ProfilerEventRow? {
        let query = """
            SELECT rank, kind, name, category, start_ns, dur_ns, pid, tid, correlation, external_id, event_index
            FROM profiler_events WHERE trace_id = ? AND rank = ? AND tid = ?
            AND kind IN (\(Self.list(kinds)))
            AND \(forward ? "(start_ns > ? OR (start_ns = ? AND event_index > ?))" : "(start_ns < ? OR (start_ns = ? AND event_index < ?))")
            ORDER BY start_ns \(forward ? "" : "DESC"), event_index \(forward ? "" : "DESC") LIMIT 1
            """
        return try eventRows(
            query,
            [
                .integer(traceID), .integer(Int64(rank)), .integer(tid), .integer(start), .integer(start),
                .integer(Int64(index)),
            ]
        ).first
    }

    @discardableResult
    package func deleteProfilerTrace(id: Int64) throws(WorkspaceError) -> Bool {
        try database.writeStatements { sql in
            try sql.changes("DELETE FROM profiler_traces WHERE id = ?", [.integer(id)]) > 0
        }
    }

    private static func list(_ kinds: Set<Int>) -> String { kinds.sorted().map(String.init).joined(separator: ",") }

    /// The events a query selects (its columns in `profilerEvents`' order, `args` last when
    /// `withArgs`). Read from the cursor (on SQLite in place): a trace can hold millions.
    private func eventRows(
        _ query: String, _ arguments: [SQLValue], withArgs: Bool = false
    ) throws(WorkspaceError) -> [ProfilerEventRow] {
        try database.readStatements { sql in
            var rows: [ProfilerEventRow] = []
            try sql.forEachRow(query, arguments) { row in
                func number(_ index: Int) -> Int64 { row.integer(index) ?? 0 }
                rows.append(
                    ProfilerEventRow(
                        rank: Int(number(0)), kind: Int(number(1)), name: Int32(number(2)),
                        category: Int32(number(3)), startNs: number(4), durationNs: number(5), pid: number(6),
                        tid: number(7), correlation: number(8), externalID: number(9), index: Int(number(10)),
                        args: withArgs ? row.text(11) : nil))
            }
            return rows
        }
    }
}
