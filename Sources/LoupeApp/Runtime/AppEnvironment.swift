import Foundation
import LoupeKit

/// What the runtime needs from outside the TUI: a way to run commands, the panels' ports, the
/// history, and a clock. The composition root (the `loupe` executable) builds it.
package struct AppEnvironment: Sendable {
    package var commands: any CommandService
    /// The panels' ports (``TracesBrowser``, ``EvalsBrowser`` …), asked by ``Effect/port(_:)``.
    package var ports: Ports
    /// Keeps a `:` line in the workspace's history; nil where there is no workspace.
    package var recordHistory: (@Sendable (String) throws -> Void)?
    /// Monotonic seconds.
    package var now: @Sendable () -> Double
    /// The editor for long text, as a shell word list: `$VISUAL`, else `$EDITOR`, else `vi`.
    package var editor: String
    /// True when the workspace changed since the last call (another process committed: `loupe
    /// serve` received spans); asked a few times a second. Nil where nothing is watched.
    package var workspaceChanged: (@Sendable () -> Bool)?
    /// What the TUI's own OTLP listener is doing ("OTLP 127.0.0.1:4318 · 120 spans/s"), for the
    /// status bar; nil when it does not listen.
    package var listener: (@Sendable () -> String?)?
    /// Why the workspace's server cannot be reached right now (a PostgreSQL workspace whose
    /// connection dropped), for the status bar; nil while it can. Asked with the watcher.
    package var unreachable: (@Sendable () -> String?)?

    package init(
        commands: any CommandService, ports: Ports, recordHistory: (@Sendable (String) throws -> Void)? = nil,
        now: @escaping @Sendable () -> Double = AppEnvironment.monotonicSeconds,
        editor: String = AppEnvironment.userEditor, workspaceChanged: (@Sendable () -> Bool)? = nil,
        listener: (@Sendable () -> String?)? = nil, unreachable: (@Sendable () -> String?)? = nil
    ) {
        self.unreachable = unreachable
        self.editor = editor
        self.workspaceChanged = workspaceChanged
        self.listener = listener
        self.commands = commands
        self.ports = ports
        self.recordHistory = recordHistory
        self.now = now
    }

    /// `$VISUAL`, else `$EDITOR`, else `vi`, as git and crontab choose.
    package static var userEditor: String {
        let environment = ProcessInfo.processInfo.environment
        for name in ["VISUAL", "EDITOR"] {
            if let value = environment[name], !value.trimmingCharacters(in: .whitespaces).isEmpty { return value }
        }
        return "vi"
    }

    /// Seconds from a monotonic clock.
    package static let monotonicSeconds: @Sendable () -> Double = {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
