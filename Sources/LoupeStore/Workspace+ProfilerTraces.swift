import Foundation
import GRDB
import LoupeBase

/// A profiler trace as stored: one file per rank (PyTorch/Kineto Chrome-trace JSON) read as one
/// profile, its events in `profiler_events`, its names in `profiler_names`.
package struct ProfilerTraceRecord: Codable, FetchableRecord, MutablePersistableRecord, Hashable, Sendable {
    package static let databaseTableName = "profiler_traces"
    package var id: Int64?
    package var name: String
    /// What makes two imports the same: each file's name, size and a hash of its ends.
    package var sourceKey: String
    /// Each file: its path, rank, and what it says of itself (JSON).
    package var filesJSON: String
    package var ranks: Int
    package var events: Int
    package var startNs: Int64
    package var endNs: Int64
    package var importedAt: Date

    package init(
        name: String, sourceKey: String, filesJSON: String, ranks: Int, events: Int, startNs: Int64, endNs: Int64,
        importedAt: Date = Date()
    ) {
        self.name = name
        self.sourceKey = sourceKey
        self.filesJSON = filesJSON
        self.ranks = ranks
        self.events = events
        self.startNs = startNs
        self.endNs = endNs
        self.importedAt = importedAt
    }

    package mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    enum CodingKeys: String, CodingKey {
        case id, name, ranks, events
        case sourceKey = "source_key"
        case filesJSON = "files_json"
        case startNs = "start_ns"
        case endNs = "end_ns"
        case importedAt = "imported_at"
    }
}

/// One stored profiler event; `kind` is LoupeProfiling's `ProfileEventKind` raw value, `name`
/// and `category` index the trace's names.
package struct ProfilerEventRow: Hashable, Sendable {
    package var rank: Int
    package var kind: Int
    package var name: Int32
    package var category: Int32
    package var startNs: Int64
    package var durationNs: Int64
    package var pid: Int64
    package var tid: Int64
    package var correlation: Int64
    package var externalID: Int64
    package var index: Int
    package var args: String?

    package init(
        rank: Int, kind: Int, name: Int32, category: Int32, startNs: Int64, durationNs: Int64, pid: Int64, tid: Int64,
        correlation: Int64, externalID: Int64, index: Int, args: String?
    ) {
        self.rank = rank
        self.kind = kind
        self.name = name
        self.category = category
        self.startNs = startNs
        self.durationNs = durationNs
        self.pid = pid
        self.tid = tid
        self.correlation = correlation
        self.externalID = externalID
        self.index = index
        self.args = args
    }
}

/// One lane of a stored profile's timeline: which stream or thread, and its level of detail as
/// LoupeProfiling's `TimelineLane` encodes it (`bins`, `longEvents`).
package struct ProfilerLaneRow: Hashable, Sendable {
    package var rank: Int
    package var tid: Int64
    package var pid: Int64
    package var isGPU: Bool
    package var events: Int
    package var startNs: Int64
    package var endNs: Int64
    package var bins: [UInt8]
    package var longEvents: [UInt8]

    package init(
        rank: Int, tid: Int64, pid: Int64, isGPU: Bool, events: Int, startNs: Int64, endNs: Int64, bins: [UInt8],
        longEvents: [UInt8]
    ) {
        self.rank = rank
        self.tid = tid
        self.pid = pid
        self.isGPU = isGPU
        self.events = events
        self.startNs = startNs
        self.endNs = endNs
        self.bins = bins
        self.longEvents = longEvents
    }
}

