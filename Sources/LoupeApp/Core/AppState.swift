import LoupeKit
import LoupeTUI

/// The whole TUI as one value, owned by the UI thread.
///
/// ``update(_:)`` folds a ``Msg`` into it and returns ``Effect``s; ``render()`` draws it into a
/// ``Frame``. Both are pure, so every screen and every key sequence is testable without a
/// terminal.
package struct AppState: Sendable {
    /// What the keyboard is talking to.
    package enum Mode: Hashable, Sendable {
        case normal
        case commandLine
        case search
        case palette
        case help
        case confirmQuit
    }

    /// Which part of the body has the focus.
    package enum Focus: Hashable, Sendable {
        case panel
        case output
    }

    package var size: Size
    package var theme: Theme
    /// True under `NO_COLOR`: every theme applied is made monochrome.
    package var forceMonochrome: Bool
    package var panels: [any Panel]
    package var focusedPanel = 0
    /// The panel a jump (an eval answer to its trace) left, for ctrl+o to return to.
    package var jumpedFrom: Int?
    package var focus = Focus.panel
    package var mode = Mode.normal
    package var zoomed = false

    package var commandLine = LineEditor()
    package var history: LineHistory
    package var completions: [String] = []
    /// The file paths that complete a partial word on the `:` line (the file system's, from
    /// the current directory; a test may point it elsewhere).
    package var completePaths: @Sendable (String) -> [String] = { PathCompletion.candidates(for: $0) }
    package var searchEditor = LineEditor()
    /// The last committed search, for `n`/`N` and highlighting.
    package var searchQuery = ""
    package var palette = PaletteState()
    package var helpOffset = 0
    /// The help overlay's filter (`/` in help), and whether it is being typed.
    package var helpFilter = LineEditor()
    package var isFilteringHelp = false

    package var output = OutputPane()
    package var jobs: [JobStatus] = []
    package var nextJobID = 1
    /// The status line's message; it goes away after ``StatusMessage/lifetime`` seconds, and
    /// when another panel is shown unless it is an error.
    package var message: StatusMessage? {
        didSet { messageShownAt = now }
    }
    package private(set) var messageShownAt: Double = 0
    /// Panel keys pressed while the focused panel still loads what it first shows (a key pressed
    /// as the app starts): played once it has loaded, not dropped on an empty list.
    package var deferredKeys: [Key] = []

    package var workspaceName: String
    /// The TUI's own OTLP listener, as the status bar shows it ("OTLP 127.0.0.1:4318 · 12 spans/s").
    package var listening: String?
    /// Why the workspace's server (PostgreSQL) cannot be reached; nil while it can.
    package var unreachable: String?
    package var catalog: CommandCatalog
    package var themeNames: [String]
    /// Monotonic seconds, from ``Msg/tick(_:)``.
    package var now: Double = 0

    package init(
        size: Size, theme: Theme, forceMonochrome: Bool = false, panels: [any Panel], workspaceName: String,
        catalog: CommandCatalog, themeNames: [String], history: [String] = []
    ) {
        self.size = size
        self.forceMonochrome = forceMonochrome
        self.theme = forceMonochrome ? theme.monochrome() : theme
        self.panels = panels
        self.workspaceName = workspaceName
        self.catalog = catalog
        self.themeNames = themeNames
        self.history = LineHistory(entries: history)
    }

    /// The standard panels in tab order: the engines' panels, Notebooks, the SAE browser, then
    /// Review, then Profiles (each added last, so the earlier tabs keep their numbers).
    package static func standardPanels() -> [any Panel] {
        [
            TracesPanel(), RetrievalPanel(), AttentionPanel(), RooflinePanel(), EvalsPanel(), NotebooksPanel(),
            SAEPanel(), ReviewPanel(), ProfilesPanel(),
        ]
    }

    package var focusedPanelID: PanelID { panels[focusedPanel].id }
}
