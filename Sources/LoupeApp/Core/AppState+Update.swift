import LoupeKit
import LoupeTUI

extension AppState {
    /// Folds one message into the state and returns the effects to run. Pure.
    package mutating func update(_ msg: Msg) -> [Effect] {
        switch msg {
        case .input(.resize(let newSize)):
            size = newSize
            return []
        case .input(.key(let key)):
            return handle(key)
        case .input(.mouse(let event)):
            return handle(event)
        case .tick(let seconds):
            now = seconds
            if let message, now - messageShownAt >= message.lifetime { self.message = nil }
            return forwardToPanels(msg)
        case .jobProgress(let id, let progress):
            if let index = jobs.firstIndex(where: { $0.id == id }) { jobs[index].progress = progress }
            return forwardToPanels(msg)
        case .jobFinished(let id, let outcome):
            return finishJob(id, outcome) + forwardToPanels(msg)
        case .terminate:
            return [.cancelJobs, .quit]
        case .fileWritten(let path, let error):
            message =
                error.map { StatusMessage(text: "✗ \(path): \($0)", level: .error) }
                ?? StatusMessage(text: "✓ wrote \(path)", level: .ok)
            return []
        case .readFinished(let id, let answer):
            jobs.removeAll { $0.id == id }
            return forwardToPanels(.answered(answer)) + replayDeferredKeys()
        case .answered:
            return forwardToPanels(msg) + replayDeferredKeys()
        case .navigate, .edited, .workspaceChanged:
            return forwardToPanels(msg)
        case .listening(let status):
            listening = status
            return []
        case .unreachable(let reason):
            let recovered = unreachable != nil && reason == nil
            unreachable = reason
            if recovered { message = StatusMessage(text: "connection to the workspace is back", level: .ok) }
            return []
        }
    }

    /// True while a panel animates (trace playback) or a message waits to expire: the loop then
    /// ticks without input.
    package var wantsTicks: Bool { message != nil || panels.contains { $0.wantsTicks } }

    /// The keys held while the focused panel loaded, once it has.
    private mutating func replayDeferredKeys() -> [Effect] {
        guard !deferredKeys.isEmpty, !panels[focusedPanel].isLoadingFirstView else { return [] }
        let keys = deferredKeys
        deferredKeys = []
        // Held keys were meant for the panel: never for a dialog or line opened since.
        guard mode == .normal, focus == .panel else { return [] }
        return keys.flatMap { handleNormal($0) }
    }

    private mutating func forwardToPanels(_ msg: Msg) -> [Effect] {
        var effects: [Effect] = []
        for index in panels.indices { effects += apply(panels[index].receive(msg), from: panels[index].id) }
        return effects
    }

    /// Every keymap in force, for the help overlay and `docs/keybindings.md`.
    package var keymaps: [Keymap] {
        var maps = [Keymaps.global, Keymaps.navigation]
        for panel in panels where !panel.keymap.bindings.isEmpty { maps.append(panel.keymap) }
        return maps + [Keymaps.commandLine, Keymaps.palette]
    }

    /// Where the shell's parts go at this size; panel goldens crop the screen to its `panel` rect.
    package var layout: ShellLayout {
        ShellLayout(
            size: size, outputVisible: output.isVisible, outputRows: output.lines(theme: theme).count, zoomed: zoomed,
            focus: focus)
    }

    /// The panels' tabs, as drawn and as clicked.
    var tabBar: TabBar {
        TabBar(titles: panels.map(\.title), shortTitles: panels.map(\.id.shortTitle), selected: focusedPanel)
    }

    // MARK: - Keys

    private mutating func handle(_ key: Key) -> [Effect] {
        switch mode {
        case .normal: return handleNormal(key)
        case .commandLine: return handleCommandLine(key)
        case .search: return handleSearch(key)
        case .palette: return handlePalette(key)
        case .help: return handleHelp(key)
        case .confirmQuit: return handleConfirmQuit(key)
        }
    }

