import Foundation
import GRDB
import Synchronization

/// Tells when the workspace changed under an open view: a commit by another process (`loupe
/// serve` receiving spans, a second Loupe) or by this one's writer. It reads SQLite's
/// `PRAGMA data_version` on a connection of its own, which changes exactly when another
/// connection commits; a check costs microseconds, so the TUI asks several times a second
/// (SQLite's side of DESIGN.md §7's change notifications: WAL and polling).
package final class WorkspaceWatcher: ChangeWatcher {
    private let connection: DatabaseQueue
    private let last = Mutex<Int?>(nil)

    init(path: String) throws(WorkspaceError) {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "loupe.watcher"
        do {
            connection = try DatabaseQueue(path: path, configuration: configuration)
        } catch {
            throw WorkspaceError(.inaccessible, path: path, message: "cannot watch the workspace: \(error)")
        }
    }

    /// True when something was committed since the last call (false on the first).
    package func changed() -> Bool {
        guard let version = try? connection.inDatabase({ db in try Int.fetchOne(db, sql: "PRAGMA data_version") })
        else {
            return false
        }
        return last.withLock { last in
            defer { last = version }
            return last.map { $0 != version } ?? false
        }
    }
}

extension WorkspaceWatcher {
    /// A file is always there to read.
    package var trouble: String? { nil }
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
