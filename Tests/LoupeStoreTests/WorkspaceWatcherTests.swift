import Foundation
import LoupeStore
import Synchronization
import Testing

/// The TUI's watcher of a workspace file: a commit elsewhere is seen, and a file it cannot read
/// is said (``ChangeWatcher/trouble``, shown on the status bar) instead of reading as "nothing
/// changed" for ever.
@Suite struct WorkspaceWatcherTests {
    @Test func aCommitOnARealWorkspaceIsSeenOnce() throws {
        let workspace = try TemporaryWorkspace.make("watcher")
        let watcher = try workspace.watcher()
        #expect(!watcher.changed())
        _ = try workspace.writeStatements { sql in
            try sql.execute(
                "INSERT INTO settings (key, value, updated_at) VALUES ('watched', '1', '2026-11-28 18:00:00')", [])
        }
        #expect(watcher.changed())
        #expect(!watcher.changed())
        #expect(watcher.trouble == nil)
    }

    /// SQLite's own failures (a file locked exclusively by another process, a disk error) are
    /// hard to cause on demand, so the data version is read by a stand-in that fails.
    @Test func aFileThatCannotBeReadIsSaidUntilItCanBeReadAgain() {
        struct Locked: Error, CustomStringConvertible {
            var description: String { "SQLite error 5: database is locked" }
        }
        let reading = Mutex<Result<Int, Locked>>(.success(1))
        let watcher = WorkspaceWatcher(name: "w.sqlite") { try reading.withLock { try $0.get() } }
        #expect(!watcher.changed())
        reading.withLock { $0 = .failure(Locked()) }
        #expect(!watcher.changed())
        #expect(watcher.trouble == "w.sqlite: live updates stopped: SQLite error 5: database is locked")
        reading.withLock { $0 = .success(2) }
        #expect(watcher.changed())
        #expect(watcher.trouble == nil)
    }
}