    private mutating func handleNormal(_ key: Key) -> [Effect] {
        if focus == .panel, panels[focusedPanel].capturesText, key != .control("c") {
            return apply(panels[focusedPanel].handleText(key), from: panels[focusedPanel].id)
        }
        if focus == .panel, panels[focusedPanel].takesKeysFirst,
            let action = panels[focusedPanel].keymap.action(for: key)
        {
            return perform(action)
        }
        if let action = Keymaps.global.action(for: key) {
            let searchKey = action == .searchNext || action == .searchPrevious
            if !searchKey || !searchQuery.isEmpty { return perform(action) }
        }
        if focus == .panel, panels[focusedPanel].isLoadingFirstView {
            // Bounded: a panel whose load never answers must not collect keys for ever.
            if deferredKeys.count < 32 { deferredKeys.append(key) }
            return []
        }
        if focus == .panel, let action = panels[focusedPanel].keymap.action(for: key) { return perform(action) }
        if let action = Keymaps.navigation.action(for: key) { return perform(action) }
        return []
    }

    /// Carries out an app action (from a key, the palette or a click).
    package mutating func perform(_ action: AppAction) -> [Effect] {
        // Keys held for a loading panel belong to what was on screen before this action.
        if case .panel = action {} else { deferredKeys = [] }
        switch action {
        case .quit:
            if jobs.isEmpty { return [.quit] }
            mode = .confirmQuit
        case .nextPanel: return focusPanel((focusedPanel + 1) % panels.count)
        case .previousPanel: return focusPanel((focusedPanel + panels.count - 1) % panels.count)
        case .focusPanel(let index): if index < panels.count { return focusPanel(index) }
        case .jumpBack:
            guard let origin = jumpedFrom, origin < panels.count else { return [] }
            jumpedFrom = nil
            return focusPanel(origin)
        case .showHelp:
            mode = .help
            helpOffset = 0
            helpFilter = LineEditor()
            isFilteringHelp = false
        case .openCommandLine:
            mode = .commandLine
            commandLine = LineEditor()
            completions = []
            history.reset()
        case .openPalette:
            palette = PaletteState()
            // The focused panel's own actions come first (fork, MMR, baseline …), as in k9s's and
            // lazygit's menus, then the commands, panels and themes.
            let panel = panels[focusedPanel]
            palette.items =
                panel.keymap.bindings.map {
                    PaletteState.Item(
                        title: "\(panel.title): \($0.help)", detail: $0.keyNames, target: .action($0.action))
                } + PaletteState.items(catalog: catalog, panels: panels.map(\.title), themes: themeNames)
            mode = .palette
        case .startSearch:
            // The prompt opens even with nothing to search, so the keys typed next are read as
            // the search they were meant as, not as commands.
            if focus != .panel || !panels[focusedPanel].isSearchable {
                message = StatusMessage(text: "Nothing to search in \(panels[focusedPanel].title) yet", level: .warn)
            }
            searchEditor = LineEditor()
            mode = .search
        case .searchNext, .searchPrevious:
            let found = panels[focusedPanel].search(searchQuery, forward: action == .searchNext, includeCurrent: false)
            if !found { message = StatusMessage(text: "No match for “\(searchQuery)”", level: .warn) }
            return apply(panels[focusedPanel].takeEffects(), from: panels[focusedPanel].id)
        case .back:
            if !searchQuery.isEmpty {
                searchQuery = ""
            } else if focus == .output || (output.isVisible && !panels[focusedPanel].canGoBack) {
                output.isVisible = false
                focus = .panel
                if zoomed { zoomed = false }
            } else if panels[focusedPanel].canGoBack {
                panels[focusedPanel].goBack()
                return apply(panels[focusedPanel].takeEffects(), from: panels[focusedPanel].id)
            } else if zoomed {
                zoomed = false
            }
        case .copySelection:
            let source = focus == .output ? output.lines(theme: theme) : nil
            let text =
                source.map { $0.map { $0.map(\.text).joined() }.joined(separator: "\n") }
                ?? panels[focusedPanel].selectionText
            guard var text, !text.isEmpty else {
                message = StatusMessage(text: "Nothing selected to copy here", level: .warn)
                return []
            }
            // Terminals cap OSC 52 payloads; 100,000 characters is within what they take.
            let limit = 100_000
            let cut = text.count > limit
            if cut { text = String(text.prefix(limit)) }
            message = StatusMessage(
                text: "✓ copied \(text.count) characters to the clipboard" + (cut ? " (cut at \(limit))" : ""),
                level: .ok, origin: panels[focusedPanel].id)
            return [.copy(text)]
        case .suspend: return [.suspend]
        case .redraw: return [.redraw]
        case .toggleZoom:
            zoomed.toggle()
            if message?.origin == panels[focusedPanel].id { message = nil }
        case .toggleOutput:
            if output.isVisible, output.showsLog {
                output.isVisible = false
                focus = .panel
            } else {
                output.isVisible = true
                output.showsLog = true
                output.offset = Int.max
                focus = .output
            }
        case .panel(let panelAction):
            if focus == .output { scrollOutput(panelAction) } else { return performOnPanel(panelAction) }
        }
        return []
    }

