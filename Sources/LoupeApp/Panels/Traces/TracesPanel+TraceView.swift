import LoupeAgents
import LoupeBase
import LoupeKit
import LoupeStore
import LoupeTUI

extension TracesPanel {
    /// The open trace: its span tree beside the content of the span under the cursor, which is a
    /// step (`h`, `l`) or any span (`J`, `K`, `e`). Contents are read one span at a time, the
    /// steps beside the cursor ahead of it, so stepping shows no "loading…".
    package struct TraceView: Sendable {
        /// What the viewer keeps from one trace to the next.
        package struct Settings: Hashable, Sendable {
            /// Whether a model call's earlier messages show whole (`c`); folded to a line each by default.
            package var conversationExpanded = false
            /// Playback speed, an index into ``TracesPanel/playSpeeds``.
            package var speed = 1
        }

        package private(set) var trace: TraceService.Loaded
        /// The step cursor, an index into `trace.steps`.
        package private(set) var step = 0
        package private(set) var detail: SpanDetail?
        /// A span under the cursor that is not a step (set by `J`, `K` and `e`), or nil.
        package private(set) var spanCursor: Int?
        package private(set) var settings: Settings
        package private(set) var raw = false
        package var detailOffset = 0
        /// Playback: `space` steps forward on its own every `playSpeeds[settings.speed]` seconds.
        package private(set) var playing = false
        /// Spans whose content matched the last confirmed `/`.
        package private(set) var deepMatches: (query: String, ordinals: [Int])?
        /// The generated tokens of the span under the cursor, while they are open (`T`).
        package private(set) var tokenView: TokenView?
        /// A span and token whose tokens open once the span is read: a token fork just opened,
        /// shown at the token it changed.
        private var pendingTokens: (ordinal: Int, token: Int)?
        /// Span contents read so far, by ordinal, and those asked for.
        private var detailCache: [Int: SpanDetail] = [:]
        private var detailsAsked: Set<Int> = []
        /// Which read of the trace this is: read-ahead answers asked before it are dropped.
        private var generation: Int
        private var lastAdvance = 0.0

        /// A trace just read, its cursor on the first step or, when `following` (a live trace),
        /// on its newest. ``loadStep()`` then asks for what the cursor shows.
        init(_ trace: TraceService.Loaded, generation: Int, settings: Settings, following: Bool) {
            self.trace = trace
            self.generation = generation
            self.settings = settings
            step = following ? max(0, trace.steps.count - 1) : 0
        }

        /// The ordinal of the span under the cursor: a span that is not a step when `J`/`K`/`e`
        /// chose one, otherwise the step's.
        package var currentOrdinal: Int? {
            if let spanCursor { return spanCursor }
            guard step < trace.steps.count else { return nil }
            return trace.steps[step]
        }

        /// The trace read again (a run recorded live has grown): the cursor stays on its span, or
        /// follows the newest step when it was on the last one; contents are read again.
        mutating func reload(_ loaded: TraceService.Loaded, generation: Int) -> [PanelEffect] {
            let wasLast = step >= trace.steps.count - 1
            // The span under the cursor, by id: spans that arrive (a parent after its children)
            // move the others' positions.
            let cursorSpan = currentOrdinal.map { trace.spans[$0].spanID }
            detailCache = [:]
            detailsAsked = []
            self.generation = generation
            if !(spanCursor.map { loaded.spans.indices.contains($0) } ?? true) { spanCursor = nil }
            trace = loaded
            step = wasLast ? max(0, loaded.steps.count - 1) : min(step, max(0, loaded.steps.count - 1))
            if !wasLast, let cursorSpan, let ordinal = loaded.spans.firstIndex(where: { $0.spanID == cursorSpan }) {
                return moveSpan(to: ordinal)
            }
            return loadStep()
        }

        // MARK: - Keys

        /// Navigation: `h`/`l` step, `g`/`G` the first and last step, `j`/`k` and the page keys
        /// scroll the detail.
        mutating func perform(_ action: PanelAction, area: Rect) -> [PanelEffect] {
            if tokenView != nil {
                tokenView?.perform(action)
                return []
            }
            switch action {
            case .right:
                // From a span that is not a step, the next step is the first after it.
                if let spanCursor, let next = trace.steps.firstIndex(where: { $0 > spanCursor }) {
                    return moveStep(to: next)
                }
                return moveStep(to: step + 1)
            case .left: return moveStep(to: spanCursor == nil ? step - 1 : step)
            case .top: return moveStep(to: 0)
            case .bottom: return moveStep(to: trace.steps.count - 1)
            case .down: detailOffset += 1
            case .up: detailOffset = max(0, detailOffset - 1)
            case .pageDown: detailOffset += max(1, area.height - 6)
            case .pageUp: detailOffset = max(0, detailOffset - max(1, area.height - 6))
            case .open, .specific: break
            }
            return []
        }

        /// The panel's own keys as an open trace reads them.
        mutating func perform(_ action: Action) -> [PanelEffect] {
            switch action {
            case .error: return nextSpan { $0.status == "error" }
            case .nextSpan: return moveSpan(to: min(trace.spans.count - 1, (currentOrdinal ?? -1) + 1))
            case .previousSpan: return moveSpan(to: max(0, (currentOrdinal ?? 1) - 1))
            case .tool: return next { $0.kind == SpanKind.tool.rawValue }
            case .roofline:
                guard let ordinal = currentOrdinal else { return [] }
                return [.ask(ForwardPasses(trace: trace.summary.id, ordinal: ordinal))]
            case .raw:
                raw.toggle()
                detailOffset = 0
            case .conversation:
                settings.conversationExpanded.toggle()
            case .tokens:
                if tokenView != nil {
                    tokenView = nil
                    return []
                }
                return openTokens()
            case .nextUncertain, .previousUncertain:
                if tokenView == nil, let failed = openTokens().first { return [failed] }
                guard tokenView?.moveToUncertain(forward: action == .nextUncertain) == true else {
                    return [.status("no low-confidence or near-tie token in this step", .info)]
                }
            case .play:
                playing.toggle()
                lastAdvance = 0
                if playing, step >= trace.steps.count - 1 { return moveStep(to: 0) }
            case .faster: settings.speed = min(TracesPanel.playSpeeds.count - 1, settings.speed + 1)
            case .slower: settings.speed = max(0, settings.speed - 1)
            case .fork, .forkInEditor, .mark, .diff, .attention, .lens, .features:
                // The panel's: the fork's editor, the mark and the token's insides outlive the trace view.
                break
            case .sort, .reverse, .reload, .sessions:
                // The list's keys.
                break
            }
            return []
        }

        /// A playback tick at `now` seconds: the next step when its time has come; playing stops
        /// at the last.
        mutating func tick(_ now: Double) -> [PanelEffect] {
            guard playing, now - lastAdvance >= TracesPanel.playSpeeds[settings.speed] else { return [] }
            lastAdvance = now
            if step >= trace.steps.count - 1 {
                playing = false
                return []
            }
            return moveStep(to: step + 1)
        }

        /// Opens the generated tokens of the span under the cursor; what is wrong otherwise (its
        /// content not read yet, no tokens, a malformed record) comes back as a status.
        private mutating func openTokens() -> [PanelEffect] {
            guard let ordinal = currentOrdinal else { return [] }
            guard let detail else { return [.status("the step is still loading; press T again", .info)] }
            do {
                guard
                    let opened = try TokenView(ordinal: ordinal, spanID: trace.spans[ordinal].spanID, detail: detail)
                else {
                    return [
                        .status(
                            "span \(ordinal) has no generated tokens: only a local model's steps record them "
                                + "(loupe agent run --provider local)", .info)
                    ]
                }
                tokenView = opened
            } catch {
                return [.status(UntrustedText.sanitized(error.description), .error)]
            }
            return []
        }

        /// Whether the token view's fork line is open (it takes the keys).
        package var choosingFork: Bool { tokenView?.chooser != nil }

        /// `F` in the token view: the fork line on the cursor token.
        mutating func openForkChooser() { tokenView?.openChooser() }

        /// A key on the token view's fork line.
        mutating func handleForkChooser(_ key: Key) -> TokenForkChooser.Outcome {
            tokenView?.handleChooser(key) ?? .cancelled
        }

        /// Puts the cursor on span `ordinal` and opens its tokens at `token` once its content is
        /// read (a token fork, shown where it changed).
        mutating func focus(ordinal: Int, token: Int) -> [PanelEffect] {
            pendingTokens = (ordinal, token)
            let effects = moveSpan(to: ordinal)
            openPendingTokens()
            return effects
        }

        private mutating func openPendingTokens() {
            guard let pending = pendingTokens, currentOrdinal == pending.ordinal, detail != nil else { return }
            pendingTokens = nil
            if openTokens().isEmpty { tokenView?.select(pending.token) }
        }

        /// Closes the token view; false when it was not open.
        mutating func closeTokens() -> Bool {
            defer { tokenView = nil }
            return tokenView != nil
        }

        // MARK: - Answers

        /// A span's content read: kept, and shown when the cursor is on it. A failure under
        /// the cursor comes back as the message to show.
        mutating func receive(_ asked: LoadSpan, _ loaded: Load<SpanDetail>) -> String? {
            guard asked.trace == trace.summary.id, asked.generation == generation else { return nil }
            detailsAsked.remove(asked.ordinal)
            switch loaded {
            case .loaded(let found):
                if detailCache.count > 256 { detailCache = [:] }
                detailCache[asked.ordinal] = found
                if asked.ordinal == currentOrdinal {
                    detail = found
                    openPendingTokens()
                }
            case .failed(let message):
                guard asked.ordinal == currentOrdinal else { return nil }
                detail = nil
                return message
            }
            return nil
        }

        /// The spans whose content matched a confirmed `/`: the cursor goes to the first.
        mutating func matched(_ query: String, ordinals: [Int]) -> [PanelEffect] {
            deepMatches = (query, ordinals)
            return jumpToMatch(forward: true, includeCurrent: true)
        }

        // MARK: - Search

        /// `n`/`N` after `/`: the next step whose content matched the confirmed search, else
        /// whose name, tool, model or error message contains `query`. What the move asks for is
        /// added to `effects`.
        mutating func search(
            _ query: String, forward: Bool, includeCurrent: Bool, effects: inout [PanelEffect]
        ) -> Bool {
            // After enter, n/N walk the steps whose content matched (messages, arguments, results).
            if let matches = deepMatches, matches.query == query, !matches.ordinals.isEmpty {
                let before = step
                effects += jumpToMatch(forward: forward, includeCurrent: includeCurrent)
                return step != before || includeCurrent
            }
            // The steps' names, tools, models and error messages.
            let texts = trace.steps.map { ordinal -> String in
                let s = trace.spans[ordinal]
                return [s.name, s.toolName, s.model, s.statusMessage].compactMap { $0 }.joined(separator: " ")
            }
            guard
                let index = nextMatch(
                    in: texts, from: step, query: query, forward: forward, includeCurrent: includeCurrent)
            else { return false }
            effects += moveStep(to: index)
            return true
        }

        // MARK: - Cursor

        /// Moves to the next step whose span matched the confirmed search.
        private mutating func jumpToMatch(forward: Bool, includeCurrent: Bool) -> [PanelEffect] {
            guard let matches = deepMatches else { return [] }
            let matching = Set(matches.ordinals)
            let steps = trace.steps
            guard
                let index = nextIndex(
                    count: steps.count, from: step, forward: forward, includeCurrent: includeCurrent,
                    where: { matching.contains(steps[$0]) })
            else { return [] }
            return moveStep(to: index)
        }

        /// Shows the span under the cursor: at once when its content was read before (the steps
        /// next to it are read ahead, so stepping shows no "loading…"), else once it is read.
        mutating func loadStep() -> [PanelEffect] {
            detailOffset = 0
            if tokenView?.ordinal != currentOrdinal { tokenView = nil }
            guard let ordinal = currentOrdinal else {
                detail = nil
                return []
            }
            detail = detailCache[ordinal]
            var wanted = [ordinal]
            if let index = trace.steps.firstIndex(of: ordinal) ?? trace.steps.lastIndex(where: { $0 < ordinal }) {
                wanted += [index + 1, index - 1].filter { trace.steps.indices.contains($0) }.map { trace.steps[$0] }
            }
            return wanted.filter { detailCache[$0] == nil && !detailsAsked.contains($0) }.map { ordinal in
                detailsAsked.insert(ordinal)
                return .ask(LoadSpan(trace: trace.summary.id, ordinal: ordinal, generation: generation))
            }
        }

        private mutating func moveStep(to index: Int) -> [PanelEffect] {
            guard !trace.steps.isEmpty else { return [] }
            let clamped = max(0, min(trace.steps.count - 1, index))
            guard clamped != step || spanCursor != nil || detail == nil else { return [] }
            step = clamped
            spanCursor = nil
            return loadStep()
        }

        /// Puts the cursor on span `ordinal`, a step or not.
        private mutating func moveSpan(to ordinal: Int) -> [PanelEffect] {
            guard trace.spans.indices.contains(ordinal) else { return [] }
            if let index = trace.steps.firstIndex(of: ordinal) {
                step = index
                spanCursor = nil
            } else {
                spanCursor = ordinal
                // l and h go on from the nearest step before it.
                step = max(0, trace.steps.lastIndex { $0 < ordinal } ?? 0)
            }
            return loadStep()
        }

        /// The next span after the cursor (in the tree, any kind) that matches, wrapping around.
        private mutating func nextSpan(where matches: (SpanRow) -> Bool) -> [PanelEffect] {
            let spans = trace.spans
            guard
                let ordinal = nextIndex(count: spans.count, from: currentOrdinal ?? -1, where: { matches(spans[$0]) })
            else { return [] }
            return moveSpan(to: ordinal)
        }

        /// The next step after the cursor whose span matches, wrapping around.
        private mutating func next(where matches: (SpanRow) -> Bool) -> [PanelEffect] {
            let (spans, steps) = (trace.spans, trace.steps)
            guard let index = nextIndex(count: steps.count, from: step, where: { matches(spans[steps[$0]]) })
            else { return [] }
            return moveStep(to: index)
        }

        // MARK: - Render

        /// The trace's totals on a line, then its span tree beside the detail of the span under the
        /// cursor (the detail alone when `zoomed`).
        func render(into frame: inout Frame, area: Rect, theme: Theme, zoomed: Bool) {
            let s = trace.summary
            let usage = (s.inputTokens, s.outputTokens)
            frame.draw(
                [
                    Span(" \(s.format)", theme.accent),
                    // By importance, as Langfuse heads a trace (level, latency, cost, tokens): on a narrow
                    // screen what went wrong, how long and how much survive; the step and span counts,
                    // which the tree beside shows anyway, give way first.
                    s.errorCount > 0
                        ? Span(" · ✗ \(TracesPanel.plural(s.errorCount, "error"))", theme.status(.error))
                        : Span("", theme.dim),
                    Span(
                        " · " + (s.timed ? TraceText.duration(s.durationNs) : "untimed") + " · cost "
                            + TraceText.cost(s.cost) + " · tokens " + TracesPanel.tokens(usage.0, usage.1) + " · "
                            + TracesPanel.plural(s.stepCount, "step") + " · " + TracesPanel.plural(s.spanCount, "span"),
                        theme.dim),
                    playing
                        ? Span(" · ▶ \(Calculator.format(TracesPanel.playSpeeds[settings.speed])) s/step", theme.accent)
                        : Span("", theme.dim),
                    deepMatches.map {
                        Span(
                            " · “\(UntrustedText.sanitized($0.query))” in \(TracesPanel.plural($0.ordinals.count, "span"))",
                            theme.accent)
                    } ?? Span("", theme.dim),
                    // The first error's message, wherever its span is (e goes there), as room allows.
                    trace.spans.first { $0.status == "error" }?.statusMessage.map {
                        Span(" · first: " + UntrustedText.sanitized($0) + " (e)", theme.status(.error))
                    } ?? Span("", theme.dim),
                ], at: Point(x: area.x, y: area.y), clip: area)
            let body = Rect(x: area.x, y: area.y + 1, width: area.width, height: area.height - 1)
            if zoomed {
                renderDetail(into: &frame, area: body, theme: theme)
                return
            }
            let parts = body.split(.horizontal, [.percentage(48), .fill(1)])
            renderTree(into: &frame, area: parts[0], theme: theme)
            renderDetail(into: &frame, area: parts[1], theme: theme)
        }

        /// The span tree, each row with its bar on the trace's time axis; the step under the cursor
        /// selected, errors marked.
        private func renderTree(into frame: inout Frame, area: Rect, theme: Theme) {
            let inner = Block(title: "Spans", trailingTitle: trace.summary.timed ? "timeline" : "order", focused: false)
                .render(into: &frame, area: area, theme: theme)
            guard inner.width > 8, inner.height > 0 else { return }
            let current = currentOrdinal ?? -1
            let barWidth = max(8, inner.width * 2 / 5)
            let labelWidth = inner.width - barWidth - 1
            // Keep the current span in view.
            // The last row is the time axis when the spans leave room for it.
            let axis = trace.summary.timed && trace.spans.count < inner.height
            let top = max(0, min(current - inner.height / 2, trace.spans.count - inner.height))
            let start = trace.summary.startedNs
            let total = max(1, trace.summary.endedNs - start)
            let glyph: [String: String] = [
                "agent": "◆", "llm": "●", "tool": "⚒", "retrieval": "⌕", "embedding": "∿", "eval": "✓",
            ]
            for (row, span) in trace.spans.dropFirst(top).prefix(inner.height).enumerated() {
                let y = inner.y + row
                let depth = trace.depths[span.ordinal]
                let failed = span.status == "error"
                let selected = span.ordinal == current
                let label =
                    String(repeating: "  ", count: min(depth, 8)) + (glyph[span.kind] ?? "·") + " "
                    + UntrustedText.sanitized(span.name) + (failed ? " ✗" : "")
                let style: Style =
                    selected
                    ? theme.selection : failed ? theme.status(.error) : span.kind == "agent" ? theme.accent : theme.text
                frame.draw(
                    TextWidth.fit(label, toColumns: labelWidth), at: Point(x: inner.x, y: y), style: style, clip: inner)
                // The bar: where the span sits in the trace's time (untimed: its place in order).
                let begin = span.startNs - start
                let end = (span.endNs ?? span.startNs) - start
                let from = Int(Double(begin) / Double(total) * Double(barWidth - 1))
                let to = max(from, Int(Double(end) / Double(total) * Double(barWidth - 1)))
                let bar = String(repeating: " ", count: from) + String(repeating: "▬", count: to - from + 1)
                frame.draw(
                    bar, at: Point(x: inner.x + labelWidth + 1, y: y),
                    style: failed ? theme.status(.error) : selected ? theme.key : theme.dim, clip: inner)
            }
            if axis {
                let end = TraceText.duration(total)
                let line = "0" + String(repeating: "·", count: max(1, barWidth - 1 - end.count)) + end
                frame.draw(
                    line, at: Point(x: inner.x + labelWidth + 1, y: inner.maxY - 1), style: theme.dim, clip: inner)
            }
        }

        private func renderDetail(into frame: inout Frame, area: Rect, theme: Theme) {
            guard let ordinal = currentOrdinal else {
                _ = Block(title: "Step", focused: false).render(into: &frame, area: area, theme: theme)
                return
            }
            let span = trace.spans[ordinal]
            let tokens = tokenView.flatMap { $0.ordinal == ordinal ? $0 : nil }
            let inner = Block(
                title: "\(span.kind) · \(UntrustedText.sanitized(span.name))",
                // The footer names T too: a narrow pane keeps the key whole rather than the words.
                trailingTitle: tokens == nil ? "" : area.width >= 56 ? "tokens · T/esc: close" : "T: close",
                focused: false
            ).render(into: &frame, area: area, theme: theme)
            guard inner.width > 8, inner.height > 0 else { return }
            if let tokens {
                tokens.render(into: &frame, area: inner, theme: theme)
                return
            }
            var lines = TracesPanel.detailLines(
                trace: trace, ordinal: ordinal, detail: detail, raw: raw, theme: theme, width: inner.width,
                conversationExpanded: settings.conversationExpanded)
            // A step found by `/` shows where the text is.
            if let matches = deepMatches, matches.ordinals.contains(ordinal) {
                lines = lines.map { $0.highlighting(matches.query, as: theme.match) }
            }
            _ = TextView(lines: lines).render(into: &frame, area: inner, offset: detailOffset, theme: theme)
        }
    }
}
