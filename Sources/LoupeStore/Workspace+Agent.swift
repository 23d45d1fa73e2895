import Foundation
import GRDB

/// What the agent's `read` and `sql` tools need from the workspace.
extension Workspace {
    /// One chunk by its id, with its document.
    package func chunk(id: Int64) throws(WorkspaceError) -> StoredChunk? {
        try read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT c.id, d.external_id, d.title, c.ordinal, c.start_byte, c.end_byte, c.text
                    FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.id = ?
                    """, arguments: [id]
            ).map {
                StoredChunk(
                    id: $0[0], documentID: $0[1], title: $0[2], ordinal: $0[3], startByte: $0[4], endByte: $0[5],
                    text: $0[6])
            }
        }
    }

    /// The workspace's tables, for the sql tool's description.
    package func tableNames() throws(WorkspaceError) -> [String] {
        try read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
                      AND name NOT LIKE 'grdb_%' ORDER BY name
                    """)
        }
    }

    /// Runs one SELECT (or WITH … SELECT) on a read-only connection and returns at most `limit`
    /// rows as text. Anything else is refused before it reaches SQLite; the connection itself
    /// is opened read-only as well, so nothing the statement does can write.
    package func readOnlyQuery(_ sql: String, limit: Int) throws(WorkspaceError) -> (
        columns: [String], rows: [[String]], truncated: Bool
    ) {
        let trimmed = sql.trimmingCharacters(in: .whitespacesAndNewlines.union(CharacterSet(charactersIn: ";")))
        let head = trimmed.prefix(6).lowercased()
        guard head == "select" || trimmed.lowercased().hasPrefix("with ") else {
            throw WorkspaceError(.database, path: path, message: "only SELECT statements may run here")
        }
        guard !trimmed.contains(";") else {
            throw WorkspaceError(.database, path: path, message: "one statement at a time")
        }
        return try read { db in
            let statement = try db.makeStatement(sql: trimmed)
            guard statement.isReadonly else {
                throw WorkspaceError(.database, path: self.path, message: "the statement writes")
            }
            let cursor = try Row.fetchCursor(statement)
            var rows: [[String]] = []
            var truncated = false
            while let row = try cursor.next() {
                if rows.count == limit {
                    truncated = true
                    break
                }
                rows.append(
                    row.databaseValues.map { value in
                        switch value.storage {
                        case .null: "NULL"
                        case .int64(let i): String(i)
                        case .double(let d): String(d)
                        case .string(let s): s
                        case .blob(let b): "<\(b.count) bytes>"
                        }
                    })
            }
            return (statement.columnNames, rows, truncated)
        }
    }
}
