import LoupeBase
import LoupeKit
import LoupeTUI

/// What the command language needs from the TUI, supplied by the executable (the composition
/// root). Commands know that a screen exists, never which: `LoupeCommands` imports no TUI
/// program module, and the `loupe` executable, which imports both, hands one of these to the
/// session.
///
/// Thread-safety: any thread; ``openTUI(session:theme:jobs:environment:firstFrameSize:)`` takes over
/// the calling thread until the user quits.
package protocol TUIHost: Sendable {
    /// Opens the TUI on `session`, starts `jobs` (command lines) as jobs, and runs it until the
    /// user quits. With `firstFrameSize` it renders one frame headless at that size, prints
    /// `first-frame` and returns (`loupe bench tui` times start-up this way).
    func openTUI(
        session: WorkspaceSession, theme: String?, jobs: [String], environment: [String: String],
        firstFrameSize: Size?, listen: Bool
    ) throws

    /// `docs/keybindings.md`: every key of every panel, generated from the keymaps.
    func keybindingsMarkdown() -> String
}

/// Raised by the commands that need the TUI when the session has none (a library embedding the
/// command language without a screen).
struct NoTUIError: UserFacingError {
    var description: String { "this build of loupe has no TUI; run a subcommand (try help)" }
}