    /// Shows panel `index`; what it loads when shown comes back as effects.
    private mutating func focusPanel(_ index: Int) -> [Effect] {
        if index != focusedPanel {
            deferredKeys = []
            // What was said about the panel left behind would be read as about this one; an error
            // stays in the log (`o`).
            message = nil
        }
        focusedPanel = index
        focus = .panel
        searchQuery = ""
        return apply(panels[index].shown(), from: panels[index].id)
    }

    private mutating func performOnPanel(_ action: PanelAction) -> [Effect] {
        // A panel's message answered its last action; this one says its own or moves on.
        if let origin = message?.origin, origin == panels[focusedPanel].id { message = nil }
        let area = layout.panel
        let effects = panels[focusedPanel].perform(action, area: area)
        return apply(effects, from: panels[focusedPanel].id)
    }

    private mutating func scrollOutput(_ action: PanelAction) {
        let page = max(1, layout.output.height / 2)
        let current = min(output.offset, max(0, output.lines(theme: theme).count))
        switch action {
        case .down: output.offset = current + 1
        case .up: output.offset = max(0, current - 1)
        case .pageDown: output.offset = current + page
        case .pageUp: output.offset = max(0, current - page)
        case .top: output.offset = 0
        case .bottom: output.offset = Int.max
        case .left, .right, .open, .specific: break
        }
    }

    /// Turns a panel's requests into app effects, starting jobs for its commands.
    private mutating func apply(_ effects: [PanelEffect], from panel: PanelID) -> [Effect] {
        effects.flatMap { effect -> [Effect] in
            switch effect {
            case .app(.port(let call)) where call.jobTitle != nil:
                return [.portJob(addJob(call.jobTitle!, origin: .read), call)]
            case .app(let effect): return [effect]
            case .run(let line, let tag): return [startJob(line, origin: .panel(panel, tag: tag))]
            case .runIn(let line, let tag, let place):
                return [startJob(line, origin: .panel(panel, tag: tag), place: place)]
            case .navigate(let navigation): return navigate(navigation)
            case .status(let text, let level):
                message = StatusMessage(text: text, level: level, origin: panel)
                return []
            case .editCommand(let line):
                mode = .commandLine
                commandLine = LineEditor(line)
                completions = []
                history.reset()
                return []
            }
        }
    }

    /// Shows `navigation` in its panel, remembering where it came from for ctrl+o.
    private mutating func navigate(_ navigation: Navigation) -> [Effect] {
        guard let index = panels.firstIndex(where: { $0.id == navigation.panel }) else { return [] }
        jumpedFrom = focusedPanel
        return focusPanel(index) + apply(panels[index].receive(.navigate(navigation)), from: panels[index].id)
    }

    /// Starts `line` as a job, as if it was typed on the `:` line (without the history).
    package mutating func start(_ line: String) -> [Effect] { submit(line) }

    private mutating func startJob(_ line: String, origin: JobStatus.Origin, place: CommandPlace = .open) -> Effect {
        let id = addJob(line, origin: origin, place: place)
        return place == .open ? .runCommand(id, line) : .runCommandIn(id, line, place)
    }

    /// A new job in the status bar, with the next id.
    private mutating func addJob(_ title: String, origin: JobStatus.Origin, place: CommandPlace = .open) -> JobID {
        let id = JobID(nextJobID)
        nextJobID += 1
        jobs.append(JobStatus(id: id, title: title, startedAt: now, progress: nil, origin: origin, place: place))
        return id
    }

    // MARK: - The command line

    private mutating func handleCommandLine(_ key: Key) -> [Effect] {
        switch key {
        case .escape, .control("c"), .control("g"):
            mode = .normal
            completions = []
        case .enter:
            mode = .normal
            completions = []
            let line = commandLine.text.trimmingWhitespace()
            guard !line.isEmpty else { return [] }
            history.record(line)
            return [.recordHistory(line)] + submit(line)
        case .tab:
            complete()
        case .up, .control("p"):
            if let entry = history.previous(current: commandLine.text) { commandLine.setText(entry) }
        case .down, .control("n"):
            if let entry = history.next() { commandLine.setText(entry) }
        case .backspace where commandLine.isEmpty:
            mode = .normal
        default:
            if commandLine.handle(key) {
                completions = []
                history.reset()
            }
        }
        return []
    }

