import Foundation
import LoupeKit
import LoupeStore
import Synchronization

/// The workspace a process (or a notebook run) works on, opened on first use and then shared.
///
/// Thread-safety: any thread; the first ``workspace()`` call opens the file once.
package final class WorkspaceSession: Sendable {
    /// The path as the user gave it (or the default), used to open the file.
    package let path: String
    /// How commands print the path: as given, or a stable name for scratch workspaces so
    /// notebook outputs do not depend on temporary directories.
    package let displayPath: String
    package let busyTimeout: Double
    package let themes: ThemeLoader
    private let opened = Mutex<Workspace?>(nil)

    package init(path: String, displayPath: String? = nil, busyTimeout: Double = 5, themes: ThemeLoader) {
        self.path = path
        self.displayPath = displayPath ?? path
        self.busyTimeout = busyTimeout
        self.themes = themes
    }

    /// The workspace path for the shell: `--workspace`, else `$LOUPE_WORKSPACE`, else
    /// `./loupe.sqlite`.
    package static func resolvePath(option: String?, environment: [String: String]) -> String {
        if let option, !option.isEmpty { return option }
        if let variable = environment["LOUPE_WORKSPACE"], !variable.isEmpty { return variable }
        return "loupe.sqlite"
    }

    /// Seconds to wait for another process's write lock: `$LOUPE_BUSY_TIMEOUT_MS`, else 5 s.
    package static func busyTimeout(environment: [String: String]) -> Double {
        environment["LOUPE_BUSY_TIMEOUT_MS"].flatMap(Double.init).map { $0 / 1000 } ?? 5
    }

    /// Opens the workspace (creating it when missing) or returns the one already open.
    package func workspace() throws(WorkspaceError) -> Workspace {
        try opened.withLock { (slot: inout Workspace?) throws(WorkspaceError) -> Workspace in
            if let workspace = slot { return workspace }
            let workspace = try Workspace(path: path, busyTimeout: busyTimeout)
            slot = workspace
            return workspace
        }
    }

    /// True once the workspace was opened in this session.
    package var isOpen: Bool { opened.withLock { $0 != nil } }
}
