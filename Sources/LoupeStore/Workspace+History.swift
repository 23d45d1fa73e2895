import Foundation
import GRDB
import LoupeBase

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

    /// Appends a command line to the history, with credential-shaped parts (URL passwords,
    /// `sk-…` keys, `Bearer …` tokens, `--api-key VALUE`) redacted: the workspace is shared.
    package func recordHistory(_ line: String, source: HistorySource, now: Date = Date()) throws(WorkspaceError) {
        let redacted = SecretRedactor(secrets: []).redactCredentials(in: line)
        try write { db in try HistoryEntry(id: nil, line: redacted, source: source, ranAt: now).insert(db) }
    }
}
