import LoupeKit
import LoupeTUI

/// Everything that can change the app: input, time, job reports and the ports' answers.
package enum Msg: Hashable, Sendable {
    case input(InputEvent)
    /// Monotonic seconds; sent while jobs run so progress and ETAs move.
    case tick(Double)
    case jobProgress(JobID, JobProgress)
    case jobFinished(JobID, CommandOutcome)
    /// SIGTERM, SIGINT or SIGHUP arrived: leave cleanly.
    case terminate(Int32)
    case fileWritten(path: String, error: String?)
    /// The editor opened by ``Effect/editText(name:text:)`` exited: the saved text, or why there
    /// is none. Every panel sees it; the one that asked matches `name`.
    case edited(String, text: String?, error: String?)
    /// A panel's ``PortRequest`` was answered (or failed); every panel sees it and the one that
    /// asked matches it by type.
    case answered(PortAnswer)
    /// A request run as a job (``Effect/portJob(_:_:)``) was answered, failed or was cancelled.
    case readFinished(JobID, PortAnswer)
    /// Another panel asked this one to show something (an eval answer's trace or ranking).
    case navigate(Navigation)
    /// Something else committed to the workspace (spans received by `loupe serve` or the TUI's
    /// listener): views of what may have grown read again.
    case workspaceChanged
    /// The TUI's OTLP listener's state for the status bar (nil: not listening).
    case listening(String?)
    /// Why the workspace's server cannot be reached, for the status bar (nil: it can again).
    case unreachable(String?)
}