/// Writes one trace's events inside its import transaction.
package final class ProfilerEventWriter {
    private let db: Database
    private let statement: Statement
    private let traceID: Int64
    package private(set) var count = 0

    init(_ db: Database, traceID: Int64) throws {
        statement = try db.makeStatement(
            sql: """
                INSERT INTO profiler_events (trace_id, rank, kind, name, category, start_ns, dur_ns, pid, tid,
                  correlation, external_id, event_index, args)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        self.traceID = traceID
        self.db = db
    }

    /// Renumbers the events' ranks (`from` → `to`, all at once, so two files may swap).
    package func renumberRanks(_ map: [Int: Int]) throws {
        let changed = map.filter { $0.key != $0.value }
        guard !changed.isEmpty else { return }
        for (from, _) in changed {
            try db.execute(
                sql: "UPDATE profiler_events SET rank = ? WHERE trace_id = ? AND rank = ?",
                arguments: [-1 - from, traceID, from])
        }
        for (from, to) in changed {
            try db.execute(
                sql: "UPDATE profiler_events SET rank = ? WHERE trace_id = ? AND rank = ?",
                arguments: [to, traceID, -1 - from])
        }
    }

    package func insert(_ row: ProfilerEventRow) throws {
        try statement.execute(arguments: [
            traceID, row.rank, row.kind, row.name, row.category, row.startNs, row.durationNs, row.pid, row.tid,
            row.correlation == 0 ? nil : row.correlation, row.externalID == 0 ? nil : row.externalID, row.index,
            row.args,
        ])
        count += 1
    }
}

extension Workspace {
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
        try write { db in
            if let id = try Int64.fetchOne(
                db, sql: "SELECT id FROM profiler_traces WHERE source_key = ?", arguments: [sourceKey])
            {
                return (id, true)
            }
            // The row first (its id keys the events), completed once they are in.
            var placeholder = ProfilerTraceRecord(
                name: "", sourceKey: sourceKey, filesJSON: "[]", ranks: 0, events: 0, startNs: 0, endNs: 0)
            try placeholder.insert(db)
            let id = placeholder.id!
            let writer = try ProfilerEventWriter(db, traceID: id)
            var (trace, names, lanes) = try read(writer)
            trace.id = id
            trace.sourceKey = sourceKey
            try trace.update(db)
            let insertName = try db.makeStatement(
                sql: "INSERT INTO profiler_names (trace_id, id, name) VALUES (?, ?, ?)")
            for (index, name) in names.enumerated() { try insertName.execute(arguments: [id, index, name]) }
            try Self.insertLanes(lanes, traceID: id, db)
            return (id, false)
        }
    }

    package func profilerTraces() throws(WorkspaceError) -> [ProfilerTraceRecord] {
        try read { db in try ProfilerTraceRecord.order(Column("id").desc).fetchAll(db) }
    }

    package func profilerTrace(id: Int64) throws(WorkspaceError) -> ProfilerTraceRecord? {
        try read { db in try ProfilerTraceRecord.fetchOne(db, key: id) }
    }

    package func profilerNames(traceID: Int64) throws(WorkspaceError) -> [String] {
        try read { db in
            try String.fetchAll(
                db, sql: "SELECT name FROM profiler_names WHERE trace_id = ? ORDER BY id", arguments: [traceID])
        }
    }

    /// A trace's events in time order, of the given kinds (all when nil); `args` only when asked.
    package func profilerEvents(
        traceID: Int64, kinds: Set<Int>? = nil, withArgs: Bool = false
    ) throws(WorkspaceError) -> [ProfilerEventRow] {
        try read { db in
            var sql = """
                SELECT rank, kind, name, category, start_ns, dur_ns, pid, tid, correlation, external_id, event_index\
                \(withArgs ? ", args" : "") FROM profiler_events WHERE trace_id = ?
                """
            if let kinds { sql += " AND kind IN (\(kinds.sorted().map(String.init).joined(separator: ",")))" }
            sql += " ORDER BY rank, start_ns, event_index"
            return try Self.eventRows(db, sql: sql, arguments: [traceID], withArgs: withArgs)
        }
    }

    /// One event's `args` (JSON), by its rank and index in its file.
    package func profilerEventArgs(traceID: Int64, rank: Int, index: Int) throws(WorkspaceError) -> String? {
        try read { db in
            try String.fetchOne(
                db, sql: "SELECT args FROM profiler_events WHERE trace_id = ? AND rank = ? AND event_index = ?",
                arguments: [traceID, rank, index])
        }
    }

    private static func insertLanes(_ lanes: [ProfilerLaneRow], traceID: Int64, _ db: Database) throws {
        try db.execute(sql: "DELETE FROM profiler_lanes WHERE trace_id = ?", arguments: [traceID])
        let insert = try db.makeStatement(
            sql: """
                INSERT INTO profiler_lanes (trace_id, lane, rank, tid, pid, is_gpu, events, start_ns, end_ns, bins,
                  long_events) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        for (index, lane) in lanes.enumerated() {
            try insert.execute(arguments: [
                traceID, index, lane.rank, lane.tid, lane.pid, lane.isGPU, lane.events, lane.startNs, lane.endNs,
                Data(lane.bins), Data(lane.longEvents),
            ])
        }
    }

    /// A profile's timeline lanes in order; empty for a profile imported before lanes were kept.
    package func profilerLanes(traceID: Int64) throws(WorkspaceError) -> [ProfilerLaneRow] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT rank, tid, pid, is_gpu, events, start_ns, end_ns, bins, long_events FROM profiler_lanes
                    WHERE trace_id = ? ORDER BY lane
                    """, arguments: [traceID]
            ).map { row in
                let bins: Data = row[7]
                let long: Data = row[8]
                return ProfilerLaneRow(
                    rank: row[0], tid: row[1], pid: row[2], isGPU: row[3], events: row[4], startNs: row[5],
                    endNs: row[6], bins: [UInt8](bins), longEvents: [UInt8](long))
            }
        }
    }

    /// Keeps the lanes worked out for a profile imported before they were (replacing any).
    package func storeProfilerLanes(_ lanes: [ProfilerLaneRow], traceID: Int64) throws(WorkspaceError) {
        try write { db in try Self.insertLanes(lanes, traceID: traceID, db) }
    }

    /// The profile's default report as last worked out (JSON), nil before.
    package func profilerReport(traceID: Int64) throws(WorkspaceError) -> String? {
        try read { db in
            try String.fetchOne(db, sql: "SELECT report_json FROM profiler_traces WHERE id = ?", arguments: [traceID])
        }
    }

    package func storeProfilerReport(_ json: String, traceID: Int64) throws(WorkspaceError) {
        try write { db in
            try db.execute(sql: "UPDATE profiler_traces SET report_json = ? WHERE id = ?", arguments: [json, traceID])
        }
    }

    /// One rank's events that start in `from..<to`, of the given kinds, in time order: what a
    /// timeline window shows.
    package func profilerEvents(
        traceID: Int64, rank: Int, from: Int64, to: Int64, kinds: Set<Int>
    ) throws(WorkspaceError) -> [ProfilerEventRow] {
        try read { db in
            let sql = """
                SELECT rank, kind, name, category, start_ns, dur_ns, pid, tid, correlation, external_id, event_index
                FROM profiler_events WHERE trace_id = ? AND rank = ? AND start_ns >= ? AND start_ns < ?
                AND kind IN (\(kinds.sorted().map(String.init).joined(separator: ",")))
                ORDER BY start_ns, event_index
                """
            return try Self.eventRows(db, sql: sql, arguments: [traceID, rank, from, to])
        }
    }

    /// The event on stream or thread `tid` of `rank` that comes next after (`forward`) or just
    /// before the one at `start` and `index`, of the given kinds.
    package func profilerEvent(
        traceID: Int64, rank: Int, tid: Int64, kinds: Set<Int>, after start: Int64, index: Int, forward: Bool
    ) throws(WorkspaceError) -> ProfilerEventRow? {
        try read { db in
            let sql = """
                SELECT rank, kind, name, category, start_ns, dur_ns, pid, tid, correlation, external_id, event_index
                FROM profiler_events WHERE trace_id = ? AND rank = ? AND tid = ?
                AND kind IN (\(kinds.sorted().map(String.init).joined(separator: ",")))
                AND \(forward ? "(start_ns > ? OR (start_ns = ? AND event_index > ?))" : "(start_ns < ? OR (start_ns = ? AND event_index < ?))")
                ORDER BY start_ns \(forward ? "" : "DESC"), event_index \(forward ? "" : "DESC") LIMIT 1
                """
            return try Self.eventRows(db, sql: sql, arguments: [traceID, rank, tid, start, start, index]).first
        }
    }

    /// The events a query selects (its columns in `profilerEvents`' order, `args` last when
    /// `withArgs`).
    private static func eventRows(
        _ db: Database, sql: String, arguments: StatementArguments, withArgs: Bool = false
    ) throws -> [ProfilerEventRow] {
        var rows: [ProfilerEventRow] = []
        let cursor = try Row.fetchCursor(db, sql: sql, arguments: arguments)
        while let row = try cursor.next() {
            rows.append(
                ProfilerEventRow(
                    rank: row[0], kind: row[1], name: row[2], category: row[3], startNs: row[4], durationNs: row[5],
                    pid: row[6], tid: row[7], correlation: row[8] ?? 0, externalID: row[9] ?? 0, index: row[10],
                    args: withArgs ? row[11] : nil))
        }
        return rows
    }

    @discardableResult
    package func deleteProfilerTrace(id: Int64) throws(WorkspaceError) -> Bool {
        try write { db in try ProfilerTraceRecord.deleteOne(db, key: id) }
    }
}
