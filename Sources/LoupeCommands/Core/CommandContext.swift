import LoupeKit
import LoupeStore
import Synchronization

/// What a command runs with: the workspace session, where to print, progress and
/// cancellation, and a channel to the TUI when it runs inside it.
package final class CommandContext: Sendable {
    package let session: WorkspaceSession
    package let output: any OutputSink
    package let reporter: JobReporter
    /// The width help and tables should fit.
    package let columns: Int
    /// True when the command runs from the TUI's `:` line or palette.
    package let isInsideTUI: Bool
    private let pendingRequests = Mutex<[UIRequest]>([])

    package init(
        session: WorkspaceSession, output: any OutputSink, reporter: JobReporter = .detached(), columns: Int = 100,
        isInsideTUI: Bool = false
    ) {
        self.session = session
        self.output = output
        self.reporter = reporter
        self.columns = columns
        self.isInsideTUI = isInsideTUI
    }

    /// Prints a line (a newline is added).
    package func print(_ text: String = "") { output.write(text + "\n") }

    /// The workspace, opened on first use; commands that only read it ask for
    /// ``WorkspaceAccess/read`` so they work while another process writes, on a read-only file
    /// and on a full disk.
    package func workspace(access: WorkspaceAccess = .write) throws(WorkspaceError) -> Workspace {
        try session.workspace(access: access)
    }

    /// The workspace's tables through statements both backends run: PostgreSQL from a URL, else
    /// the SQLite file. What the tables written once for both (``TraceTables``, ``RooflineTables``,
    /// …) are made on.
    package func database(access: WorkspaceAccess = .write) throws(WorkspaceError) -> any SQLDatabase {
        if let database = try session.postgresDatabase() { return database }
        return try workspace(access: access)
    }

    /// The trace tables on the workspace's backend: a SQLite file, or PostgreSQL from a URL.
    package func traceTables(access: WorkspaceAccess = .write) throws(WorkspaceError) -> TraceTables {
        TraceTables(try database(access: access))
    }

    /// The settings and history on the workspace's backend.
    package func settings(access: WorkspaceAccess = .write) throws(WorkspaceError) -> SettingsTables {
        SettingsTables(try database(access: access))
    }

    /// Machine profiles, kernel runs and search sweeps on the workspace's backend.
    package func roofline(access: WorkspaceAccess = .write) throws(WorkspaceError) -> RooflineTables {
        RooflineTables(try database(access: access))
    }

    /// Asks the TUI for something once the command has finished (ignored on the shell).
    package func request(_ request: UIRequest) { pendingRequests.withLock { $0.append(request) } }

    package var requests: [UIRequest] { pendingRequests.withLock { $0 } }
}
