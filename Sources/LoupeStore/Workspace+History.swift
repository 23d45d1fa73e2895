import Foundation
import GRDB

extension Workspace {
    /// The most recent `limit` command lines from `source`, oldest first.
    package func history(source: HistorySource, limit: Int = 1000) throws(WorkspaceError) -> [String] {
        try read { db in
            let rows =
                try HistoryEntry
                .filter(Column("source") == source.rawValue)
                .order(Column("id").desc)
                .limit(limit)
                .fetchAll(db)
            return rows.reversed().map(\.line)
        }
    }

    /// Appends a command line to the history.
    package func recordHistory(_ line: String, source: HistorySource, now: Date = Date()) throws(WorkspaceError) {
        try write { db in try HistoryEntry(id: nil, line: line, source: source, ranAt: now).insert(db) }
    }
}
