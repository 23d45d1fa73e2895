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

/// Writes one trace's events inside its import transaction (a Kineto trace holds hundreds of
/// thousands): on SQLite one prepared statement run per row, straight from the row's values; on
/// PostgreSQL 1,000 rows kept and sent as one statement.
package final class ProfilerEventWriter {
    private let sql: any SQLStatements
    /// SQLite's prepared insert; nil on PostgreSQL.
    private let statement: Statement?
    private let traceID: Int64
    private var pending: [[SQLValue]] = []
    package private(set) var count = 0

    /// Rows kept before they are written: 1,000 rows of 13 values is one PostgreSQL statement.
    private static let batch = 1_000
    private static let columns = [
        "trace_id", "rank", "kind", "name", "category", "start_ns", "dur_ns", "pid", "tid", "correlation",
        "external_id", "event_index", "args",
    ]

    init(_ sql: any SQLStatements, traceID: Int64) throws {
        self.sql = sql
        self.traceID = traceID
        statement = try (sql as? GRDBStatements).map {
            try $0.db.makeStatement(
                sql: "INSERT INTO profiler_events (\(Self.columns.joined(separator: ", "))) VALUES ("
                    + StoreTable.placeholders(Self.columns.count) + ")")
        }
        if statement == nil { pending.reserveCapacity(Self.batch) }
    }

    /// Renumbers the events' ranks (`from` → `to`, all at once, so two files may swap).
    package func renumberRanks(_ map: [Int: Int]) throws {
        try flush()
        let changed = map.filter { $0.key != $0.value }
        guard !changed.isEmpty else { return }
        for (from, _) in changed {
            try sql.execute(
                "UPDATE profiler_events SET rank = ? WHERE trace_id = ? AND rank = ?",
                [.integer(Int64(-1 - from)), .integer(traceID), .integer(Int64(from))])
        }
        for (from, to) in changed {
            try sql.execute(
                "UPDATE profiler_events SET rank = ? WHERE trace_id = ? AND rank = ?",
                [.integer(Int64(to)), .integer(traceID), .integer(Int64(-1 - from))])
        }
    }

    package func insert(_ row: ProfilerEventRow) throws {
        count += 1
        let correlation = row.correlation == 0 ? nil : row.correlation
        let external = row.externalID == 0 ? nil : row.externalID
        if let statement {
            try statement.execute(arguments: [
                traceID, row.rank, row.kind, row.name, row.category, row.startNs, row.durationNs, row.pid, row.tid,
                correlation, external, row.index, row.args,
            ])
            return
        }
        pending.append([
            .integer(traceID), .integer(Int64(row.rank)), .integer(Int64(row.kind)), .integer(Int64(row.name)),
            .integer(Int64(row.category)), .integer(row.startNs), .integer(row.durationNs), .integer(row.pid),
            .integer(row.tid), SQLValue(correlation), SQLValue(external), .integer(Int64(row.index)),
            SQLValue(row.args),
        ])
        if pending.count == Self.batch { try flush() }
    }

    /// Writes the rows kept so far.
    func flush() throws {
        guard !pending.isEmpty else { return }
        try sql.insertRows(into: "profiler_events", columns: Self.columns, rows: pending)
        pending.removeAll(keepingCapacity: true)
    }
}

/// The profiles' forwarders on a SQLite workspace: ``ProfilerTables`` over this file.
extension Workspace {
    package var profiles: ProfilerTables { ProfilerTables(self) }

    package func profilerTraces() throws(WorkspaceError) -> [ProfilerTraceRecord] { try profiles.profilerTraces() }

    package func profilerLanes(traceID: Int64) throws(WorkspaceError) -> [ProfilerLaneRow] {
        try profiles.profilerLanes(traceID: traceID)
    }
}