    private mutating func submit(_ line: String) -> [Effect] {
        switch line {
        case "q", "quit", "exit": return perform(.quit)
        case "q!", "quit!": return [.cancelJobs, .quit]
        default:
            message = nil
            return [startJob(line, origin: .commandLine)]
        }
    }

    private mutating func complete() {
        var (partial, candidates) = catalog.completions(for: commandLine.text)
        // Past the command and its subcommand, a word is a file or folder, as in a shell.
        let words = commandLine.text.split(separator: " ").count
        var paths = false
        if candidates.isEmpty, !partial.hasPrefix("-"), words >= 2 || (words == 1 && commandLine.text.hasSuffix(" ")) {
            candidates = completePaths(partial)
            paths = true
        }
        guard !candidates.isEmpty else {
            completions = []
            return
        }
        let common = CommandCatalog.commonPrefix(candidates)
        let unique = candidates.count == 1 ? candidates[0] + (candidates[0].hasSuffix("/") ? "" : " ") : nil
        let completion = unique ?? common
        if completion.count > partial.count {
            commandLine.insert(String(completion.dropFirst(partial.count)))
        }
        // Paths are listed by their last part, as a shell lists them.
        let shown =
            paths
            ? candidates.map {
                String($0.dropLast($0.hasSuffix("/") ? 1 : 0).split(separator: "/").last ?? "")
                    + ($0.hasSuffix("/") ? "/" : "")
            } : candidates
        completions = candidates.count > 1 ? shown : []
    }

    // MARK: - Search, palette, help, confirm

    private mutating func handleSearch(_ key: Key) -> [Effect] {
        switch key {
        case .escape, .control("c"):
            mode = .normal
            searchQuery = ""
        case .enter:
            mode = .normal
            searchQuery = searchEditor.text
            guard !searchQuery.isEmpty else { return [] }
            let deeper = panels[focusedPanel].searchSubmitted(searchQuery)
            // A panel that searches deeper on enter (a trace's messages and results) shows what it
            // finds; the "No match" of the names searched while typing would contradict it.
            if !deeper.isEmpty { message = nil }
            return apply(deeper, from: panels[focusedPanel].id)
        default:
            guard searchEditor.handle(key) else { return [] }
            searchQuery = searchEditor.text
            guard focus == .panel, panels[focusedPanel].isSearchable else { return [] }
            if !searchQuery.isEmpty, !panels[focusedPanel].search(searchQuery, forward: true, includeCurrent: true) {
                message = StatusMessage(text: "No match for “\(searchQuery)”", level: .warn)
            } else {
                message = nil
            }
            return apply(panels[focusedPanel].takeEffects(), from: panels[focusedPanel].id)
        }
        return []
    }

    private mutating func handlePalette(_ key: Key) -> [Effect] {
        let count = palette.matches().count
        switch key {
        case .escape, .control("c"):
            mode = .normal
        case .up, .control("p"), .control("k"):
            palette.list.move(by: -1, count: count)
        case .down, .control("n"), .control("j"):
            palette.list.move(by: 1, count: count)
        case .enter:
            let matches = palette.matches()
            mode = .normal
            guard palette.list.selected < matches.count else { return [] }
            return choose(matches[palette.list.selected].item)
        default:
            if palette.query.handle(key) { palette.list = ListState() }
        }
        return []
    }

    private mutating func choose(_ item: PaletteState.Item) -> [Effect] {
        switch item.target {
        case .action(let action):
            return perform(action)
        case .command(let line, let needsArguments):
            if needsArguments {
                mode = .commandLine
                commandLine = LineEditor(line + " ")
                completions = []
                return []
            }
            history.record(line)
            return [.recordHistory(line)] + submit(line)
        }
    }

    private mutating func handleHelp(_ key: Key) -> [Effect] {
        if isFilteringHelp {
            switch key {
            case .enter: isFilteringHelp = false
            case .escape, .control("c"):
                isFilteringHelp = false
                helpFilter = LineEditor()
            default: if helpFilter.handle(key) { helpOffset = 0 }
            }
            return []
        }
        switch key {
        case .character("/"):
            isFilteringHelp = true
        case .escape where !helpFilter.isEmpty:
            helpFilter = LineEditor()
            helpOffset = 0
        case .escape, .character("?"), .character("q"), .control("c"): mode = .normal
        case .character("j"), .down: helpOffset += 1
        case .character("k"), .up: helpOffset = max(0, helpOffset - 1)
        case .pageDown, .control("d"), .character(" "): helpOffset += max(1, size.height / 2)
        case .pageUp, .control("u"): helpOffset = max(0, helpOffset - max(1, size.height / 2))
        case .character("g"), .home: helpOffset = 0
        case .character("G"), .end: helpOffset = Int.max / 2
        default: break
        }
        return []
    }

