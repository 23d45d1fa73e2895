import Foundation
import LoupeAgents
import LoupeBase
import LoupeKit
import LoupeStore
import LoupeTUI

/// Agent-trace replay: the imported traces, then one trace as a span tree beside its timeline
/// with a step cursor, and at each step the conversation as it stood, the call's input and
/// output, tool arguments and result, tokens (step and cumulative) and latency.
package struct TracesPanel: Panel {
    package let id = PanelID.traces
    package let title = "Traces"

    package private(set) var traces: [TraceSummary]?
    package var list = ListState()
    package private(set) var sort = TableSort(column: 0, ascending: true)
    /// The open trace and its step cursor (an index into `trace.steps`).
    package private(set) var trace: TraceService.Loaded?
    package private(set) var step = 0
    package private(set) var detail: SpanDetail?
    package private(set) var raw = false
    package var detailOffset = 0
    package private(set) var error: String?
    /// Playback: `space` steps forward on its own every `playSpeeds[speed]` seconds.
    package private(set) var playing = false
    package private(set) var speed = 1
    private var lastAdvance = 0.0
    /// Spans of the open trace whose content matched the last confirmed `/`.
    package private(set) var deepMatches: (query: String, ordinals: [Int])?

    package static let playSpeeds = [2.0, 1.0, 0.5, 0.25, 0.1]
    /// The trace `m` marked, to compare another with (`d`).
    package private(set) var marked: Int64?
    /// The diff view, when open: two traces' steps aligned.
    package private(set) var diff: TraceDiff?
    package var diffList = ListState()
    /// Fork editing: the new tool result or user message for the step under the cursor.
    package var forkInput = LineEditor("")
    package private(set) var forking = false
    private static let forkTag = 1
    private var queued: [PanelEffect] = []

    package mutating func takeEffects() -> [PanelEffect] {
        defer { queued = [] }
        return queued
    }

    package static let sortColumns = ["start", "duration", "steps", "tokens", "cost", "errors"]

    package init() {}

    package var initialEffects: [PanelEffect] { [.ask(ListTraces())] }

    package var keymap: Keymap {
        Keymap(
            "Traces",
            [
                KeyBinding([.enter], .panel(.open), help: "Open the selected trace", footer: "open"),
                KeyBinding([.character("l"), .right], .panel(.right), help: "Next step", footer: "step"),
                KeyBinding([.character("h"), .left], .panel(.left), help: "Previous step"),
                KeyBinding(
                    [.character("e")], .panel(.own(Action.error)), help: "Next step with an error", footer: "error"),
                KeyBinding([.character("t")], .panel(.own(Action.tool)), help: "Next tool call"),
                KeyBinding(
                    [.character("r")], .panel(.own(Action.raw)), help: "The step's raw source payload on or off"),
                KeyBinding(
                    [.character(" ")], .panel(.own(Action.play)), help: "Play or pause: step forward on a timer"),
                KeyBinding(
                    [.character(">")], .panel(.own(Action.faster)), help: "Play faster (2, 1, 0.5, 0.25, 0.1 s a step)"),
                KeyBinding([.character("<")], .panel(.own(Action.slower)), help: "Play slower"),
                KeyBinding(
                    [.character("m")], .panel(.own(Action.mark)), help: "Mark this trace to compare with another"),
                KeyBinding(
                    [.character("d")], .panel(.own(Action.diff)),
                    help: "Compare this trace with the marked one (diff view)",
                    footer: "diff"),
                KeyBinding(
                    [.character("f")], .panel(.own(Action.fork)),
                    help: "Fork at this step: edit the tool result or the user message, continue offline",
                    footer: "fork"),
                KeyBinding(
                    [.character("s")], .panel(.own(Action.sort)),
                    help: "Sort the traces by the next column (start, duration, steps, tokens, cost, errors)"),
                KeyBinding([.character("S")], .panel(.own(Action.reverse)), help: "Reverse the sort"),
                KeyBinding([.character("R")], .panel(.own(Action.reload)), help: "Reload the trace list"),
            ])
    }

    package var isSearchable: Bool { true }
    package var canGoBack: Bool { trace != nil || diff != nil }

    package var wantsTicks: Bool { playing }
    package var capturesText: Bool { forking }

    package mutating func handleText(_ key: Key) -> [PanelEffect] {
        switch key {
        case .escape: forking = false
        case .enter:
            forking = false
            guard let trace, let ordinal = currentOrdinal else { return [] }
            let kind = trace.spans[ordinal].kind
            let flag = kind == SpanKind.tool.rawValue ? "--result" : "--message"
            let quoted = "'" + forkInput.text.replacingOccurrences(of: "'", with: "'\\''") + "'"
            return [.run("trace fork \(trace.summary.id) --at \(ordinal) \(flag) \(quoted)", tag: Self.forkTag)]
        default: forkInput.handle(key)
        }
        return []
    }

    package mutating func commandFinished(tag: Int, outcome: CommandOutcome) {
        guard tag == Self.forkTag else { return }
        if let failure = outcome.error { error = failure }
        // "fork: trace N (trace P at span k)": open the diff of parent and fork.
        guard let range = outcome.output.range(of: "fork: trace "),
            let fork = Int64(outcome.output[range.upperBound...].prefix { $0.isNumber }),
            let parent = trace?.summary.id
        else { return }
        queued += [.ask(DiffTraces(left: parent, right: fork))]
    }

    package mutating func goBack() {
        if diff != nil {
            diff = nil
            return
        }
        playing = false
        deepMatches = nil
        trace = nil
        detail = nil
        raw = false
    }

    /// The traces in the chosen order.
    package var rows: [TraceSummary] {
        let all = traces ?? []
        func key(_ t: TraceSummary) -> Double {
            switch sort.column {
            // Untimed traces (message lists) start when they were imported.
            case 0: return t.timed ? Double(t.startedNs) : t.importedAt.timeIntervalSince1970 * 1e9
            case 1: return t.timed ? Double(t.durationNs) : -1
            case 2: return Double(t.stepCount)
            case 3: return Double((t.inputTokens ?? 0) + (t.outputTokens ?? 0))
            case 4: return t.cost ?? -1
            default: return Double(t.errorCount)
            }
        }
        return all.enumerated().sorted { a, b in
            let (x, y) = (key(a.element), key(b.element))
            if x == y { return a.offset < b.offset }
            return sort.ascending ? x < y : x > y
        }.map(\.element)
    }

    /// The traces port's answers; stale ones (another trace opened since) are dropped.
    private mutating func receive(_ answer: PortAnswer) -> [PanelEffect] {
        if let (_, loaded) = answer.matching(ListTraces.self) {
            switch loaded {
            case .loaded(let loaded):
                traces = loaded
                list.selected = min(list.selected, max(0, loaded.count - 1))
            case .failed(let message):
                traces = traces ?? []
                error = message
            }
        } else if let (asked, opened) = answer.matching(OpenTrace.self) {
            switch opened {
            case .loaded(let loaded):
                guard trace == nil || trace?.summary.id == asked.id else { return [] }
                // A reload of the open trace (a run recorded live) keeps the cursor, and follows
                // the newest step when it was on the last one.
                let reload = trace?.summary.id == asked.id
                let wasLast = reload && step >= (trace?.steps.count ?? 0) - 1
                trace = loaded
                error = nil
                step =
                    !reload ? 0 : wasLast ? max(0, loaded.steps.count - 1) : min(step, max(0, loaded.steps.count - 1))
                return loadStep()
            case .failed(let message): error = message
            }
        } else if let (asked, loaded) = answer.matching(LoadSpan.self) {
            guard asked.trace == trace?.summary.id, asked.ordinal == currentOrdinal else { return [] }
            switch loaded {
            case .loaded(let found): detail = found
            case .failed(let message):
                detail = nil
                error = message
            }
        } else if let (asked, found) = answer.matching(SearchTrace.self) {
            guard let trace, asked.trace == trace.summary.id else { return [] }
            switch found {
            case .loaded(let ordinals):
                deepMatches = (asked.text, ordinals)
                return jumpToMatch(forward: true, includeCurrent: true)
            case .failed(let message): error = message
            }
        } else if let (_, loaded) = answer.matching(DiffTraces.self) {
            switch loaded {
            case .loaded(let compared):
                diff = compared
                diffList = ListState()
                diffList.selected = compared.firstDivergence ?? 0
            case .failed(let message): error = message
            }
        }
        return []
    }

    package mutating func receive(_ msg: Msg) -> [PanelEffect] {
        switch msg {
        case .navigate(.trace(let id)):
            // Another panel (an eval answer) asked for this trace: close what is open, open it.
            diff = nil
            goBack()
            if let index = rows.firstIndex(where: { $0.id == id }) { list.selected = index }
            return [.ask(OpenTrace(id: id)), .ask(ListTraces())]
        case .answered(let answer):
            return receive(answer)
        case .tick(let now):
            guard playing, let trace else { return [] }
            guard now - lastAdvance >= Self.playSpeeds[speed] else { return [] }
            lastAdvance = now
            if step >= trace.steps.count - 1 {
                playing = false
                return []
            }
            return moveStep(to: step + 1)
        case .jobProgress(_, let progress):
            // Our agent reports "trace N · …" as it records: show the run as it grows.
            return liveReload(progress.detail)
        case .jobFinished(_, let outcome):
            return outcome.output.contains("trace ") ? liveReload(nil) : []
        default: break
        }
        return []
    }

    private func liveReload(_ detail: String?) -> [PanelEffect] {
        var effects: [PanelEffect] = [.ask(ListTraces())]
        if let detail {
            guard detail.hasPrefix("trace "),
                let id = Int64(detail.dropFirst(6).prefix { $0.isNumber })
            else { return [] }
            if trace?.summary.id == id { effects.append(.ask(OpenTrace(id: id))) }
        } else if let open = trace {
            effects.append(.ask(OpenTrace(id: open.summary.id)))
        }
        return effects
    }

    /// Moves to the next step whose span matched the confirmed search.
    private mutating func jumpToMatch(forward: Bool, includeCurrent: Bool) -> [PanelEffect] {
        guard let trace, let matches = deepMatches else { return [] }
        let matching = Set(matches.ordinals)
        let texts = trace.steps.map { matching.contains($0) ? "\u{1}" : "" }
        guard
            let index = nextMatch(
                in: texts, from: step, query: "\u{1}", forward: forward, includeCurrent: includeCurrent)
        else { return [] }
        return moveStep(to: index)
    }

    package mutating func searchSubmitted(_ query: String) -> [PanelEffect] {
        guard let trace else { return [] }
        return [.ask(SearchTrace(trace: trace.summary.id, text: query))]
    }

    /// The ordinal of the span under the step cursor.
    package var currentOrdinal: Int? {
        guard let trace, step < trace.steps.count else { return nil }
        return trace.steps[step]
    }

    private mutating func loadStep() -> [PanelEffect] {
        detail = nil
        detailOffset = 0
        guard let trace, let ordinal = currentOrdinal else { return [] }
        return [.ask(LoadSpan(trace: trace.summary.id, ordinal: ordinal))]
    }

    private mutating func moveStep(to index: Int) -> [PanelEffect] {
        guard let trace, !trace.steps.isEmpty else { return [] }
        let clamped = max(0, min(trace.steps.count - 1, index))
        guard clamped != step || detail == nil else { return [] }
        step = clamped
        return loadStep()
    }

    /// The next step after the cursor whose span matches, wrapping around.
    private mutating func next(where matches: (SpanRow) -> Bool) -> [PanelEffect] {
        guard let trace, !trace.steps.isEmpty else { return [] }
        for offset in 1...trace.steps.count {
            let index = (step + offset) % trace.steps.count
            if matches(trace.spans[trace.steps[index]]) { return moveStep(to: index) }
        }
        return []
    }

    package mutating func perform(_ action: PanelAction, area: Rect) -> [PanelEffect] {
        if let diff {
            let count = diff.rows.count
            switch action {
            case .down: diffList.move(by: 1, count: count)
            case .up: diffList.move(by: -1, count: count)
            case .pageDown: diffList.move(by: max(1, area.height - 8), count: count)
            case .pageUp: diffList.move(by: -max(1, area.height - 8), count: count)
            case .top: diffList.jump(toEnd: false, count: count)
            case .bottom: diffList.jump(toEnd: true, count: count)
            case PanelAction.own(Action.error):
                // The next row where the runs part.
                if let next = diff.rows.indices.first(where: { $0 > diffList.selected && diff.rows[$0].change != .same }
                ) {
                    diffList.selected = next
                }
            default: break
            }
            return []
        }
        switch action {
        case PanelAction.own(Action.mark):
            marked = trace?.summary.id ?? (list.selected < rows.count ? rows[list.selected].id : nil)
            return []
        case PanelAction.own(Action.diff):
            let current = trace?.summary.id ?? (list.selected < rows.count ? rows[list.selected].id : nil)
            guard let marked, let current else {
                error = marked == nil ? "mark a trace with m first, then press d on another" : nil
                return []
            }
            error = nil
            return [.ask(DiffTraces(left: marked, right: current))]
        default: break
        }
        if let trace {
            if action == .own(Action.fork) {
                guard let ordinal = currentOrdinal, let detail else { return [] }
                let span = trace.spans[ordinal]
                if span.kind == SpanKind.tool.rawValue {
                    forkInput = LineEditor(detail.payload.tool?.result ?? "")
                } else if span.kind == SpanKind.llm.rawValue {
                    forkInput = LineEditor(detail.payload.input.last { $0.role == "user" }?.text ?? "")
                } else {
                    return []
                }
                forking = true
                return []
            }
            switch action {
            case .right: return moveStep(to: step + 1)
            case .left: return moveStep(to: step - 1)
            case .top: return moveStep(to: 0)
            case .bottom: return moveStep(to: trace.steps.count - 1)
            case .down: detailOffset += 1
            case .up: detailOffset = max(0, detailOffset - 1)
            case .pageDown: detailOffset += max(1, area.height - 6)
            case .pageUp: detailOffset = max(0, detailOffset - max(1, area.height - 6))
            case PanelAction.own(Action.error): return next { $0.status == "error" }
            case PanelAction.own(Action.tool): return next { $0.kind == SpanKind.tool.rawValue }
            case PanelAction.own(Action.raw):
                raw.toggle()
                detailOffset = 0
            case PanelAction.own(Action.play):
                playing.toggle()
                lastAdvance = 0
                if playing, step >= trace.steps.count - 1 { return moveStep(to: 0) }
            case PanelAction.own(Action.faster): speed = min(Self.playSpeeds.count - 1, speed + 1)
            case PanelAction.own(Action.slower): speed = max(0, speed - 1)
            default: break
            }
            return []
        }
        let count = rows.count
        switch action {
        case .down: list.move(by: 1, count: count)
        case .up: list.move(by: -1, count: count)
        case .pageDown: list.move(by: max(1, area.height - 4), count: count)
        case .pageUp: list.move(by: -max(1, area.height - 4), count: count)
        case .top: list.jump(toEnd: false, count: count)
        case .bottom: list.jump(toEnd: true, count: count)
        case .open:
            guard list.selected < count else { return [] }
            let id = rows[list.selected].id
            trace = nil
            return [.ask(OpenTrace(id: id))]
        case PanelAction.own(Action.sort):
            // Start ascends (oldest first); the measures descend (largest first).
            let next = (sort.column + 1) % Self.sortColumns.count
            sort = TableSort(column: next, ascending: next == 0)
        case PanelAction.own(Action.reverse): sort.ascending.toggle()
        case PanelAction.own(Action.reload): return [.ask(ListTraces())]
        default: break
        }
        return []
    }

    package mutating func search(_ query: String, forward: Bool, includeCurrent: Bool) -> Bool {
        if let trace {
            // After enter, n/N walk the steps whose content matched (messages, arguments, results).
            if let matches = deepMatches, matches.query == query, !matches.ordinals.isEmpty {
                let before = step
                queued += jumpToMatch(forward: forward, includeCurrent: includeCurrent)
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
            queued += moveStep(to: index)
            return true
        }
        let names = rows.map { "\($0.name) \($0.format) \($0.externalID)" }
        guard
            let index = nextMatch(
                in: names, from: list.selected, query: query, forward: forward, includeCurrent: includeCurrent)
        else { return false }
        list.selected = index
        return true
    }

    // MARK: - Render

    package func render(into frame: inout Frame, area: Rect, context: PanelRenderContext) {
        let theme = context.theme
        if let diff {
            renderDiff(diff, into: &frame, area: area, context: context)
            return
        }
        if let trace {
            let inner = Block(
                title: "Traces · \(UntrustedText.sanitized(trace.summary.name))",
                trailingTitle: "step \(trace.steps.isEmpty ? 0 : step + 1)/\(trace.steps.count)"
                    + (raw ? " · raw" : ""),
                focused: context.focused
            ).render(into: &frame, area: area, theme: theme)
            guard inner.width > 20, inner.height > 4 else { return }
            renderTrace(trace, into: &frame, area: inner, theme: theme)
            if forking {
                let kind = currentOrdinal.map { trace.spans[$0].kind } ?? ""
                let line = Rect(x: inner.x, y: inner.y + inner.height - 1, width: inner.width, height: 1)
                frame.fill(line, style: theme.text)
                forkInput.render(
                    into: &frame, area: line,
                    prompt: [
                        Span(
                            kind == SpanKind.tool.rawValue ? " fork · new result › " : " fork · new message › ",
                            theme.accent)
                    ],
                    style: theme.text)
            }
            return
        }
        let inner = Block(
            title: "Traces", trailingTitle: "sort: \(Self.sortColumns[sort.column]) \(sort.ascending ? "↑" : "↓")",
            focused: context.focused
        ).render(into: &frame, area: area, theme: theme)
        guard inner.width > 20, inner.height > 2 else { return }
        if let error {
            frame.draw(
                UntrustedText.sanitized(error), at: Point(x: inner.x + 1, y: inner.y + 1), style: theme.status(.error),
                clip: inner)
            return
        }
        guard let traces else {
            frame.draw("Loading traces…", at: Point(x: inner.x + 1, y: inner.y + 1), style: theme.dim, clip: inner)
            return
        }
        guard !traces.isEmpty else {
            let lines: [[Span]] = [
                [
                    Span(
                        "Replay agent runs step by step: span tree, timeline, tokens, tool calls and errors.",
                        theme.text)
                ],
                [],
                [Span("No traces in this workspace yet. Import some:", theme.dim)],
                [Span("  $ ", theme.dim), Span("loupe trace import FILE…", theme.accent)],
                [
                    Span(
                        "OTLP/JSON (GenAI, OpenInference) and OpenAI message lists; sample-data/traces has examples.",
                        theme.dim)
                ],
            ]
            let text = Rect(x: inner.x + 1, y: inner.y + 1, width: inner.width - 2, height: inner.height - 1)
            TextView(lines: lines).render(into: &frame, area: text, offset: 0, theme: theme)
            return
        }
        let table = rows.map { t -> [String] in
            [
                (t.id == marked ? "◆" : "") + "\(t.id)", t.format, "\(t.stepCount)", "\(t.spanCount)",
                t.errorCount > 0 ? "✗ \(t.errorCount)" : "",
                TraceText.duration(t.timed ? t.durationNs : nil), Self.tokens(t.inputTokens, t.outputTokens),
                TraceText.cost(t.cost), UntrustedText.sanitized(t.name),
            ]
        }
        let columns = [
            TableColumn("id", width: .length(4), alignment: .trailing), TableColumn("format", width: .length(9)),
            TableColumn("steps", width: .length(5), alignment: .trailing),
            TableColumn("spans", width: .length(5), alignment: .trailing), TableColumn("errors", width: .length(6)),
            TableColumn("duration", width: .length(9), alignment: .trailing),
            TableColumn("tokens in/out", width: .length(13), alignment: .trailing),
            TableColumn("cost", width: .length(9), alignment: .trailing), TableColumn("name", width: .fill(1)),
        ]
        var state = list
        TableView(columns: columns, rows: table, focused: context.focused).render(
            into: &frame, area: inner, state: &state, theme: theme)
    }

    private func renderDiff(_ diff: TraceDiff, into frame: inout Frame, area: Rect, context: PanelRenderContext) {
        let theme = context.theme
        let counts = diff.counts
        let inner = Block(
            title: "Diff · trace \(diff.left.id) ↔ trace \(diff.right.id)",
            trailingTitle: "\(counts[.same, default: 0]) same · \(counts[.changed, default: 0]) changed · "
                + "\(counts[.onlyLeft, default: 0]) −  \(counts[.onlyRight, default: 0]) +",
            focused: context.focused
        ).render(into: &frame, area: area, theme: theme)
        guard inner.width > 30, inner.height > 6 else { return }
        let timed = diff.left.timed && diff.right.timed
        frame.draw(
            [
                Span(
                    diff.firstDivergence.map { " ▶ first divergence: row \($0 + 1)" } ?? " the runs did the same steps",
                    diff.firstDivergence == nil ? theme.status(.ok) : theme.status(.warn)),
                Span("  − \(UntrustedText.sanitized(diff.left.name))", theme.dim),
                Span("  + \(UntrustedText.sanitized(diff.right.name))", theme.dim),
            ], at: Point(x: inner.x, y: inner.y), clip: inner)
        let detailHeight = min(8, inner.height / 3)
        let tableArea = Rect(x: inner.x, y: inner.y + 1, width: inner.width, height: inner.height - 1 - detailHeight)
        let symbols: [TraceDiff.Change: String] = [.same: "=", .changed: "≠", .onlyLeft: "−", .onlyRight: "+"]
        func cell(_ span: SpanRow?) -> String {
            guard let span else { return "·" }
            let name = span.kind == SpanKind.tool.rawValue ? (span.toolName ?? span.name) : span.name
            return UntrustedText.sanitized(
                "#\(span.ordinal) \(span.kind) \(name)" + (span.status == "error" ? " ✗" : ""))
        }
        let table = diff.rows.enumerated().map { index, row -> [String] in
            var latency = ""
            if timed, let delta = row.latencyDeltaNs, delta != 0 {
                latency = (delta > 0 ? "+" : "−") + TraceText.duration(abs(delta))
            }
            return [
                (index == diff.firstDivergence ? "▶" : "") + "\(index + 1)", symbols[row.change]!, cell(row.left),
                cell(row.right), row.tokenDelta.map { $0 == 0 ? "" : ($0 > 0 ? "+" : "") + String($0) } ?? "", latency,
            ]
        }
        let columns = [
            TableColumn("row", width: .length(5), alignment: .trailing), TableColumn("", width: .length(1)),
            TableColumn("left · trace \(diff.left.id)", width: .fill(1)),
            TableColumn("right · trace \(diff.right.id)", width: .fill(1)),
            TableColumn("Δ tokens", width: .length(8), alignment: .trailing),
            TableColumn("Δ latency", width: .length(9), alignment: .trailing),
        ]
        var state = diffList
        TableView(columns: columns, rows: table, focused: context.focused).render(
            into: &frame, area: tableArea, state: &state, theme: theme)
        guard diffList.selected < diff.rows.count else { return }
        let row = diff.rows[diffList.selected]
        let detail = Rect(x: inner.x, y: tableArea.y + tableArea.height, width: inner.width, height: detailHeight)
        let halves = detail.split(.horizontal, [.percentage(50), .fill(1)])
        let style = row.change == .same ? theme.dim : theme.text
        for (half, text, title) in [(halves[0], row.leftText, "left"), (halves[1], row.rightText, "right")] {
            let box = Block(title: title, focused: false).render(into: &frame, area: half, theme: theme)
            let lines = UntrustedText.sanitized(text).split(separator: " ⏎ ").map { [Span(String($0), style)] }
            TextView(lines: lines.isEmpty ? [[Span("—", theme.dim)]] : lines).render(
                into: &frame, area: box, offset: 0, theme: theme)
        }
    }

    package static func tokens(_ input: Int?, _ output: Int?) -> String {
        input == nil && output == nil ? "—" : "\(input.map(String.init) ?? "—")/\(output.map(String.init) ?? "—")"
    }

    private func renderTrace(_ trace: TraceService.Loaded, into frame: inout Frame, area: Rect, theme: Theme) {
        let s = trace.summary
        let usage = (s.inputTokens, s.outputTokens)
        frame.draw(
            [
                Span(" \(s.format)", theme.accent),
                Span(
                    " · \(Self.plural(s.stepCount, "step")) · \(Self.plural(s.spanCount, "span")) · "
                        + (s.timed ? TraceText.duration(s.durationNs) : "untimed") + " · tokens "
                        + Self.tokens(usage.0, usage.1) + " · cost " + TraceText.cost(s.cost), theme.dim),
                s.errorCount > 0
                    ? Span(" · ✗ \(Self.plural(s.errorCount, "error"))", theme.status(.error)) : Span("", theme.dim),
                playing
                    ? Span(" · ▶ \(Calculator.format(Self.playSpeeds[speed])) s/step", theme.accent)
                    : Span("", theme.dim),
                deepMatches.map {
                    Span(
                        " · “\(UntrustedText.sanitized($0.query))” in \(Self.plural($0.ordinals.count, "span"))",
                        theme.accent)
                } ?? Span("", theme.dim),
            ], at: Point(x: area.x, y: area.y), clip: area)
        let body = Rect(x: area.x, y: area.y + 1, width: area.width, height: area.height - 1)
        let parts = body.split(.horizontal, [.percentage(48), .fill(1)])
        renderTree(trace, into: &frame, area: parts[0], theme: theme)
        renderDetail(trace, into: &frame, area: parts[1], theme: theme)
    }

    /// The span tree, each row with its bar on the trace's time axis; the step under the cursor
    /// selected, errors marked.
    private func renderTree(_ trace: TraceService.Loaded, into frame: inout Frame, area: Rect, theme: Theme) {
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
            frame.draw(line, at: Point(x: inner.x + labelWidth + 1, y: inner.maxY - 1), style: theme.dim, clip: inner)
        }
    }

    private func renderDetail(_ trace: TraceService.Loaded, into frame: inout Frame, area: Rect, theme: Theme) {
        guard let ordinal = currentOrdinal else {
            _ = Block(title: "Step", focused: false).render(into: &frame, area: area, theme: theme)
            return
        }
        let span = trace.spans[ordinal]
        let inner = Block(title: "\(span.kind) · \(UntrustedText.sanitized(span.name))", focused: false).render(
            into: &frame, area: area, theme: theme)
        guard inner.width > 8, inner.height > 0 else { return }
        let lines = Self.detailLines(trace: trace, step: step, detail: detail, raw: raw, theme: theme)
        _ = TextView(lines: lines).render(into: &frame, area: inner, offset: detailOffset, theme: theme)
    }

    /// What the step pane shows: numbers, then the call's content (or its raw source).
    package static func detailLines(
        trace: TraceService.Loaded, step: Int, detail: SpanDetail?, raw: Bool, theme: Theme
    ) -> [[Span]] {
        let span = trace.spans[trace.steps[step]]
        var lines: [[Span]] = []
        // Numbers: latency, tokens for the step and so far, model, status.
        var facts: [String] = []
        if trace.summary.timed { facts.append(TraceText.duration(span.endNs.map { $0 - span.startNs })) }
        if let model = span.model { facts.append(model) }
        if !facts.isEmpty { lines.append([Span(facts.joined(separator: " · "), theme.dim)]) }
        let sofar = trace.steps.prefix(step + 1).map { trace.spans[$0] }
        let cumulative = (
            sofar.compactMap(\.inputTokens).reduce(0, +), sofar.compactMap(\.outputTokens).reduce(0, +)
        )
        if span.inputTokens != nil || span.outputTokens != nil {
            var tokens = "tokens \(tokensText(span.inputTokens, span.outputTokens))"
            if let cached = span.cacheReadTokens { tokens += " (\(cached) cached)" }
            lines.append([Span(tokens + " · so far \(cumulative.0)/\(cumulative.1)", theme.text)])
        }
        if span.kind == SpanKind.llm.rawValue, span.cost != nil || span.inputTokens != nil || span.outputTokens != nil {
            let sofarCost = sofar.filter { $0.kind == SpanKind.llm.rawValue }.reduce(Double?(0)) { total, s in
                total.flatMap { t in s.cost.map { t + $0 } }
            }
            lines.append([
                Span(
                    "cost \(TraceText.cost(span.cost)) · so far \(TraceText.cost(sofarCost))",
                    span.cost == nil ? theme.dim : theme.text)
            ])
        }
        if span.status == "error" {
            lines.append([Span("✗ " + UntrustedText.sanitized(span.statusMessage ?? "error"), theme.status(.error))])
        }
        guard let detail else {
            lines.append([Span("loading…", theme.dim)])
            return lines
        }
        if raw {
            lines.append([Span("── raw source ──", theme.title)])
            lines += UntrustedText.lines(detail.raw?.prettyJSON ?? "(no raw payload)").map { [Span($0, theme.text)] }
            return lines
        }
        let payload = detail.payload
        if let tool = payload.tool {
            lines.append([Span("── arguments ──", theme.title)])
            if let problem = tool.argumentsError {
                lines.append([Span("⚠ " + UntrustedText.sanitized(problem), theme.status(.warn))])
                lines += UntrustedText.lines(tool.arguments).map { [Span($0, theme.text)] }
            } else {
                let pretty = (try? JSONValue.parse(tool.arguments))?.prettyJSON ?? tool.arguments
                lines += UntrustedText.lines(pretty).map { [Span($0, theme.text)] }
            }
            if let error = tool.error {
                lines.append([Span("── error ──", theme.status(.error))])
                lines += UntrustedText.lines(error).map { [Span($0, theme.status(.error))] }
            }
            if let result = tool.result {
                lines.append([Span("── result ──", theme.title)])
                lines += UntrustedText.lines(result).map { [Span($0, theme.text)] }
            }
        }
        if !payload.input.isEmpty {
            lines.append([Span("── conversation as sent (\(payload.input.count) messages) ──", theme.title)])
            for message in payload.input { lines += messageLines(message, theme: theme) }
        }
        if !payload.output.isEmpty {
            lines.append([Span("── output ──", theme.title)])
            for message in payload.output { lines += messageLines(message, theme: theme) }
        }
        return lines
    }

    private static func tokensText(_ input: Int?, _ output: Int?) -> String { tokens(input, output) }

    /// `1 step`, `3 steps`.
    private static func plural(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }

    private static func messageLines(_ message: Message, theme: Theme) -> [[Span]] {
        var lines: [[Span]] = [[Span("[\(UntrustedText.sanitized(message.role))]", theme.key)]]
        if let reasoning = message.reasoning, !reasoning.isEmpty {
            lines += UntrustedText.lines(reasoning).map { [Span("  ┊ " + $0, theme.dim)] }
        }
        if !message.text.isEmpty { lines += UntrustedText.lines(message.text).map { [Span("  " + $0, theme.text)] } }
        for call in message.toolCalls {
            lines.append([
                Span("  → ", theme.accent), Span(UntrustedText.sanitized(call.name), theme.accent),
                Span("(" + UntrustedText.sanitized(call.arguments) + ")", theme.dim),
                call.argumentsError != nil ? Span("  ⚠ invalid JSON", theme.status(.warn)) : Span("", theme.dim),
            ])
        }
        return lines
    }
}
