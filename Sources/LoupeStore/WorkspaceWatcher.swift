import Foundation
import GRDB
import Synchronization

/// Tells when the workspace changed under an open view: a commit by another process (`loupe
/// serve` receiving spans, a second Loupe) or by this one's writer. It reads SQLite's
/// `PRAGMA data_version` on a connection of its own, which changes exactly when another
/// connection commits; a check costs microseconds, so the TUI asks several times a second
/// (SQLite's side of DESIGN.md §7's change notifications: WAL and polling).
package final class WorkspaceWatcher: ChangeWatcher {
    /// The file's name, for the message when it cannot be read.
    private let name: String
    /// Reads `PRAGMA data_version` on the watcher's own connection.
    private let dataVersion: @Sendable () throws -> Int
    private let last = Mutex<Int?>(nil)
    /// Why the last check could not read the data version; nil after one that could.
    private let failure = Mutex<String?>(nil)

    convenience init(path: String) throws(WorkspaceError) {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "loupe.watcher"
        let connection: DatabaseQueue
        do {
            connection = try DatabaseQueue(path: path, configuration: configuration)
        } catch {
            throw WorkspaceError(.inaccessible, path: path, message: "cannot watch the workspace: \(error)")
        }
        self.init(name: (path as NSString).lastPathComponent) {
            try connection.inDatabase { db in try Int.fetchOne(db, sql: "PRAGMA data_version") } ?? 0
        }
    }

    /// A watcher of the file called `name` whose data version `dataVersion` reads (a test's
    /// stand-in for a file that fails to read).
    package init(name: String, dataVersion: @escaping @Sendable () throws -> Int) {
        self.name = name
        self.dataVersion = dataVersion
    }

    /// True when something was committed since the last call (false on the first). A check that
    /// cannot read the file answers false and leaves its reason in ``trouble``, so that the view
    /// says its live updates stopped instead of going quiet.
    package func changed() -> Bool {
        let version: Int
        do {
            version = try dataVersion()
            failure.withLock { $0 = nil }
        } catch {
            let reason = "\(name): live updates stopped: \(error)"
            failure.withLock { $0 = reason }
            return false
        }
        return last.withLock { last in
            defer { last = version }
            return last.map { $0 != version } ?? false
        }
    }
}

extension WorkspaceWatcher {
    /// Why the last check could not read the workspace (the file gone, unreadable or damaged);
    /// nil while it can.
    package var trouble: String? { failure.withLock { $0 } }
}

/// What an open view asks of its workspace's backend a few times a second: whether someone
/// committed since it last asked, and whether the backend can be reached at all.
package protocol ChangeWatcher: Sendable {
    /// True when something was committed since the last call.
    func changed() -> Bool
    /// Why the workspace cannot be reached right now; nil while it can.
    var trouble: String? { get }
}

extension Workspace {
    /// A watcher of this workspace's commits.
    package func watcher() throws(WorkspaceError) -> WorkspaceWatcher { try WorkspaceWatcher(path: path) }
}
