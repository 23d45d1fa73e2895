import Foundation
import LoupeBase

/// The workspace's settings (the theme, …) and its command history, written once in SQL both
/// backends run, over a ``SQLDatabase`` (a SQLite ``Workspace`` or a PostgreSQL workspace).
///
/// Thread-safety: any thread; each method is one read or one transaction.
package struct SettingsTables: Sendable {
    package let database: any SQLDatabase

    package init(_ database: any SQLDatabase) {
        self.database = database
    }

    /// The stored value of a setting, or nil when it was never set.
    package func setting(_ key: String) throws(WorkspaceError) -> String? {
        try database.readStatements { sql in
            try sql.execute("SELECT value FROM settings WHERE key = ?", [.text(key)]).first?.text("value")
        }
    }

    /// Stores a setting, replacing any earlier value.
    package func setSetting(_ key: String, to value: String, now: Date = Date()) throws(WorkspaceError) {
        try database.writeStatements { sql in
            try sql.execute(
                """
                INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)
                ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at
                """, [.text(key), .text(value), SQLValue(now)])
        }
    }

    /// The most recent `limit` command lines from `source`, oldest first.
    package func history(source: HistorySource, limit: Int = 1000) throws(WorkspaceError) -> [String] {
        try database.readStatements { sql in
            try sql.execute(
                "SELECT line FROM command_history WHERE source = ? ORDER BY id DESC LIMIT ?",
                [.text(source.rawValue), .integer(Int64(limit))]
            ).compactMap { $0.text("line") }.reversed()
        }
    }

    /// The most recent `limit` command lines, of one source or of all, oldest first, each with its
    /// source and time: what `loupe history` lists.
    ///
    /// A row whose source this binary does not know (none today: the schema checks it) is left out.
    package func entries(source: HistorySource? = nil, limit: Int = 1000) throws(WorkspaceError) -> [HistoryEntry] {
        try database.readStatements { sql in
            let filter = source == nil ? "" : "WHERE source = ? "
            let arguments = (source.map { [SQLValue.text($0.rawValue)] } ?? []) + [.integer(Int64(limit))]
            return try sql.execute(
                "SELECT line, source, ran_at FROM command_history \(filter)ORDER BY id DESC LIMIT ?", arguments
            ).compactMap { row -> HistoryEntry? in
                guard let line = row.text("line"), let source = row.text("source").flatMap(HistorySource.init),
                    let ranAt = TraceTables.date(row["ran_at"])
                else { return nil }
                return HistoryEntry(line: line, source: source, ranAt: ranAt)
            }.reversed()
        }
    }

    /// Appends a command line to the history, with credential-shaped parts (URL passwords,
    /// `sk-…` keys, `Bearer …` tokens, `--api-key VALUE`) redacted: the workspace is shared.
    package func recordHistory(_ line: String, source: HistorySource, now: Date = Date()) throws(WorkspaceError) {
        let redacted = SecretRedactor(secrets: []).redactCredentials(in: line)
        try database.writeStatements { sql in
            try sql.execute(
                "INSERT INTO command_history (line, source, ran_at) VALUES (?, ?, ?)",
                [.text(redacted), .text(source.rawValue), SQLValue(now)])
        }
    }

    /// The migration that let the history keep an MCP agent's commands as its own source.
    package static let mcpSourceMigration = "v27: commands an MCP agent ran, kept in the history as its own"

    /// Brings forward the lines `loupe mcp --allow-writes` recorded before v27, when the schema
    /// allowed only `tui` and `repl`: REPL lines marked `mcp: `, which become `mcp` lines without
    /// the mark. The same SQL on both backends, run once by each migration.
    package static let mcpSourceBackfill = """
        UPDATE command_history SET source = 'mcp', line = substr(line, 6)
        WHERE source = 'repl' AND substr(line, 1, 5) = 'mcp: '
        """
}
