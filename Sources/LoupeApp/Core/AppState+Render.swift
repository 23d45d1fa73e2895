import LoupeBase
import LoupeKit
import LoupeTUI

extension AppState {
    /// Draws the whole screen. Pure: the same state always gives the same frame.
    package func render() -> Frame {
        var frame = Frame(size: size, style: theme.base)
        if ShellLayout.isTooSmall(size) {
            renderTooSmall(into: &frame)
            return frame
        }
        let layout = self.layout
        renderTabs(into: &frame, area: layout.tabs)
        if !layout.panel.isEmpty {
            let context = PanelRenderContext(
                theme: theme, focused: focus == .panel && mode != .help && mode != .palette,
                zoomed: zoomed, searchQuery: searchQuery
            )
            panels[focusedPanel].render(into: &frame, area: layout.panel, context: context)
        }
        if !layout.output.isEmpty { renderOutput(into: &frame, area: layout.output) }
        renderStatus(into: &frame, area: layout.status)
        renderFooter(into: &frame, area: layout.footer)
        switch mode {
        case .help: renderHelp(into: &frame)
        case .palette: renderPalette(into: &frame)
        case .confirmQuit: renderConfirmQuit(into: &frame)
        case .commandLine: renderCompletions(into: &frame, above: layout.footer)
        case .normal, .search: break
        }
        return frame
    }

    private func renderTooSmall(into frame: inout Frame) {
        let lines = [
            "Terminal too small",
            "\(size.width)×\(size.height), need \(ShellLayout.minimumSize.width)×\(ShellLayout.minimumSize.height)",
            "enlarge it, or q to quit",
        ]
        let top = max(0, (size.height - lines.count) / 2)
        for (index, line) in lines.enumerated() {
            let x = max(0, (size.width - TextWidth.of(line)) / 2)
            frame.draw(line, at: Point(x: x, y: top + index), style: index == 0 ? theme.title : theme.dim)
        }
    }

    private func renderTabs(into frame: inout Frame, area: Rect) {
        frame.fill(area, style: theme.statusBar)
        let bar = tabBar
        bar.render(into: &frame, area: area, theme: theme)
        let used = bar.tabRects(in: area).last(where: { !$0.isEmpty })?.maxX ?? area.x
        let name = "loupe"
        if area.maxX - used > TextWidth.of(name) + 3 {
            frame.draw(
                name, at: Point(x: area.maxX - TextWidth.of(name) - 1, y: area.y),
                style: theme.title.patched(with: theme.statusBar))
        }
    }

    private func renderOutput(into frame: inout Frame, area: Rect) {
        let lines = output.lines(theme: theme)
        let title = output.showsLog ? "Log" : "Output: :" + (output.entries.last?.command ?? "")
        let failed = !(output.showsLog || output.entries.last?.outcome.succeeded ?? true)
        let block = Block(
            title: failed ? title + "  ✗" : title, trailingTitle: "esc close · o log", focused: focus == .output)
        let inner = block.render(into: &frame, area: area, theme: theme)
        let offset = min(output.offset, max(0, lines.count - inner.height))
        // Command output is mostly tables: a row cut at the edge, marked with "…", reads better
        // than one wrapped under itself (the pane has no keys to scroll sideways; y copies it whole).
        let text = inner.inset(dx: 1, dy: 0)
        TextView(lines: lines.map { $0.truncated(toColumns: text.width - 1) }, wrap: false).render(
            into: &frame, area: text, offset: offset, theme: theme)
    }

    private func renderStatus(into frame: inout Frame, area: Rect) {
        frame.fill(area, style: theme.statusBar)
        let left = frame.draw(statusSpans(), at: Point(x: area.x, y: area.y), clip: area)
        guard let message else { return }
        let room = area.width - left - 3
        guard room > 8 else { return }
        let text = TextWidth.truncate(UntrustedText.sanitized(message.text), toColumns: room)
        frame.draw(
            text, at: Point(x: area.maxX - TextWidth.of(text) - 1, y: area.y),
            style: theme.status(message.level).patched(with: Style(background: theme.statusBar.background)))
    }

