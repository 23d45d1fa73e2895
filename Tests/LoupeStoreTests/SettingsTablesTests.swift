import Foundation
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
}
