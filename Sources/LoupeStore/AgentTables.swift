import Foundation
import GRDB

/// What the agent's `read` and `sql` tools need from the workspace: a chunk by its id, the
/// workspace's tables, and one read-only query. Written over a ``SQLDatabase`` (a SQLite
/// ``Workspace`` or a PostgreSQL workspace).
///
/// Thread-safety: any thread; each method is one read.
package struct AgentTables: Sendable {
    package let database: any SQLDatabase

    package init(_ database: any SQLDatabase) {
        self.database = database
    }

    /// One chunk by its id, with its document.
    package func chunk(id: Int64) throws(WorkspaceError) -> StoredChunk? {
        try database.readStatements { sql in
            try sql.execute(
                """
                SELECT c.id, d.external_id, d.title, c.ordinal, c.start_byte, c.end_byte, c.text
                FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.id = ?
                """, [.integer(id)]
            ).first.map(CorpusTables.storedChunk)
        }
    }

    /// The workspace's tables, for the sql tool's description (the file's revision counter is
    /// bookkeeping, as the migrations' tables are).
    package func tableNames() throws(WorkspaceError) -> [String] {
        let query =
            switch database.dialect {
            case .sqlite:
                """
                SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
                  AND name NOT LIKE 'grdb_%' AND name != '\(TraceTables.revisionClock)' ORDER BY name
                """
            case .postgres:
                """
                SELECT table_name AS name FROM information_schema.tables
                WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
                  AND table_name <> 'loupe_migrations' ORDER BY table_name
                """
            }
        return try database.readStatements { sql in try sql.execute(query).compactMap { $0.text("name") } }
    }

    /// Runs one SELECT (or WITH … SELECT) that cannot write and returns at most `limit` rows as
    /// text. Anything else is refused before it reaches the database, and the database refuses a
    /// write too: SQLite's statement must be read-only on a read-only connection, PostgreSQL's
    /// runs in a `READ ONLY` transaction.
    package func readOnlyQuery(_ query: String, limit: Int) throws(WorkspaceError) -> (
        columns: [String], rows: [[String]], truncated: Bool
    ) {
        let trimmed = query.trimmingCharacters(in: .whitespacesAndNewlines.union(CharacterSet(charactersIn: ";")))
        let head = trimmed.prefix(6).lowercased()
        let shown = database.displayName
        guard head == "select" || trimmed.lowercased().hasPrefix("with ") else {
            throw WorkspaceError(.database, path: shown, message: "only SELECT statements may run here")
        }
        guard !trimmed.contains(";") else {
            throw WorkspaceError(.database, path: shown, message: "one statement at a time")
        }
        return try database.readStatements { sql in
            let result = try sql.readOnlyQuery(trimmed, limit: limit)
            return (result.columns, result.rows.map { $0.map(Self.text) }, result.truncated)
        }
    }

    /// A value as the sql tool shows it.
    static func text(_ value: SQLValue) -> String {
        switch value {
        case .null: "NULL"
        case .integer(let i): String(i)
        case .real(let d): String(d)
        case .text(let s): s
        case .blob(let b): "<\(b.count) bytes>"
        }
    }
}
