import LoupeApp
import LoupeTUI
import LoupeTestSupport
import Testing

/// The part of the shell's screen a golden holds, in the rectangles ``ShellLayout`` gives the
/// shell's parts, so a golden changes only when what it is about changes.
///
/// A whole-screen golden holds the tab bar and the status line too: a new tab or a new status
/// field rewrote every one of them. Only ShellGoldenTests keeps
/// a few, one per size, to check that chrome once.
enum ScreenPart {
    /// The focused panel's own rectangle, then the footer row under it.
    ///
    /// The footer stays in a panel golden as its last line: its keys come from the panel's
    /// keymap and change with the panel's view (the token view's `x`, `esc back` in a step), no
    /// keymap test pins them, and neither the tab bar nor the status line touches that row. The
    /// global keys that follow the panel's are there only as far as the width leaves room.
    case panel
    /// The output pane alone.
    case output
    /// Everything between the tab bar and the status line: the panel and the output pane, and
    /// the overlays the shell draws over them (the palette, the quit dialog).
    case body
    /// The status line and the footer: the command line and the completions above it.
    case bars
    /// The whole screen, tab bar to footer.
    case screen

    /// The rectangles of `layout` the part takes, top to bottom.
    func areas(in layout: ShellLayout, size: Size) -> [Rect] {
        switch self {
        case .panel: [layout.panel, layout.footer]
        case .output: [layout.output]
        case .body:
            [Rect(x: 0, y: layout.tabs.maxY, width: size.width, height: layout.status.y - layout.tabs.maxY)]
        case .bars: [layout.status, layout.footer]
        case .screen: [Rect(size: size)]
        }
    }
}

/// Expects `part` of `state`'s screen to match `__snapshots__/NAME.txt` and `NAME.styles.txt`.
///
/// The whole screen is rendered as the app draws it, then cut to the part, so the panel draws
/// with the same area and focus it has on screen.
func expectScreen(
    _ state: AppState, _ part: ScreenPart, matchesGolden name: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let frame = state.render()
    let crop = part == .screen ? frame : frame.cropped(to: part.areas(in: state.layout, size: state.size))
    expectFrame(crop, matchesGolden: name, sourceLocation: sourceLocation)
}

/// Expects the focused panel's rectangle and the footer under it to match golden `name`.
func expectPanel(_ state: AppState, matchesGolden name: String, sourceLocation: SourceLocation = #_sourceLocation) {
    expectScreen(state, .panel, matchesGolden: name, sourceLocation: sourceLocation)
}
