import Foundation
import LoupeKit
import LoupeTUI

/// Lists the notebooks found on disk and steps through one: `j`/`k` move between cells, `enter`
/// runs the selected cell's commands and shows their output under it, `r` runs every cell.
package struct NotebooksPanel: Panel {
    package let id = PanelID.notebooks
    package let title = "Notebooks"

    package private(set) var notebooks: [NotebookSummary] = []
    package private(set) var isListed = false
    /// The folders searched, first wins (``NotebooksBrowser/defaultDirectories(environment:workingDirectory:workspacePath:executablePath:)``).
    package private(set) var searchedFolders: [String] = []
    package var list = ListState()
    package private(set) var document: Document?
    package private(set) var focusOnDocument = false
    /// False (the default): a notebook runs on a scratch workspace of its own, as `loupe notebook
    /// run` does, so a tutorial leaves the open workspace as it was; `w` runs it on the open one.
    package private(set) var runsOnOpenWorkspace = false

    /// An open notebook and where the cursor is in it.
    package struct Document: Hashable, Sendable {
        package var path: String
        package var notebook: Notebook?
        package var error: String?
        /// The selected cell; -1 is the top (title and introduction), where a notebook opens.
        package var cell: Int = -1
        /// Output of cells run in this session, by cell index (replaces the stored output).
        package var runOutputs: [Int: [String]] = [:]
        package var running: Set<Int> = []
        /// Commands finished per running cell, to know when a cell is done.
        package var runDone: [Int: Int] = [:]
        /// How each cell run in this session ended: ✓ or ✗ and its time, shown beside it.
        package var results: [Int: CellResult] = [:]
    }

    /// A cell's run: whether a command failed where the notebook did not expect it, and how long
    /// its commands took together.
    package struct CellResult: Hashable, Sendable {
        package var failed = false
        package var seconds = 0.0
    }

    /// The cells of the run under way (`enter` one, `r` all), for the summary when it ends.
    private var batch: [Int] = []

    package init() {}

    package var keymap: Keymap {
        Keymap(
            "Notebooks",
            [
                KeyBinding(
                    [.enter], .panel(.open), help: "Open the notebook / run the selected cell", footer: "open/run"),
                KeyBinding(
                    [.character("r")], .panel(.own(Action.runAll)),
                    help:
                        "Run every loupe cell of the open notebook (`sh run` scripts run with `loupe notebook run FILE`)",
                    footer: "run all"),
                KeyBinding(
                    [.character("w")], .panel(.own(Action.workspace)),
                    help: "Run notebooks on the open workspace, or on a scratch one of their own (the default)",
                    footer: "workspace"),
                KeyBinding([.character("h"), .left], .panel(.left), help: "Focus the notebook list"),
                KeyBinding([.character("l"), .right], .panel(.right), help: "Focus the open notebook"),
            ]
        )
    }

    package var isSearchable: Bool { true }
    package var canGoBack: Bool { focusOnDocument }
    package var initialEffects: [PanelEffect] { [.ask(ListNotebooks()), .ask(NotebookFolders())] }

    package mutating func goBack() { focusOnDocument = false }

    /// The Notebooks panel's own actions.
    package enum Action: PanelActionKind, CaseIterable {
        /// Run every cell of the open notebook, in order.
        case runAll
        /// Switch between the open workspace and a scratch one.
        case workspace
    }

    package mutating func perform(_ action: PanelAction, area: Rect) -> [PanelEffect] {
        if case .specific(let own) = action {
            switch own.action(as: Action.self) {
            case .runAll:
                guard let cells = document?.notebook?.cells else { return [] }
                return run(cells: Array(cells.indices))
            case .workspace:
                runsOnOpenWorkspace.toggle()
                return [
                    .status(
                        runsOnOpenWorkspace
                            ? "notebooks now run on the open workspace: their commands change it"
                            : "notebooks now run on a scratch workspace of their own", .info)
                ]
            }
        }
        let page = max(1, area.height / 2)
        if focusOnDocument, var document, let cells = document.notebook?.cells {
            switch action {
            case .down: document.cell = min(cells.count - 1, document.cell + 1)
            case .up: document.cell = max(-1, document.cell - 1)
            case .pageDown: document.cell = min(cells.count - 1, document.cell + 3)
            case .pageUp: document.cell = max(-1, document.cell - 3)
            case .top: document.cell = -1
            case .bottom: document.cell = max(0, cells.count - 1)
            case .left: focusOnDocument = false
            case .open:
                // At the top, enter goes to the first cell rather than running something unseen.
                guard document.cell >= 0 else {
                    document.cell = cells.isEmpty ? -1 : 0
                    self.document = document
                    return []
                }
                self.document = document
                return run(cells: [document.cell])
            case .right, .specific: break
            }
            self.document = document
            return []
        }
        switch action {
        case .down, .up, .pageDown, .pageUp, .top, .bottom:
            list.navigate(action, count: notebooks.count, page: page)
            return previewSelected()
        case .right: if document != nil { focusOnDocument = true }
        case .open: return openSelected()
        case .left, .specific: break
        }
        return []
    }

    private mutating func openSelected() -> [PanelEffect] {
        guard list.selected < notebooks.count else { return [] }
        let path = notebooks[list.selected].path
        focusOnDocument = true
        if document?.path == path { return [] }
        document = Document(path: path)
        return [.ask(OpenNotebook(path: path))]
    }

    /// The selected notebook shown beside the list as the cursor moves, as lazygit shows the
    /// selected commit, so the list is browsed by content and not by cut titles. A notebook
    /// holding this session's runs stays until enter opens another: a cursor move must not throw
    /// its outputs away.
    private mutating func previewSelected() -> [PanelEffect] {
        guard list.selected < notebooks.count, !inFlight, queue.isEmpty else { return [] }
        if let document, !document.runOutputs.isEmpty || !document.running.isEmpty { return [] }
        let path = notebooks[list.selected].path
        if document?.path == path { return [] }
        document = Document(path: path)
        return [.ask(OpenNotebook(path: path))]
    }

    /// Where the open notebook's commands run: its scratch workspace (named after it) or the
    /// open one, with relative paths read from the notebook's repository.
    package var place: CommandPlace? {
        guard let document else { return nil }
        let directory = document.path.contains("/") ? String(document.path[..<document.path.lastIndex(of: "/")!]) : "."
        let name = String(document.path.split(separator: "/").last ?? "notebook")
        return CommandPlace(target: runsOnOpenWorkspace ? .open : .scratch(name), directory: directory)
    }

    private mutating func run(cells indices: [Int]) -> [PanelEffect] {
        guard var document, let cells = document.notebook?.cells, let place else { return [] }
        for index in indices where index < cells.count {
            if cells[index].isShell {
                // A script starts servers and processes; the TUI leaves that to a terminal.
                document.runOutputs[index] = [
                    "a shell script: `loupe notebook run \(document.path)` runs it (the TUI runs loupe cells)"
                ]
                continue
            }
            document.runOutputs[index] = []
            document.runDone[index] = 0
            document.results[index] = nil
            document.running.insert(index)
            batch.append(index)
            for command in cells[index].commands {
                let line = command.hasPrefix("!") ? String(command.dropFirst()).trimmingWhitespace() : command
                if command.hasPrefix("!") { expectedFailures.insert(line) }
                queue.append((index, line, place))
            }
            if cells[index].commands.isEmpty { document.running.remove(index) }
        }
        self.document = document
        return startNext()
    }

    /// Commands waiting for the one in flight: a notebook runs in order, as `notebook run` does
    /// (`workspace init` must finish before `workspace info` reads the workspace).
    private var queue: [(cell: Int, line: String, place: CommandPlace)] = []
    /// Lines written `!line`: their error is what the notebook shows on purpose.
    private var expectedFailures: Set<String> = []
    private var lineInFlight: String?
    private var inFlight = false
    private var pendingEffects: [PanelEffect] = []

    private mutating func startNext() -> [PanelEffect] {
        guard !inFlight, !queue.isEmpty else { return [] }
        inFlight = true
        let next = queue.removeFirst()
        lineInFlight = next.line
        return [.runIn(next.line, tag: next.cell, next.place)]
    }

    package mutating func takeEffects() -> [PanelEffect] {
        defer { pendingEffects = [] }
        return pendingEffects
    }

    package mutating func commandFinished(tag: Int, outcome: CommandOutcome) {
        let finished = lineInFlight
        inFlight = false
        pendingEffects += startNext()
        guard var document else { return }
        var lines = document.runOutputs[tag] ?? []
        var text = outcome.output
        let expectedToFail = finished.map { expectedFailures.contains($0) } ?? false
        if let error = outcome.error {
            text += (text.isEmpty ? "" : "\n") + (expectedToFail ? "expected error: " : "error: ") + error
        }
        while text.hasSuffix("\n") { text.removeLast() }
        lines += text.isEmpty ? [] : text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        document.runOutputs[tag] = lines
        var result = document.results[tag] ?? CellResult()
        result.failed = result.failed || (outcome.error != nil && !expectedToFail)
        result.seconds += outcome.seconds ?? 0
        document.results[tag] = result
        let expected = document.notebook?.cells[safe: tag]?.commands.count ?? 1
        let done = (document.runDone[tag] ?? 0) + 1
        document.runDone[tag] = done
        if done >= expected { document.running.remove(tag) }
        self.document = document
        if queue.isEmpty, !inFlight, !batch.isEmpty, document.running.isEmpty {
            pendingEffects.append(summary(of: document))
            batch = []
        }
    }

    /// "ran 7 cells: ✓ 6 · ✗ 1 (cell 4) · 3.2 s", for the status line when a run ends.
    private func summary(of document: Document) -> PanelEffect {
        let results = batch.compactMap { index in document.results[index].map { (index, $0) } }
        let failed = results.filter(\.1.failed).map { $0.0 + 1 }
        let seconds = results.reduce(0) { $0 + $1.1.seconds }
        let cells = results.count == 1 ? "1 cell" : "\(results.count) cells"
        var text = "ran \(cells): ✓ \(results.count - failed.count)"
        if !failed.isEmpty {
            text +=
                " · ✗ \(failed.count) (cell" + (failed.count == 1 ? " " : "s ")
                + failed.map(String.init).joined(separator: ", ") + ")"
        }
        text += String(format: " · %.1f s", seconds)
        return .status(text, failed.isEmpty ? .ok : .error)
    }

    package mutating func receive(_ msg: Msg) -> [PanelEffect] {
        switch msg {
        case .answered(let answer):
            if let (_, found) = answer.matching(ListNotebooks.self) {
                notebooks = found.value ?? []
                isListed = true
                list.reveal(height: 1, count: notebooks.count)
                return previewSelected()
            } else if let (_, folders) = answer.matching(NotebookFolders.self) {
                searchedFolders = folders.value ?? []
            } else if let (request, opened) = answer.matching(OpenNotebook.self) {
                guard document?.path == request.path else { return [] }
                switch opened {
                case .loaded(let notebook): document?.notebook = notebook
                case .failed(let message): document?.error = message
                }
            }
        case .input, .tick, .jobProgress, .jobFinished, .terminate, .fileWritten, .edited, .readFinished, .navigate,
            .workspaceChanged, .listening, .unreachable:
            break
        }
        return []
    }

    package mutating func search(_ query: String, forward: Bool, includeCurrent: Bool) -> Bool {
        if focusOnDocument, var document, let cells = document.notebook?.cells, !cells.isEmpty {
            let texts = cells.map { ($0.lines + ($0.output ?? [])).joined(separator: "\n") }
            guard
                let index = nextMatch(
                    in: texts, from: document.cell, query: query, forward: forward, includeCurrent: includeCurrent)
            else { return false }
            document.cell = index
            self.document = document
            return true
        }
        let texts = notebooks.map { "\($0.title) \($0.path)" }
        return list.selectNextMatch(
            in: texts, query: query, forward: forward, includeCurrent: includeCurrent)
    }

    package mutating func click(at point: Point, area: Rect) -> [PanelEffect] {
        let (listArea, documentArea) = layout(area, zoomed: false)
        if listArea.contains(point) {
            let inner = Block.inner(listArea)
            focusOnDocument = false
            if let index = list.index(atViewportRow: point.y - inner.y, count: notebooks.count) {
                list.selected = index
                return openSelected()
            }
        } else if documentArea.contains(point), document != nil {
            focusOnDocument = true
        }
        return []
    }

    func layout(_ area: Rect, zoomed: Bool) -> (list: Rect, document: Rect) {
        if zoomed {
            return focusOnDocument
                ? (Rect(x: area.x, y: area.y, width: 0, height: 0), area)
                : (area, Rect(x: area.maxX, y: area.y, width: 0, height: 0))
        }
        let listWidth = min(40, max(24, area.width * 3 / 10))
        let parts = area.split(.horizontal, [.length(listWidth), .fill(1)])
        return (parts[0], parts[1])
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