    private mutating func handleConfirmQuit(_ key: Key) -> [Effect] {
        switch key {
        case .character("y"), .character("Y"), .control("c"): return [.cancelJobs, .quit]
        case .character("n"), .character("N"), .escape, .character("q"): mode = .normal
        default: break
        }
        return []
    }

    // MARK: - Mouse

    private mutating func handle(_ event: MouseEvent) -> [Effect] {
        guard mode == .normal else { return [] }
        let layout = self.layout
        switch event.kind {
        case .press:
            if layout.tabs.contains(event.position) {
                if let index = tabBar.tabRects(in: layout.tabs).firstIndex(where: { $0.contains(event.position) }) {
                    return focusPanel(index)
                }
                return []
            }
            if layout.panel.contains(event.position) {
                focus = .panel
                return apply(
                    panels[focusedPanel].click(at: event.position, area: layout.panel), from: panels[focusedPanel].id)
            }
            if layout.output.contains(event.position) { focus = .output }
        case .wheelUp, .wheelDown:
            let action: PanelAction = event.kind == .wheelUp ? .up : .down
            var effects: [Effect] = []
            for _ in 0..<3 { effects += perform(.panel(action)) }
            return effects
        }
        return []
    }

    // MARK: - Jobs

    private mutating func finishJob(_ id: JobID, _ outcome: CommandOutcome) -> [Effect] {
        guard let index = jobs.firstIndex(where: { $0.id == id }) else { return [] }
        let job = jobs.remove(at: index)
        output.entries.append(OutputPane.Entry(command: job.title, outcome: outcome))
        if output.entries.count > 200 { output.entries.removeFirst(output.entries.count - 200) }
        var effects: [Effect] = []
        for request in outcome.requests {
            switch request {
            case .applyTheme(let newTheme):
                // A notebook on its scratch workspace chose a theme for that workspace, not this one.
                guard !job.place.isScratch else { continue }
                theme = forceMonochrome ? newTheme.monochrome() : newTheme
            case .quit:
                effects.append(.quit)
            }
        }
        switch job.origin {
        case .panel(let panelID, let tag):
            if let error = outcome.error {
                message = StatusMessage(text: "✗ \(job.title): \(firstLine(error))", level: .error)
            } else {
                // A panel's command says it is done (an export written, a run finished).
                let summary = firstLine(outcome.output)
                message = StatusMessage(text: "✓ " + (summary.isEmpty ? job.title : summary), level: .ok)
            }
            if let panelIndex = panels.firstIndex(where: { $0.id == panelID }) {
                // The panel hears how long it ran; what it says of it (a notebook's summary)
                // comes after, and so wins the status line.
                var timed = outcome
                timed.seconds = max(0, now - job.startedAt)
                panels[panelIndex].commandFinished(tag: tag, outcome: timed)
                effects += apply(panels[panelIndex].takeEffects(), from: panelID)
            }
        case .read:
            break
        case .commandLine:
            let text = outcome.error ?? outcome.output
            let lineCount = text.split(separator: "\n", omittingEmptySubsequences: false).count
            if let error = outcome.error {
                message = StatusMessage(text: "✗ " + firstLine(error), level: .error)
            } else if case let shown = outcome.output.split(separator: "\n").count, shown > 1 {
                // Shown whole in the pane below: its first line would be a table's header.
                message = StatusMessage(text: "✓ \(job.title): \(shown) lines below", level: .ok)
            } else {
                let summary = firstLine(outcome.output)
                message = StatusMessage(text: "✓ " + (summary.isEmpty ? job.title : summary), level: .ok)
            }
            // What the status line cannot show whole (a long error, its suggestion last) opens
            // the pane too.
            if lineCount > 1 || message.map({ statusLineCuts($0.text) }) == true {
                output.isVisible = true
                output.showsLog = false
                output.offset = 0
                focus = .output
            }
        }
        return effects
    }

    private func firstLine(_ text: String) -> String {
        String(text.split(separator: "\n").first ?? "")
    }
}
