/// What a key does at the app level. Keymaps map keys to actions; ``AppState/update(_:)``
/// carries them out.
package enum AppAction: Hashable, Sendable {
    case quit
    case nextPanel
    case previousPanel
    case focusPanel(Int)
    /// Back to the panel a jump came from (an eval answer opened in Traces or Retrieval).
    case jumpBack
    case showHelp
    case openCommandLine
    case openPalette
    case startSearch
    case searchNext
    case searchPrevious
    case back
    case suspend
    case redraw
    case toggleZoom
    case toggleOutput
    /// Copy what is selected (a step's content, a hit, an answer, a row) to the clipboard.
    case copySelection
    /// Handed to the focused panel (or the output pane when it has focus).
    case panel(PanelAction)
}
