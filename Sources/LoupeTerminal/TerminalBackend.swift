import LoupeTUI

/// Where frames are shown and input comes from: a real terminal or a scripted test double.
///
/// A backend is used from one thread only (ncurses is not thread-safe).
package protocol TerminalBackend: AnyObject {
    /// The current size in cells.
    var size: Size { get }

    /// Shows `frame`, writing only what changed since the previous one.
    func present(_ frame: Frame)

    /// The next input, waiting at most `timeoutMilliseconds`; nil when none came.
    func nextEvent(timeoutMilliseconds: Int) -> InputEvent?

    /// Hands the terminal back to the shell and stops the process (ctrl+z); returns once the
    /// process is continued, with the screen to be redrawn.
    func suspend()

    /// Hands the terminal to `arguments` (an editor) until it exits, then takes it back with the
    /// screen to be redrawn; returns the program's exit status (−1 when it did not start).
    func runInTerminal(_ arguments: [String]) -> Int32

    /// Repaints every cell on the next ``present(_:)`` (ctrl+l).
    func invalidate()

    /// Restores the terminal to the state it was in before the backend took it.
    func shutdown()

    /// Puts `text` on the system clipboard with an OSC 52 sequence, which terminals (and tmux
    /// with `set-clipboard on`) honour locally and over SSH.
    func copyToClipboard(_ text: String)
}
