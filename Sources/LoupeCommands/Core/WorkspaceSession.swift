import Foundation
import LoupeBase
import LoupeKit
import LoupePostgres
import LoupeReceiver
import LoupeStore
import Synchronization

/// What a process (or a notebook run) works with: the workspace, opened on first use and then
/// shared, the model library, the themes and, where the executable has one, the TUI.
///
/// The executable builds one per process (the composition root); a notebook run or a `:` line
/// with another `--workspace` derives one with ``with(path:displayPath:)``, sharing the rest.
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
    /// MiniLM and the other models, loaded once per process (the embedder is 90 MB).
    package let models: ModelLibrary
    /// The TUI, where the executable has one: `loupe` alone, `docs keybindings`, `bench tui`.
    package let host: (any TUIHost)?
    private let opened = Mutex<Workspace?>(nil)
    private let openedPostgres = Mutex<PostgresStore?>(nil)
    /// The OTLP receiver writing into this session's workspace (`listen`, `loupe --listen`).
    private let listening = Mutex<Listener?>(nil)

    /// A session on `path`; `models` defaults to the library `$LOUPE_MODELS` names.
    package init(
        path: String, displayPath: String? = nil, busyTimeout: Double = 5, themes: ThemeLoader,
        models: ModelLibrary? = nil, host: (any TUIHost)? = nil
    ) {
        self.path = path
        // A PostgreSQL URL is shown without its password, wherever the session's name appears.
        self.displayPath =
            displayPath
            ?? (PostgresURL.isURL(path) ? (try? PostgresURL(path).description) ?? PostgresURL.redact(path) : path)
        self.busyTimeout = busyTimeout
        self.themes = themes
        self.models = models ?? .standard(environment: ProcessInfo.processInfo.environment)
        self.host = host
    }

    /// A session on another workspace with the same models, themes, TUI and busy timeout.
    package func with(path: String, displayPath: String? = nil) -> WorkspaceSession {
        WorkspaceSession(
            path: path, displayPath: displayPath, busyTimeout: busyTimeout, themes: themes, models: models, host: host)
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
    ///
    /// A session opened for ``WorkspaceAccess/read`` opens its writer when a later command asks
    /// for ``WorkspaceAccess/write`` (or on its first write).
    package func workspace(access: WorkspaceAccess = .write) throws(WorkspaceError) -> Workspace {
        if isPostgres {
            throw WorkspaceError(
                .notAWorkspace, path: displayPath,
                message: "is a PostgreSQL workspace, and this command works on a workspace file only (copy it into a "
                    + "file to run it: loupe workspace copy \(displayPath) loupe.sqlite).")
        }
        let workspace = try opened.withLock { (slot: inout Workspace?) throws(WorkspaceError) -> Workspace in
            if let workspace = slot { return workspace }
            let workspace = try Workspace(path: path, access: access, busyTimeout: busyTimeout)
            slot = workspace
            return workspace
        }
        if access == .write { try workspace.prepareToWrite() }
        return workspace
    }

    /// Whether the workspace is a PostgreSQL database (`--workspace postgres://…`).
    package var isPostgres: Bool { PostgresURL.isURL(path) }

    /// The PostgreSQL workspace, connected (and its schema brought forward) on first use.
    package func postgres() throws(WorkspaceError) -> PostgresStore {
        let url = try PostgresURL(path)
        return try openedPostgres.withLock { (slot: inout PostgresStore?) throws(WorkspaceError) -> PostgresStore in
            if let store = slot { return store }
            let store = try PostgresStore.open(url)
            slot = store
            return store
        }
    }

    /// The PostgreSQL workspace as the tables on the seam take it (``TraceTables``,
    /// ``EvalTables``); nil for a file.
    package func postgresDatabase() throws(WorkspaceError) -> (any SQLDatabase)? {
        isPostgres ? try postgres() : nil
    }

    /// A watcher of the workspace's commits for an open view: SQLite's data version on a file,
    /// PostgreSQL's notices (`LISTEN`) on a URL, which also says while the server is unreachable.
    package func watcher() throws(WorkspaceError) -> any ChangeWatcher {
        isPostgres ? PostgresWatcher(url: try PostgresURL(path)) : try workspace(access: .read).watcher()
    }

    /// True once the workspace was opened in this session.
    package var isOpen: Bool { opened.withLock { $0 != nil } }

    /// Starts the session's OTLP receiver on its workspace; the one already running when there
    /// is one (with false).
    package func listen(_ configuration: ReceiverConfiguration) throws -> (listener: Listener, started: Bool) {
        let workspace = try workspace()
        return try listening.withLock { (slot: inout Listener?) throws -> (listener: Listener, started: Bool) in
            if let running = slot { return (running, false) }
            let listener: Listener
            do { listener = try Listener(workspace: workspace, configuration: configuration) } catch {
                throw CommandFailure("\(error)")
            }
            slot = listener
            return (listener, true)
        }
    }

    /// Stops the receiver (committing what it acknowledged) and returns it; nil when none ran.
    @discardableResult
    package func stopListening() -> Listener? {
        let listener = listening.withLock { slot in
            defer { slot = nil }
            return slot
        }
        listener?.stop()
        return listener
    }

    /// What the receiver does, for the TUI's status bar; nil when it does not listen.
    package var listenerStatus: String? { listening.withLock { $0 }?.status }

    /// Ends the session's work on its workspace: stops the receiver (committing what it
    /// acknowledged) and, when this session wrote to a workspace file, folds the write-ahead log
    /// into it, so that the file alone — copied, mailed, opened by an older sqlite3 — holds
    /// everything the command stored. Every command that wrote ends here (``LoupeCLI``). A log
    /// another process still reads is tried once more after a pause (the fold waits the busy
    /// timeout each time), then left to it with a warning on standard error naming the file and
    /// SQLite's answer: nothing is lost, the data stays in the log beside the file, but a copy of
    /// the file alone would lack it. Returns that failure (nil when the log was folded).
    @discardableResult
    package func close() -> WorkspaceError? {
        stopListening()
        guard let workspace = opened.withLock({ $0 }) else { return nil }
        var failure: WorkspaceError?
        for attempt in 0..<2 {
            if attempt > 0 { Thread.sleep(forTimeInterval: 0.25) }
            do {
                try workspace.foldLog(past: nil)
                return nil
            } catch {
                failure = error
            }
        }
        if let failure {
            FileHandle.standardError.write(
                Data(("warning: " + UntrustedText.sanitized(failure.description) + "\n").utf8))
        }
        return failure
    }

    deinit {
        stopListening()
        openedPostgres.withLock { $0 }?.close()
    }
}