    /// The status line's left part: workspace, panel, zoom, connection, listener and jobs.
    private func statusSpans() -> [Span] {
        let bar = theme.statusBar
        var spans: [Span] = [
            Span(" ◆ ", theme.accent.patched(with: Style(background: bar.background))),
            Span(workspaceName, bar.adding(.bold)),
            Span("  │  ", theme.dim.patched(with: Style(background: bar.background))),
            Span(panels[focusedPanel].title, bar),
        ]
        if zoomed { spans.append(Span("  [zoom]", theme.dim.patched(with: Style(background: bar.background)))) }
        if let unreachable {
            spans.append(Span("  │  ", theme.dim.patched(with: Style(background: bar.background))))
            spans.append(
                Span(
                    "⚠ " + TextWidth.truncate(UntrustedText.sanitized(unreachable), toColumns: 60),
                    theme.status(.error).patched(with: Style(background: bar.background))))
        }
        if let listening {
            spans.append(Span("  │  ", theme.dim.patched(with: Style(background: bar.background))))
            spans.append(
                Span("⇣ " + listening, theme.status(.ok).patched(with: Style(background: bar.background))))
        }
        if let job = jobs.first {
            spans.append(Span("  │  ", theme.dim.patched(with: Style(background: bar.background))))
            spans.append(Span(jobSummary(job), theme.status(.info).patched(with: Style(background: bar.background))))
        }
        return spans
    }

    /// True when `text` would be cut to fit the status line beside what it shows now.
    func statusLineCuts(_ text: String) -> Bool {
        TextWidth.of(UntrustedText.sanitized(text)) > size.width - statusSpans().width - 3
    }

    /// `⠹ workspace vacuum 40% ETA 3s (+1 more)`.
    func jobSummary(_ job: JobStatus) -> String {
        let spinner = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
        let frameIndex = Int(max(0, now) * 10) % spinner.count
        var text = spinner[frameIndex] + " " + TextWidth.truncate(job.title, toColumns: 28)
        if let progress = job.progress {
            if let fraction = progress.fraction { text += " \(Int((fraction * 100).rounded(.down)))%" }
            if let eta = progress.estimatedSecondsRemaining(elapsed: now - job.startedAt) {
                text += " ETA " + formatDuration(eta)
            }
        }
        if jobs.count > 1 { text += " (+\(jobs.count - 1) more)" }
        return text
    }

    private func renderFooter(into frame: inout Frame, area: Rect) {
        switch mode {
        case .commandLine:
            commandLine.render(into: &frame, area: area, prompt: [Span(":", theme.key)], style: theme.input)
            return
        case .search:
            searchEditor.render(into: &frame, area: area, prompt: [Span("/", theme.key)], style: theme.input)
            if searchEditor.text.isEmpty, let hint = panels[focusedPanel].searchHint {
                frame.draw(hint, at: Point(x: area.x + 3, y: area.y), style: theme.dim, clip: area)
            }
            return
        default:
            break
        }
        var hints: [(String, String)] = []
        if focus == .output {
            hints = [("j/k", "scroll"), ("esc", "close"), ("o", "log"), ("z", "zoom")]
        } else {
            for binding in panels[focusedPanel].keymap.bindings {
                if let label = binding.footer { hints.append((binding.keyNames, label)) }
            }
            if panels[focusedPanel].canGoBack { hints.append(("esc", "back")) }
        }
        // A panel that takes keys first (the Review item view's `q` goes back) keeps them out of
        // the global hints.
        let panel = panels[focusedPanel]
        let taken = focus == .panel && panel.takesKeysFirst ? Set(panel.keymap.bindings.flatMap(\.keys)) : []
        for binding in Keymaps.global.bindings {
            let keys = binding.keys.filter { !taken.contains($0) }
            if let label = binding.footer, !keys.isEmpty {
                hints.append((keys.map(\.displayName).joined(separator: " ").replacingCtrl(), label))
            }
        }
        var x = area.x + 1
        for (keys, label) in hints {
            let width = TextWidth.of(keys) + 1 + TextWidth.of(label) + 2
            if x + width > area.maxX { break }
            x += frame.draw(keys, at: Point(x: x, y: area.y), style: theme.key)
            x += frame.draw(" " + label + "  ", at: Point(x: x, y: area.y), style: theme.dim)
        }
    }

