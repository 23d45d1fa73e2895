import LoupeBase

/// A command that ends with a particular exit status after it has said why: 130 or 143 for an
/// eval run stopped by SIGINT or SIGTERM (128 + the signal's number, as shells report it), 1 for
/// an agent that failed under `--json`, 2 for an ingest that skipped lines. The message goes to
/// stderr after `error: `; inside the REPL or the TUI it reads as any other failure.
package struct CommandExit: UserFacingError, Sendable {
    /// The process's exit status, 1...255.
    package var code: Int32
    package var message: String
    package init(code: Int32, _ message: String) {
        self.code = code
        self.message = message
    }
    package var description: String { message }
}
