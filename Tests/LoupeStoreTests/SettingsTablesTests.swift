import Foundation
import GRDB
import LoupePostgres
import LoupeStore
import LoupeTestSupport
import Testing

/// Settings and the command history, written once: every test runs on a SQLite workspace and on
/// a real PostgreSQL server.
@Suite struct SettingsTablesTests {
    typealias Backend = StoreBackend

    @Test(arguments: Backend.allCases) func aSettingIsReplacedNotAdded(_ backend: Backend) throws {
        let settings = SettingsTables(try backend.database("settings"))
        #expect(try settings.setting("theme") == nil)
        try settings.setSetting("theme", to: "light")
        try settings.setSetting("theme", to: "mono")
        try settings.setSetting("precision", to: "int8")
        #expect(try settings.setting("theme") == "mono" && settings.setting("precision") == "int8")
        let rows = try settings.database.readStatements { sql in
            try sql.execute("SELECT COUNT(*) AS n FROM settings").first?.integer("n")
        }
        #expect(rows == 2)
    }

    /// The history keeps each source's lines apart, returns the latest oldest first, and never
    /// keeps a credential a line carried.
    @Test(arguments: Backend.allCases) func theHistoryIsPerSourceLatestLastAndWithoutSecrets(_ backend: Backend) throws
    {
        let settings = SettingsTables(try backend.database("history"))
        for n in 0..<5 { try settings.recordHistory("trace show \(n)", source: .tui) }
        try settings.recordHistory("workspace info", source: .repl)
        try settings.recordHistory(
            "workspace copy postgres://ana:hunter2-secret@db:5432/team x.sqlite --api-key sk-abcdefghijklmnopqrstuv",
            source: .tui)
        let tui = try settings.history(source: .tui, limit: 3)
        #expect(tui.prefix(2) == ["trace show 3", "trace show 4"])
        #expect(tui.count == 3 && tui[2].hasPrefix("workspace copy postgres://ana:"))
        #expect(!tui[2].contains("hunter2-secret") && !tui[2].contains("sk-abcdefghijklmnopqrstuv"))
        #expect(try settings.history(source: .repl) == ["workspace info"])
    }

    /// A write an MCP agent made is kept as its own source (schema v27): the TUI does not recall it,
    /// and the listing `loupe history` prints gives every line with its source, oldest first.
    @Test(arguments: Backend.allCases) func anAgentsLinesAreTheirOwnSourceAndListedAmongTheOthers(_ backend: Backend)
        throws
    {
        let settings = SettingsTables(try backend.database("history_sources"))
        let start = Date(timeIntervalSince1970: 1_795_000_000)
        try settings.recordHistory("trace list", source: .tui, now: start)
        try settings.recordHistory("eval label 1 baseline", source: .mcp, now: start.addingTimeInterval(1))
        try settings.recordHistory("workspace info", source: .tui, now: start.addingTimeInterval(2))
        #expect(try settings.history(source: .tui) == ["trace list", "workspace info"])
        #expect(try settings.history(source: .mcp) == ["eval label 1 baseline"])
        #expect(
            try settings.entries() == [
                HistoryEntry(line: "trace list", source: .tui, ranAt: start),
                HistoryEntry(line: "eval label 1 baseline", source: .mcp, ranAt: start.addingTimeInterval(1)),
                HistoryEntry(line: "workspace info", source: .tui, ranAt: start.addingTimeInterval(2)),
            ])
        #expect(try settings.entries(limit: 1).map(\.line) == ["workspace info"])
        #expect(try settings.entries(source: .mcp).map(\.source) == [.mcp])
    }

    /// A workspace of schema v26 (the demo's, and every one made before v27) is brought forward
    /// when it is opened, on either backend: its history is kept, ids included, the lines
    /// `loupe mcp` kept under the REPL's source marked `mcp: ` become `mcp` lines, and the
    /// source is then accepted.
    @Test(arguments: Backend.allCases) func aV26WorkspacesHistoryIsBroughtForward(_ backend: Backend) throws {
        let database = try backend.database("history_v26")
        let start = Date(timeIntervalSince1970: 1_795_000_000)
        let lines: [(String, String)] = [
            ("trace list", "tui"), ("mcp: eval label 1 baseline", "repl"), ("workspace info", "repl"),
        ]
        let reopened: SettingsTables
        switch database {
        case let file as Workspace:
            // The table as v1 made it, checked against (tui, repl), and v27 not applied.
            try file.write { db in
                try db.execute(sql: "DROP TABLE command_history")
                try db.execute(
                    sql: """
                        CREATE TABLE command_history (id INTEGER PRIMARY KEY AUTOINCREMENT, line TEXT NOT NULL,
                          source TEXT NOT NULL CHECK (source IN ('tui', 'repl')), ran_at DATETIME NOT NULL)
                        """)
                for (n, (line, source)) in lines.enumerated() {
                    try db.execute(
                        sql: "INSERT INTO command_history (id, line, source, ran_at) VALUES (?, ?, ?, ?)",
                        arguments: [n + 10, line, source, start.addingTimeInterval(Double(n))])
                }
                try db.execute(
                    sql: "DELETE FROM grdb_migrations WHERE identifier = ?",
                    arguments: [SettingsTables.mcpSourceMigration])
            }
            #expect(throws: WorkspaceError.self) {
                try file.settings.recordHistory("refused by v1's check", source: .mcp)
            }
            let workspace = try Workspace(path: file.path)
            #expect(try workspace.schemaVersion() == Workspace.migrationIdentifiers.count)
            reopened = SettingsTables(workspace)
        case let store as PostgresStore:
            for (n, (line, source)) in lines.enumerated() {
                try store.execute(
                    "INSERT INTO command_history (line, source, ran_at) VALUES (?, ?, ?)",
                    [.text(line), .text(source), SQLValue(date: start.addingTimeInterval(Double(n)))])
            }
            try store.execute(
                "DELETE FROM loupe_migrations WHERE identifier = ?", [.text(SettingsTables.mcpSourceMigration)])
            let opened = try PostgresStore.open(store.url)
            #expect(try opened.schemaVersion() == StoreTable.migrationIdentifiers.count)
            reopened = SettingsTables(opened)
        default:
            Issue.record("an unknown backend")
            return
        }
        #expect(
            try reopened.entries() == [
                HistoryEntry(line: "trace list", source: .tui, ranAt: start),
                HistoryEntry(line: "eval label 1 baseline", source: .mcp, ranAt: start.addingTimeInterval(1)),
                HistoryEntry(line: "workspace info", source: .repl, ranAt: start.addingTimeInterval(2)),
            ])
        let ids = { () throws -> [Int64] in
            try reopened.database.readStatements { sql in
                try sql.execute("SELECT id FROM command_history ORDER BY id").compactMap { $0.integer("id") }
            }
        }
        let kept = try ids()
        #expect(kept == (backend == .sqlite ? [10, 11, 12] : [1, 2, 3]))
        try reopened.recordHistory("eval label 2 candidate", source: .mcp, now: start.addingTimeInterval(3))
        #expect(try reopened.history(source: .mcp) == ["eval label 1 baseline", "eval label 2 candidate"])
        #expect(try ids() == kept + [kept[2] + 1], "ids go on after the kept ones")
    }
}