    private func renderCompletions(into frame: inout Frame, above footer: Rect) {
        guard !completions.isEmpty else { return }
        let text = completions.joined(separator: "  ")
        let row = Rect(x: footer.x, y: footer.y - 1, width: footer.width, height: 1)
        frame.fill(row, style: theme.overlay)
        frame.draw(
            " " + text, at: Point(x: row.x, y: row.y), style: theme.overlay.patched(with: theme.accent), clip: row)
    }

    // MARK: - Overlays

    /// The help overlay's lines, built from the keymaps: the focused panel's keys first (what
    /// one opens help for), then navigation and the global keys; with a filter, only the keys
    /// whose name or description contains it.
    func helpLines() -> [[Span]] {
        var lines: [[Span]] = []
        let panelMap = panels[focusedPanel].keymap
        var ordered = keymaps.filter { $0.name != panelMap.name }
        if !panelMap.bindings.isEmpty { ordered.insert(panelMap, at: 0) }
        let filter = helpFilter.text.trimmingWhitespace()
        for keymap in ordered {
            let bindings = keymap.bindings.filter { binding in
                !(keymap.name == "Global" && isDigitBinding(binding))
                    && (filter.isEmpty
                        || TextSearch.containsIgnoringCase(binding.keyNames + " " + binding.help, filter))
            }
            guard !bindings.isEmpty else { continue }
            if !lines.isEmpty { lines.append([]) }
            lines.append([Span(keymap.name, theme.title)])
            for binding in bindings {
                lines.append([
                    Span("  " + TextWidth.fit(binding.keyNames, toColumns: 16), theme.key),
                    Span(binding.help, theme.text),
                ])
                if keymap.name == "Global", binding.action == .previousPanel, filter.isEmpty {
                    lines.append([
                        Span("  " + TextWidth.fit("1 … 9", toColumns: 16), theme.key),
                        Span("Go to panel 1 … 9", theme.text),
                    ])
                }
            }
        }
        if lines.isEmpty { lines.append([Span("No key matches “\(UntrustedText.sanitized(filter))”.", theme.dim)]) }
        lines.append([])
        lines.append([
            Span("Every key runs a command too: press : and type help, or run loupe --help in a shell.", theme.dim)
        ])
        return lines
    }

    private func isDigitBinding(_ binding: KeyBinding) -> Bool {
        if case .focusPanel = binding.action { return true }
        return false
    }

    private func overlayArea(width: Int, height: Int) -> Rect {
        let body = Rect(x: 0, y: 1, width: size.width, height: size.height - 3)
        return body.centered(width: width, height: height)
    }

    private func renderHelp(into frame: inout Frame) {
        let lines = helpLines()
        let filtered = isFilteringHelp || !helpFilter.isEmpty
        let area = overlayArea(
            width: min(96, size.width - 4), height: min(lines.count + 2 + (filtered ? 1 : 0), size.height - 4))
        frame.fill(area, style: theme.overlay)
        let inner = Block(
            title: "Keys · \(panels[focusedPanel].title) first", trailingTitle: "/ filter · j/k scroll · esc close",
            focused: true
        ).render(into: &frame, area: area, theme: theme)
        var body = inner
        if filtered {
            helpFilter.render(
                into: &frame, area: inner.row(0), prompt: [Span("/", theme.key)], style: theme.input,
                showCursor: isFilteringHelp)
            body = Rect(x: inner.x, y: inner.y + 1, width: inner.width, height: inner.height - 1)
        }
        let offset = min(helpOffset, max(0, lines.count - body.height))
        let text = body.inset(dx: 1, dy: 0)
        TextView(lines: lines.map { $0.truncated(toColumns: text.width - 1) }, wrap: false).render(
            into: &frame, area: text, offset: offset, theme: theme)
    }

