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

    /// Renders the shell at `size` over every panel and overlay, `frames` times each; the
    /// milliseconds each render took, per scene, in scene order (`loupe bench tui`).
    func renderTimings(size: Size, frames: Int) -> [(scene: String, milliseconds: [Double])]

    /// Opens trace `id` in the Traces panel as the TUI does (its port reads run in-process) and
    /// steps `steps` times; the open-to-first-frame time and each step's, in milliseconds
    /// (`loupe bench traces`).
    func replayTimings(trace id: Int64, browser: TracesBrowser, steps: Int) throws -> (
        open: Double, steps: [Double]
    )

    /// Opens profile `id` in the Profiles panel as the TUI does and moves to its timeline; the
    /// milliseconds from `enter` to the timeline's first frame, then from the `+` that makes
    /// the window narrow enough for its events to be read to the frame drawn from them, and how
    /// many it read (`loupe bench profiles`).
    func profileTimelineTimings(
        profile id: Int64, browser: ProfilesBrowser
    ) throws -> (firstFrame: Double, zoomedFrame: Double?, zoomedEvents: Int)
}

/// Raised by the commands that need the TUI when the session has none (a library embedding the
/// command language without a screen).
struct NoTUIError: UserFacingError {
    var description: String { "this build of loupe has no TUI; run a subcommand (try help)" }
}
