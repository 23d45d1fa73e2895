import LoupeTUI

/// Something a command asks of the TUI when it runs inside it (ignored on the shell).
package enum UIRequest: Hashable, Sendable {
    /// Switch to this theme now (the command already stored the choice in the workspace).
    case applyTheme(Theme)
    /// Leave the TUI.
    case quit
}