    private func renderPalette(into frame: inout Frame) {
        let matches = palette.matches()
        let height = min(max(8, size.height / 2), size.height - 4)
        let width = min(90, size.width - 4)
        let area = Rect(x: (size.width - width) / 2, y: 2, width: width, height: height)
        frame.fill(area, style: theme.overlay)
        let inner = Block(
            title: "Command palette", trailingTitle: "\(matches.count) of \(palette.items.count)", focused: true
        )
        .render(into: &frame, area: area, theme: theme)
        guard inner.height >= 2 else { return }
        palette.query.render(into: &frame, area: inner.row(0), prompt: [Span("› ", theme.key)], style: theme.input)
        let listArea = Rect(x: inner.x, y: inner.y + 1, width: inner.width, height: inner.height - 1)
        let titleWidth = min(36, inner.width / 2)
        let items = matches.map { match -> [Span] in
            var spans: [Span] = []
            var plain = ""
            for (offset, character) in match.item.title.enumerated() {
                if match.positions.contains(offset) {
                    if !plain.isEmpty { spans.append(Span(plain, theme.text)) }
                    plain = ""
                    spans.append(Span(String(character), theme.match))
                } else {
                    plain.append(character)
                }
            }
            if !plain.isEmpty { spans.append(Span(plain, theme.text)) }
            let padding = max(1, titleWidth - TextWidth.of(match.item.title))
            spans.append(Span(String(repeating: " ", count: padding) + match.item.detail, theme.dim))
            return spans
        }
        var state = palette.list
        ListView(items: items, focused: true).render(into: &frame, area: listArea, state: &state, theme: theme)
    }

    private func renderConfirmQuit(into frame: inout Frame) {
        let running = jobs.prefix(3).map { TextWidth.truncate($0.title, toColumns: 40) }.joined(separator: ", ")
        let more = jobs.count > 3 ? " and \(jobs.count - 3) more" : ""
        // A job may end while the dialog is up; it then says so instead of counting none.
        let lines =
            jobs.isEmpty
            ? ["Nothing is running any more.", "", "y quit    n stay"]
            : [
                "\(jobs.count) job\(jobs.count == 1 ? " is" : "s are") running: \(running)\(more).",
                "Quit anyway? Running jobs are cancelled; the workspace",
                "keeps everything they committed.",
                "",
                "y quit    n stay",
            ]
        let width = min(size.width - 4, max(40, lines.map { TextWidth.of($0) }.max() ?? 0) + 4)
        let area = overlayArea(width: width, height: lines.count + 2)
        frame.fill(area, style: theme.overlay)
        let inner = Block(title: "Quit loupe?", focused: true).render(into: &frame, area: area, theme: theme)
        for (index, line) in lines.enumerated() {
            frame.draw(
                " " + line, at: Point(x: inner.x, y: inner.y + index),
                style: index == lines.count - 1 ? theme.key : theme.text, clip: inner)
        }
    }
}

/// `1m20s`, `3.2s`, `45s`.
func formatDuration(_ seconds: Double) -> String {
    guard seconds.isFinite else { return "?" }
    if seconds < 10 { return String(Double(Int(seconds * 10)) / 10) + "s" }
    let whole = Int(seconds.rounded())
    if whole < 60 { return "\(whole)s" }
    if whole < 3600 { return "\(whole / 60)m\(whole % 60)s" }
    return "\(whole / 3600)h\(whole % 3600 / 60)m"
}

extension String {
    /// `ctrl+p` as the footer writes it: `^p`.
    fileprivate func replacingCtrl() -> String {
        hasPrefix("ctrl+") ? "^" + dropFirst(5) : self
    }
}
