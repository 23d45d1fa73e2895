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
    /// The list's filter, kept with enter after `/` (esc clears it).
    package private(set) var filter: TraceFilter?
    /// A span under the cursor that is not a step (set by `J`, `K` and `e`), or nil.
    package private(set) var spanCursor: Int?
    /// Span contents read so far for the open trace, by ordinal, and those asked for.
    private var detailCache: [Int: SpanDetail] = [:]
    /// Counts the trace's loads; read-ahead answers from an earlier one are dropped.
    private var detailGeneration = 0
    private var detailsAsked: Set<Int> = []
    package private(set) var raw = false
    /// Whether a model call's earlier messages show whole (`c`); folded to a line each by default.
    package private(set) var conversationExpanded = false
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
    /// The step whose text is open in `$EDITOR` (`F`), and the text it had.
    private var editingFork: (ordinal: Int, original: String)?
    private static let forkTag = 1
    private static let forkEditorName = "trace-fork"
    private var queued: [PanelEffect] = []
    /// Which list shows when no trace is open: the traces, or the sessions they group into (`v`).
    package private(set) var showingSessions = false
    package var sessionList = ListState()
    /// The session whose turns are listed, when one is open.
    package private(set) var openSession: String?
    package var turnList = ListState()
    /// The trace the panel last asked to open: an answer for another (one asked before the user
    /// went back or opened a second) is dropped.
    private var opening: Int64?
    /// The traces grouped by session, read with the list.
    package private(set) var sessions: [TraceSession] = []
    /// Traces still arriving (received, spans waiting for their parent, the last within ten
    /// minutes), as of the last read of the list.
    package private(set) var live: Set<Int64> = []
    /// How long after its last span a received trace still counts as live (the tests widen it,
    /// so that a loaded machine's pauses cannot decide what they check).
    package var liveWindow: TimeInterval = TraceSummary.liveWindow
    /// A read of the list asked for because the workspace changed, and whether it changed again
    /// since: one read at a time however fast spans arrive.
    private var listInFlight = false
    private var listStale = false
    /// How many traces there are while only the first of them are shown (the whole list is
    /// being read); nil once it is.
    package private(set) var partOf: Int?

    package mutating func takeEffects() -> [PanelEffect] {
        defer { queued = [] }
        return queued
    }

    package static let sortColumns = ["start", "duration", "steps", "tokens", "cost", "errors"]

    package init() {}

    package var initialEffects: [PanelEffect] { [.ask(ListFirstTraces())] }
    package var isLoadingFirstView: Bool { traces == nil }

    /// The span on screen as its pane shows it (its conversation whole), or the selected trace's
    /// id and name.
    package var selectionText: String? {
        if let trace, let ordinal = currentOrdinal {
            let lines = Self.detailLines(
                trace: trace, ordinal: ordinal, detail: detail, raw: raw, theme: .builtInDefault,
                conversationExpanded: true)
            return ([trace.spans[ordinal].name] + lines.map { $0.map(\.text).joined() }).joined(separator: "\n")
        }
        guard list.selected < rows.count else { return nil }
        return "trace \(rows[list.selected].id): \(rows[list.selected].name)"
    }

    package var keymap: Keymap {
        Keymap(
            "Traces",
            [
                KeyBinding([.enter], .panel(.open), help: "Open the selected trace", footer: "open"),
                KeyBinding([.character("l"), .right], .panel(.right), help: "Next step", footer: "step"),
                KeyBinding(
                    [.character("j"), .down], .panel(.down), help: "List: next trace · trace: scroll the detail"),
                KeyBinding(
                    [.character("k"), .up], .panel(.up), help: "List: previous trace · trace: scroll the detail"),
                KeyBinding([.character("h"), .left], .panel(.left), help: "Previous step"),
                KeyBinding(
                    [.character("J")], .panel(.own(Action.nextSpan)),
                    help: "Next span of any kind (agent, chain, workflow, scorer …)", footer: "span"),
                KeyBinding([.character("K")], .panel(.own(Action.previousSpan)), help: "Previous span of any kind"),
                KeyBinding(
                    [.character("e")], .panel(.own(Action.error)), help: "Next span with an error (any kind)",
                    footer: "error"),
                KeyBinding([.character("t")], .panel(.own(Action.tool)), help: "Next tool call"),
                KeyBinding(
                    [.character("r")], .panel(.own(Action.raw)), help: "The step's raw source payload on or off"),
                KeyBinding(
                    [.character("c")], .panel(.own(Action.conversation)),
                    help: "A model call's earlier messages: folded to a line each, or whole"),
                KeyBinding(
                    [.character("p")], .panel(.own(Action.roofline)),
                    help:
                        "The step's MiniLM forward pass (an agent's search) on the roofline: its operations and their roofs"
                ),
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
                    [.character("F")], .panel(.own(Action.forkInEditor)),
                    help: "Fork at this step with the text in $VISUAL/$EDITOR (save and quit to run it)"),
                KeyBinding(
                    [.character("s")], .panel(.own(Action.sort)),
                    help: "Sort the traces by the next column (start, duration, steps, tokens, cost, errors)"),
                KeyBinding([.character("S")], .panel(.own(Action.reverse)), help: "Reverse the sort"),
                KeyBinding(
                    [.character("R"), .control("r")], .panel(.own(Action.reload)), help: "Reload the trace list"),
                KeyBinding(
                    [.character("v")], .panel(.own(Action.sessions)),
                    help: "Sessions: the traces grouped by session.id, conversation or thread (v again: traces)",
                    footer: "sessions"),
            ])
    }

    package var isSearchable: Bool { true }
    package var searchHint: String? {
        trace == nil && diff == nil
            ? "words, errors, steps>5, cost>0.01, duration>2s, model:gpt-4o, since:2h, format:otlp — enter keeps it"
            : nil
    }
    package var canGoBack: Bool {
        trace != nil || diff != nil || filter != nil || showingSessions || opening != nil
    }

    package var wantsTicks: Bool { playing }
    package var capturesText: Bool { forking }

    package mutating func handleText(_ key: Key) -> [PanelEffect] {
        switch key {
        case .escape: forking = false
        case .enter:
            forking = false
            guard let ordinal = currentOrdinal else { return [] }
            return fork(at: ordinal, with: forkInput.text)
        default: forkInput.handle(key)
        }
        return []
    }

    /// Runs `trace fork` at `ordinal` with `text` as the step's new tool result or user message.
    private func fork(at ordinal: Int, with text: String) -> [PanelEffect] {
        guard let trace, ordinal < trace.spans.count else { return [] }
        let flag = trace.spans[ordinal].kind == SpanKind.tool.rawValue ? "--result" : "--message"
        let quoted = "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
        return [.run("trace fork \(trace.summary.id) --at \(ordinal) \(flag) \(quoted)", tag: Self.forkTag)]
    }

    /// The editor opened by `F` closed: fork with what was saved, unless nothing changed.
    private mutating func finishEditingFork(text: String?, error: String?) -> [PanelEffect] {
        guard let (ordinal, original) = editingFork else { return [] }
        editingFork = nil
        if let error { return [.status("fork: " + error, .error)] }
        // Editors end the file with a newline the text did not have.
        var edited = text ?? ""
        if edited.hasSuffix("\n") && !original.hasSuffix("\n") { edited.removeLast() }
        guard edited != original else { return [.status("fork cancelled: the text is unchanged", .info)] }
        return fork(at: ordinal, with: edited)
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
        if trace == nil, opening != nil {
            // A trace asked for and not read yet: esc cancels its opening.
            opening = nil
            return
        }
        if trace == nil, openSession != nil {
            openSession = nil
            return
        }
        if trace == nil, showingSessions {
            showingSessions = false
            return
        }
        if trace == nil, filter != nil {
            filter = nil
            return
        }
        playing = false
        deepMatches = nil
        trace = nil
        opening = nil
        detail = nil
        spanCursor = nil
        detailCache = [:]
        detailsAsked = []
        raw = false
    }

    /// The traces in the chosen order.
    package var rows: [TraceSummary] {
        let all = (traces ?? []).filter { filter?.matches($0) ?? true }
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

    /// Shows `loaded` as the list; the selection stays on its trace.
    private mutating func accept(_ loaded: [TraceSummary]) {
        let selected = list.selected < rows.count ? rows[list.selected].id : nil
        traces = loaded
        let now = Date()
        live = Set(loaded.filter { $0.isLive(now: now, window: liveWindow) }.map(\.id))
        sessions = TraceService.sessions(of: loaded)
        if let selected, let index = rows.firstIndex(where: { $0.id == selected }) {
            list.selected = index
        } else {
            list.selected = min(list.selected, max(0, rows.count - 1))
        }
        sessionList.selected = min(sessionList.selected, max(0, sessions.count - 1))
    }

    /// The traces port's answers; stale ones (another trace opened since) are dropped.
    private mutating func receive(_ answer: PortAnswer) -> [PanelEffect] {
        if let (_, page) = answer.matching(ListFirstTraces.self) {
            switch page {
            case .loaded(let page):
                // The whole list may have come first (a reload asked meanwhile): it stands.
                guard traces == nil || partOf != nil else { return [] }
                accept(page.traces)
                guard page.total > page.traces.count else {
                    partOf = nil
                    return []
                }
                partOf = page.total
                listInFlight = true
                return [.ask(ListTraces())]
            case .failed:
                // The whole list says what is wrong, if anything still is.
                listInFlight = true
                return [.ask(ListTraces())]
            }
        }
        if let (_, loaded) = answer.matching(ListTraces.self) {
            listInFlight = false
            var effects: [PanelEffect] = []
            switch loaded {
            case .loaded(let loaded):
                partOf = nil
                // The open trace grew: read it again (the cursor stays, or follows the newest step).
                if let open = trace?.summary, let row = loaded.first(where: { $0.id == open.id }),
                    row.spanCount != open.spanCount || row.importedAt != open.importedAt
                {
                    effects.append(.ask(OpenTrace(id: open.id)))
                }
                accept(loaded)
            case .failed(let message):
                traces = traces ?? []
                error = message
            }
            if listStale {
                listStale = false
                listInFlight = true
                effects.append(.ask(ListTraces()))
            }
            return effects
        } else if let (asked, opened) = answer.matching(OpenTrace.self) {
            switch opened {
            case .loaded(let loaded):
                guard trace?.summary.id == asked.id || (trace == nil && opening == asked.id) else { return [] }
                // A reload of the open trace (a run recorded live) keeps the cursor, and follows
                // the newest step when it was on the last one.
                let reload = trace?.summary.id == asked.id
                let wasLast = reload && step >= (trace?.steps.count ?? 0) - 1
                // The span under the cursor, by id: spans that arrive (a parent after its
                // children) move the others' positions.
                let cursorSpan = reload ? currentOrdinal.flatMap { trace?.spans[$0].spanID } : nil
                // Contents are read again: a trace recorded live has more in its spans now.
                detailCache = [:]
                detailsAsked = []
                detailGeneration += 1
                if !reload || !(spanCursor.map { loaded.spans.indices.contains($0) } ?? true) { spanCursor = nil }
                trace = loaded
                error = nil
                // A live trace opens on its newest step, following it as it grows (`h` stops
                // following; the last step follows again).
                let following = wasLast || (!reload && live.contains(asked.id))
                step =
                    following ? max(0, loaded.steps.count - 1) : !reload ? 0 : min(step, max(0, loaded.steps.count - 1))
                if !following, let cursorSpan, let ordinal = loaded.spans.firstIndex(where: { $0.spanID == cursorSpan })
                {
                    return moveSpan(to: ordinal)
                }
                return loadStep()
            case .failed(let message): error = message
            }
        } else if let (asked, loaded) = answer.matching(LoadSpan.self) {
            guard asked.trace == trace?.summary.id, asked.generation == detailGeneration else { return [] }
            detailsAsked.remove(asked.ordinal)
            switch loaded {
            case .loaded(let found):
                if detailCache.count > 256 { detailCache = [:] }
                detailCache[asked.ordinal] = found
                if asked.ordinal == currentOrdinal { detail = found }
            case .failed(let message):
                guard asked.ordinal == currentOrdinal else { return [] }
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
        } else if let (asked, found) = answer.matching(ForwardPasses.self) {
            switch found {
            case .loaded(let passes):
                guard let first = passes.first else {
                    return [
                        .status(
                            "span \(asked.ordinal) ran no MiniLM forward pass that was recorded (an agent's search does, on a corpus with embeddings)",
                            .info)
                    ]
                }
                return [.navigate(.roofline(first))]
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
            opening = id
            return [.ask(OpenTrace(id: id)), .ask(ListTraces())]
        case .answered(let answer):
            return receive(answer)
        case .edited(Self.forkEditorName, let text, let error):
            return finishEditingFork(text: text, error: error)
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
        case .jobFinished:
            // Any command may have added traces (`:trace import`, an eval run, an agent).
            return liveReload(nil)
        case .workspaceChanged:
            // Another process committed (`loupe serve` received spans): read the list again, one
            // read at a time; the open trace is read again when its row shows it grew.
            if listInFlight {
                listStale = true
                return []
            }
            listInFlight = true
            return [.ask(ListTraces())]
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
        guard
            let index = nextIndex(
                count: trace.steps.count, from: step, forward: forward, includeCurrent: includeCurrent,
                where: { matching.contains(trace.steps[$0]) })
        else { return [] }
        return moveStep(to: index)
    }

    package mutating func searchSubmitted(_ query: String) -> [PanelEffect] {
        guard let trace else {
            // In the list, enter keeps what was typed as a filter.
            let kept = TraceFilter(query)
            filter = kept
            list = ListState()
            return kept.problems.map { [.status($0, .error)] } ?? []
        }
        return [.ask(SearchTrace(trace: trace.summary.id, text: query))]
    }

    /// The ordinal of the span under the cursor: a span that is not a step when `J`/`K`/`e`
    /// chose one, otherwise the step's.
    package var currentOrdinal: Int? {
        if let spanCursor { return spanCursor }
        guard let trace, step < trace.steps.count else { return nil }
        return trace.steps[step]
    }

    /// Shows the span under the cursor: at once when its content was read before (the steps
    /// next to it are read ahead, so stepping shows no "loading…"), else once it is read.
    private mutating func loadStep() -> [PanelEffect] {
        detailOffset = 0
        guard let trace, let ordinal = currentOrdinal else {
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
            return .ask(LoadSpan(trace: trace.summary.id, ordinal: ordinal, generation: detailGeneration))
        }
    }

    private mutating func moveStep(to index: Int) -> [PanelEffect] {
        guard let trace, !trace.steps.isEmpty else { return [] }
        let clamped = max(0, min(trace.steps.count - 1, index))
        guard clamped != step || spanCursor != nil || detail == nil else { return [] }
        step = clamped
        spanCursor = nil
        return loadStep()
    }

    /// Puts the cursor on span `ordinal`, a step or not.
    private mutating func moveSpan(to ordinal: Int) -> [PanelEffect] {
        guard let trace, trace.spans.indices.contains(ordinal) else { return [] }
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
        guard let trace,
            let ordinal = nextIndex(
                count: trace.spans.count, from: currentOrdinal ?? -1, where: { matches(trace.spans[$0]) })
        else { return [] }
        return moveSpan(to: ordinal)
    }

    /// The next step after the cursor whose span matches, wrapping around.
    private mutating func next(where matches: (SpanRow) -> Bool) -> [PanelEffect] {
        guard let trace,
            let index = nextIndex(
                count: trace.steps.count, from: step, where: { matches(trace.spans[trace.steps[$0]]) })
        else { return [] }
        return moveStep(to: index)
    }

    package mutating func perform(_ action: PanelAction, area: Rect) -> [PanelEffect] {
        if case .specific(let own) = action { return perform(own.action(as: Action.self), area: area) }
        if let diff {
            // The aligned rows move; enter, left and right do nothing in the diff.
            diffList.navigate(action, count: diff.rows.count, page: max(1, area.height - 8))
            return []
        }
        if let trace {
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
        if showingSessions { return performInSessions(action, area: area) }
        let count = rows.count
        switch action {
        case .down, .up, .pageDown, .pageUp, .top, .bottom:
            list.navigate(action, count: count, page: max(1, area.height - 4))
        case .open:
            guard list.selected < count else { return [] }
            let id = rows[list.selected].id
            trace = nil
            opening = id
            return [.ask(OpenTrace(id: id))]
        case .left, .right, .specific: break
        }
        return []
    }

    /// The panel's own keys, in whichever of its views is open.
    private mutating func perform(_ action: Action, area: Rect) -> [PanelEffect] {
        if let diff {
            switch action {
            case .error:
                // The next row where the runs part.
                if let next = diff.rows.indices.first(where: { $0 > diffList.selected && diff.rows[$0].change != .same }
                ) {
                    diffList.selected = next
                }
            case .mark, .diff, .fork, .forkInEditor, .tool, .raw, .play, .faster, .slower, .sort, .reverse, .reload,
                .nextSpan, .previousSpan, .sessions, .roofline, .conversation:
                break
            }
            return []
        }
        switch action {
        case .mark:
            marked = trace?.summary.id ?? (list.selected < rows.count ? rows[list.selected].id : nil)
            return []
        case .diff:
            let current = trace?.summary.id ?? (list.selected < rows.count ? rows[list.selected].id : nil)
            guard let marked, let current else {
                error = marked == nil ? "mark a trace with m first, then press d on another" : nil
                return []
            }
            error = nil
            return [.ask(DiffTraces(left: marked, right: current))]
        case .error, .fork, .forkInEditor, .tool, .raw, .play, .faster, .slower, .nextSpan, .previousSpan, .roofline,
            .conversation:
            guard let trace else { return [] }
            return perform(action, on: trace)
        case .sessions:
            guard trace == nil else { return [] }
            showingSessions.toggle()
            openSession = nil
        case .sort:
            guard trace == nil, !showingSessions else { return [] }
            // Start ascends (oldest first); the measures descend (largest first).
            let next = (sort.column + 1) % Self.sortColumns.count
            sort = TableSort(column: next, ascending: next == 0)
        case .reverse:
            guard trace == nil, !showingSessions else { return [] }
            sort.ascending.toggle()
        case .reload:
            guard trace == nil else { return [] }
            return [.ask(ListTraces(fresh: true))]
        }
        return []
    }

    /// The keys of an open trace.
    private mutating func perform(_ action: Action, on trace: TraceService.Loaded) -> [PanelEffect] {
        switch action {
        case .fork, .forkInEditor:
            guard let ordinal = currentOrdinal, let detail else { return [] }
            let span = trace.spans[ordinal]
            let text: String
            if span.kind == SpanKind.tool.rawValue {
                text = detail.payload.tool?.result ?? ""
            } else if span.kind == SpanKind.llm.rawValue {
                text = detail.payload.input.last { $0.role == "user" }?.text ?? ""
            } else {
                return [.status("fork from a tool step (its result) or a model step (its user message)", .info)]
            }
            if action == .forkInEditor {
                editingFork = (ordinal, text)
                return [.app(.editText(name: Self.forkEditorName, text: text))]
            }
            forkInput = LineEditor(text)
            forking = true
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
            conversationExpanded.toggle()
        case .play:
            playing.toggle()
            lastAdvance = 0
            if playing, step >= trace.steps.count - 1 { return moveStep(to: 0) }
        case .faster: speed = min(Self.playSpeeds.count - 1, speed + 1)
        case .slower: speed = max(0, speed - 1)
        case .mark, .diff, .sort, .reverse, .reload, .sessions: break
        }
        return []
    }

    /// Keys in the Sessions view: the sessions, then one session's turns; enter opens a turn's
    /// trace (esc comes back to the turns).
    private mutating func performInSessions(_ action: PanelAction, area: Rect) -> [PanelEffect] {
        let page = max(1, area.height - 4)
        if let id = openSession {
            let turns = sessions.first { $0.id == id }?.turns ?? []
            switch action {
            case .down, .up, .pageDown, .pageUp, .top, .bottom:
                turnList.navigate(action, count: turns.count, page: page)
            case .open:
                guard turnList.selected < turns.count else { return [] }
                opening = turns[turnList.selected].id
                return [.ask(OpenTrace(id: turns[turnList.selected].id))]
            case .left, .right, .specific: break
            }
            return []
        }
        switch action {
        case .down, .up, .pageDown, .pageUp, .top, .bottom:
            sessionList.navigate(action, count: sessions.count, page: page)
        case .open:
            guard sessionList.selected < sessions.count else { return [] }
            openSession = sessions[sessionList.selected].id
            turnList = ListState()
        case .left, .right, .specific: break
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
        // The list: the filter language (`errors`, `cost>0.01`, `format:inspect`, words).
        let wanted = TraceFilter(query)
        let rows = self.rows
        guard
            let index = nextIndex(
                count: rows.count, from: list.selected, forward: forward, includeCurrent: includeCurrent,
                where: { wanted.matches(rows[$0]) })
        else { return false }
        list.selected = index
        return true
    }
}
