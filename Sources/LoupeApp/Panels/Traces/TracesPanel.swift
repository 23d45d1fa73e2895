import Foundation
import LoupeAgents
import LoupeBase
import LoupeKit
import LoupeStore
import LoupeTUI

/// Agent-trace replay: the imported traces, then one trace as a span tree beside its timeline
/// with a step cursor, and at each step the conversation as it stood, the call's input and
/// output, tool arguments and result, tokens (step and cumulative) and latency.
///
/// Each view is a child state with its own keys and drawing: ``ListView`` (the traces),
/// ``SessionsView`` (`v`), ``TraceView`` (an open trace), ``DiffView`` (`m`, `d`) and
/// ``ForkEditor`` (`f`). The panel decides which is on show and holds what outlives them: the
/// mark, the error, the reads under way, the viewer's settings.
package struct TracesPanel: Panel {
    package let id = PanelID.traces
    package let title = "Traces"

    package private(set) var listView = ListView()
    package private(set) var sessionsView = SessionsView()
    /// Which list shows when no trace is open: the traces, or the sessions they group into (`v`).
    package private(set) var showingSessions = false
    /// The open trace, when one is.
    package private(set) var traceView: TraceView?
    /// The diff, when open: two traces' steps aligned. It shows over the rest.
    package private(set) var diffView: DiffView?
    /// The fork line, while one is edited over the open trace.
    package private(set) var forkEditor: ForkEditor?
    package private(set) var error: String?
    /// The trace `m` marked, to compare another with (`d`).
    package private(set) var marked: Int64?
    /// The trace the panel last asked to open: an answer for another (one asked before the user
    /// went back or opened a second) is dropped.
    private var opening: Int64?
    /// Counts the reads of an open trace; read-ahead answers from an earlier one are dropped.
    private var traceReads = 0
    /// The open trace's settings, kept for the next trace once it is closed.
    private var traceSettings = TraceView.Settings()
    /// The step whose text is open in `$EDITOR` (`F`), and the text it had.
    private var editingFork: (ordinal: Int, original: String)?
    /// A token fork under way: the trace, span and token it forks, so the fork opens there.
    private var tokenFork: (parent: Int64, ordinal: Int, token: Int)?
    /// The fork just made, to open at its changed token once read.
    private var openingFork: (id: Int64, ordinal: Int, token: Int)?
    /// SmolLM2's attention or logit lens at the token view's cursor token (`a`, `l`), over the
    /// open trace; and the one asked for, whose answer alone is taken.
    package private(set) var tokenInside: TokenInside?
    private var insideAsked: (kind: TokenInside.Kind, address: TokenAddress)?
    private static let forkTag = 1
    private static let tokenForkTag = 2
    private static let forkEditorName = "trace-fork"
    private var queued: [PanelEffect] = []
    /// A read of the list asked for because the workspace changed, and whether it changed again
    /// since: one read at a time however fast spans arrive.
    private var listInFlight = false
    private var listStale = false

    package static let playSpeeds = [2.0, 1.0, 0.5, 0.25, 0.1]
    package static let sortColumns = ["start", "duration", "steps", "tokens", "cost", "errors"]

    package init() {}

    // MARK: - What the views hold, as the panel's

    package var trace: TraceService.Loaded? { traceView?.trace }
    package var step: Int { traceView?.step ?? 0 }
    package var detail: SpanDetail? { traceView?.detail }
    package var spanCursor: Int? { traceView?.spanCursor }
    package var currentOrdinal: Int? { traceView?.currentOrdinal }
    package var playing: Bool { traceView?.playing ?? false }
    /// Whether a model call's earlier messages show whole (`c`), in the open trace and the next.
    package var conversationExpanded: Bool { (traceView?.settings ?? traceSettings).conversationExpanded }
    package var deepMatches: (query: String, ordinals: [Int])? { traceView?.deepMatches }
    package var diff: TraceDiff? { diffView?.diff }
    package var forking: Bool { forkEditor != nil }
    package var traces: [TraceSummary]? { listView.traces }
    package var rows: [TraceSummary] { listView.rows }
    package var list: ListState {
        get { listView.list }
        set { listView.list = newValue }
    }
    package var filter: TraceFilter? { listView.filter }
    package var partOf: Int? { listView.partOf }
    package var live: Set<Int64> { listView.live }
    package var sessions: [TraceSession] { listView.sessions }
    package var openSession: String? { sessionsView.openSession }
    /// How long after its last span a received trace still counts as live (``ListView/liveWindow``).
    package var liveWindow: TimeInterval {
        get { listView.liveWindow }
        set { listView.liveWindow = newValue }
    }

    package mutating func takeEffects() -> [PanelEffect] {
        defer { queued = [] }
        return queued
    }

    package var initialEffects: [PanelEffect] { [.ask(ListFirstTraces())] }
    package var isLoadingFirstView: Bool { traces == nil }

    /// The span on screen as its pane shows it (its conversation whole), or the selected trace's
    /// id and name.
    package var selectionText: String? {
        if let open = traceView, let ordinal = open.currentOrdinal {
            let lines = Self.detailLines(
                trace: open.trace, ordinal: ordinal, detail: open.detail, raw: open.raw, theme: .builtInDefault,
                conversationExpanded: true)
            return ([open.trace.spans[ordinal].name] + lines.map { $0.map(\.text).joined() }).joined(separator: "\n")
        }
        let rows = self.rows
        guard list.selected < rows.count else { return nil }
        return "trace \(rows[list.selected].id): \(rows[list.selected].name)"
    }

    /// The keys; while a step's tokens are on show the footer names what they do there, and
    /// `l` is the logit lens at the cursor token (`→` and `j` still move a token).
    package var keymap: Keymap {
        let tokens = showingTokens
        let lensKey = tokens && tokenInside == nil
        let lens = KeyBinding(
            [.character(lensKey ? "l" : "L")], .panel(.own(Action.lens)),
            help: "Token view: the logit lens where the cursor token was chosen, each layer's prediction (l there too)",
            footer: lensKey ? "lens" : nil)
        // `L` stays the lens in the token view too, beside `l`.
        let lensAlso = lensKey ? [KeyBinding([.character("L")], .panel(.own(Action.lens)), help: "The logit lens")] : []
        return Keymap(
            "Traces",
            [
                KeyBinding([.enter], .panel(.open), help: "Open the selected trace", footer: tokens ? nil : "open"),
                KeyBinding(
                    lensKey ? [.right] : [.character("l"), .right], .panel(.right),
                    help: "Next step (token view: → next token, l the logit lens at the cursor token)",
                    footer: tokens ? "token" : "step"),
                KeyBinding(
                    [.character("j"), .down], .panel(.down), help: "List: next trace · trace: scroll the detail"),
                KeyBinding(
                    [.character("k"), .up], .panel(.up), help: "List: previous trace · trace: scroll the detail"),
                KeyBinding(
                    [.character("h"), .left], .panel(.left), help: "Previous step (token view: previous token)"),
                KeyBinding(
                    [.character("J")], .panel(.own(Action.nextSpan)),
                    help: "Next span of any kind (agent, chain, workflow, scorer …)", footer: tokens ? nil : "span"),
                KeyBinding([.character("K")], .panel(.own(Action.previousSpan)), help: "Previous span of any kind"),
                KeyBinding(
                    [.character("e")], .panel(.own(Action.error)), help: "Next span with an error (any kind)",
                    footer: tokens ? nil : "error"),
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
                    [.character("T")], .panel(.own(Action.tokens)),
                    help:
                        "A local model's step: its generated tokens shaded by probability, alternatives (T again: close)",
                    footer: tokens ? "close" : nil),
                KeyBinding(
                    [.character("]")], .panel(.own(Action.nextUncertain)),
                    help: "Next uncertain token of the step (low-confidence p<0.3, or a near-tie)",
                    footer: tokens ? "uncertain" : nil),
                KeyBinding(
                    [.character("[")], .panel(.own(Action.previousUncertain)), help: "Previous uncertain token"),
                KeyBinding(
                    [.character("a")], .panel(.own(Action.attention)),
                    help:
                        "Token view: SmolLM2's attention where the cursor token was chosen (head grid, what each head "
                        + "read; a again: close)",
                    footer: tokens ? "attention" : nil),
                lens,
                KeyBinding(
                    [.character("x")], .panel(.own(Action.features)),
                    help:
                        "Token view: the SmolLM2 SAE features active where the cursor token was chosen, each "
                        + "against its largest activation (sae at; x again: close)",
                    footer: tokens ? "features" : nil),
            ] + lensAlso + [
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
                    footer: tokens ? nil : "diff"),
                KeyBinding(
                    [.character("f")], .panel(.own(Action.fork)),
                    help:
                        "Fork at this step: edit the tool result or the user message, continue offline (token view: "
                        + "fork at the cursor token with its second-best alternative, SmolLM2 continues)",
                    footer: tokens ? "fork 2nd" : "fork"),
                KeyBinding(
                    [.character("F")], .panel(.own(Action.forkInEditor)),
                    help:
                        "Fork at this step with the text in $VISUAL/$EDITOR (save and quit to run it) (token view: "
                        + "choose the alternative, 1-5 or arrows and enter, or type the text to fork with)",
                    footer: tokens ? "fork…" : nil),
                KeyBinding(
                    [.character("s")], .panel(.own(Action.sort)),
                    help: "Sort the traces by the next column (start, duration, steps, tokens, cost, errors)"),
                KeyBinding([.character("S")], .panel(.own(Action.reverse)), help: "Reverse the sort"),
                KeyBinding(
                    [.character("R"), .control("r")], .panel(.own(Action.reload)), help: "Reload the trace list"),
                KeyBinding(
                    [.character("v")], .panel(.own(Action.sessions)),
                    help: "Sessions: the traces grouped by session.id, conversation or thread (v again: traces)",
                    footer: tokens ? nil : "sessions"),
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
    package var capturesText: Bool { forking || traceView?.choosingFork == true }
    /// Whether the open step's tokens are on show (`T`): the keys then act on its tokens.
    package var showingTokens: Bool { traceView?.tokenView != nil }

    // MARK: - Keys

    package mutating func perform(_ action: PanelAction, area: Rect) -> [PanelEffect] {
        if case .specific(let own) = action { return perform(own.action(as: Action.self)) }
        if tokenInside != nil {
            tokenInside?.perform(action)
            return []
        }
        if diffView != nil {
            diffView?.perform(action, area: area)
            return []
        }
        if traceView != nil { return traceView?.perform(action, area: area) ?? [] }
        let chosen =
            showingSessions
            ? sessionsView.perform(action, sessions: sessions, area: area) : listView.perform(action, area: area)
        guard let id = chosen else { return [] }
        opening = id
        return [.ask(OpenTrace(id: id))]
    }

    /// The panel's own keys, handed to the view on show; the mark, the diff and the fork are
    /// the panel's own, as they outlive a view.
    private mutating func perform(_ action: Action) -> [PanelEffect] {
        if diffView != nil {
            diffView?.perform(action)
            return []
        }
        switch action {
        case .mark:
            marked = trace?.summary.id ?? listView.selectedID
        case .diff:
            let current = trace?.summary.id ?? listView.selectedID
            guard let marked, let current else {
                // A hint on the status bar: in the panel's error it hid the list until a trace opened.
                return marked == nil ? [.status("mark a trace with m first, then press d on another", .info)] : []
            }
            error = nil
            return [.ask(DiffTraces(left: marked, right: current))]
        case .fork, .forkInEditor:
            tokenInside = nil
            return startFork(inEditor: action == .forkInEditor)
        case .attention, .lens:
            return openInside(action == .attention ? .attention : .lens)
        case .features:
            return openInside(.features)
        case .nextUncertain, .previousUncertain:
            // With the attention or the lens open, they follow the cursor to the next uncertain token.
            let effects = traceView?.perform(action) ?? []
            guard let open = tokenInside, effects.isEmpty else { return effects }
            tokenInside = nil
            return openInside(open.kind)
        case .error, .tool, .raw, .play, .faster, .slower, .nextSpan, .previousSpan, .roofline, .conversation,
            .tokens:
            tokenInside = nil
            return traceView?.perform(action) ?? []
        case .sessions:
            guard trace == nil else { return [] }
            showingSessions.toggle()
            _ = sessionsView.closeSession()
        case .sort:
            guard trace == nil, !showingSessions else { return [] }
            listView.sortByNextColumn()
        case .reverse:
            guard trace == nil, !showingSessions else { return [] }
            listView.reverseSort()
        case .reload:
            guard trace == nil else { return [] }
            return [.ask(ListTraces(fresh: true))]
        }
        return []
    }

    package mutating func goBack() {
        if tokenInside != nil || insideAsked != nil {
            tokenInside = nil
            insideAsked = nil
            return
        }
        if diffView != nil {
            diffView = nil
            return
        }
        if trace == nil, opening != nil {
            // A trace asked for and not read yet: esc cancels its opening.
            opening = nil
            return
        }
        if traceView?.closeTokens() == true { return }
        if trace == nil, sessionsView.closeSession() { return }
        if trace == nil, showingSessions {
            showingSessions = false
            return
        }
        if trace == nil, filter != nil {
            listView.keep(nil)
            return
        }
        closeTrace()
    }

    /// Closes the open trace, keeping its settings for the next.
    private mutating func closeTrace() {
        tokenInside = nil
        insideAsked = nil
        if let traceView { traceSettings = traceView.settings }
        traceView = nil
        opening = nil
    }

    // MARK: - Attention and lens at a token

    /// `a` and `l` in the token view: SmolLM2 reads the step's context to the cursor token, off
    /// the main loop; the same key again closes what it opened. Outside the token view they say
    /// how to get there.
    private mutating func openInside(_ kind: TokenInside.Kind) -> [PanelEffect] {
        guard let trace, let view = traceView?.tokenView else {
            let what =
                switch kind {
                case .attention: "a: its attention at the cursor token"
                case .lens: "l: its logit lens at the cursor token"
                case .features: "x: the SAE features there"
                }
            return [.status("open a local model step's tokens with T, then \(what)", .info)]
        }
        let address = TokenAddress(trace: trace.summary.id, span: view.ordinal, token: view.cursor)
        if let open = tokenInside, open.kind == kind, open.token == address.token {
            tokenInside = nil
            return []
        }
        insideAsked = (kind, address)
        switch kind {
        case .attention:
            return [
                .ask(TokenAttentionAt(address)),
                .status(
                    "SmolLM2 reads the step to token #\(address.token) · loupe attention --model smollm2 \(address.selectors)",
                    .info),
            ]
        case .lens:
            return [
                .ask(TokenLensAt(address)),
                .status("SmolLM2 reads the step to token #\(address.token) · loupe lens \(address.selectors)", .info),
            ]
        case .features:
            return [
                .ask(TokenFeaturesAt(address)),
                .status(
                    "SmolLM2 and its SAE read the step to token #\(address.token) · loupe sae at \(address.selectors)",
                    .info),
            ]
        }
    }

    /// An answer to `a` or `l`: shown when it is the one asked for and the trace is still open.
    private mutating func receiveInside<Answer: Hashable & Sendable>(
        _ kind: TokenInside.Kind, _ address: TokenAddress, _ loaded: Load<Answer>, open: (Answer) -> TokenInside
    ) -> [PanelEffect] {
        guard let asked = insideAsked, asked.kind == kind, asked.address == address,
            trace?.summary.id == address.trace
        else { return [] }
        insideAsked = nil
        switch loaded {
        case .loaded(let answer):
            tokenInside = open(answer)
            return []
        case .failed(let message):
            return [.status(UntrustedText.sanitized(message), .error)]
        }
    }

    // MARK: - Fork

    /// `f` and `F` on the open trace: the step's tool result or user message to edit, on the
    /// fork line or in `$EDITOR`; in the token view, a fork at the cursor token.
    private mutating func startFork(inEditor: Bool) -> [PanelEffect] {
        if showingTokens { return startTokenFork(choosing: inEditor) }
        guard let trace, let ordinal = currentOrdinal, let detail else { return [] }
        let span = trace.spans[ordinal]
        let text: String
        if span.kind == SpanKind.tool.rawValue {
            text = detail.payload.tool?.result ?? ""
        } else if span.kind == SpanKind.llm.rawValue {
            text = detail.payload.input.last { $0.role == "user" }?.text ?? ""
        } else {
            return [.status("fork from a tool step (its result) or a model step (its user message)", .info)]
        }
        if inEditor {
            editingFork = (ordinal, text)
            return [.app(.editText(name: Self.forkEditorName, text: text))]
        }
        forkEditor = ForkEditor(text)
        return []
    }

    /// `f` in the token view forks at the cursor token with its second-best alternative (the
    /// most likely one the model did not choose); `F` opens the fork line to choose another or
    /// type text.
    private mutating func startTokenFork(choosing: Bool) -> [PanelEffect] {
        guard let view = traceView?.tokenView else { return [] }
        if choosing {
            traceView?.openForkChooser()
            return []
        }
        let token = view.tokens[view.cursor]
        guard let second = TokenForkChooser.secondBest(token) else {
            return [.status("token #\(view.cursor) has no other alternative recorded to fork with", .info)]
        }
        return forkAtToken(ordinal: view.ordinal, token: view.cursor, replacement: .alternative(second + 1))
    }

    /// Runs `trace fork --at-token` at token `token` of span `ordinal`.
    private mutating func forkAtToken(
        ordinal: Int, token: Int, replacement: AgentService.TokenReplacement
    ) -> [PanelEffect] {
        guard let trace, let view = traceView?.tokenView, view.tokens.indices.contains(token) else { return [] }
        let id = trace.summary.id
        let choice: String
        let said: String
        switch replacement {
        case .alternative(let k):
            choice = "--choose \(k)"
            said =
                view.tokens[token].alternatives.indices.contains(k - 1)
                ? TracesPanel.quoted(view.tokens[token].alternatives[k - 1].text) : "alternative \(k)"
        case .text(let text):
            choice = "--text " + Self.shellQuoted(text)
            said = TracesPanel.quoted(text)
        }
        tokenFork = (id, ordinal, token)
        return [
            .run("trace fork \(id) --at-token \(ordinal):\(token) \(choice)", tag: Self.tokenForkTag),
            .status(
                "forking trace \(id) at span \(ordinal), token #\(token): "
                    + "\(TracesPanel.quoted(view.tokens[token].text)) → \(said) with SmolLM2 …", .info),
        ]
    }

    static func shellQuoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    package mutating func handleText(_ key: Key) -> [PanelEffect] {
        if traceView?.choosingFork == true, let view = traceView?.tokenView {
            switch traceView?.handleForkChooser(key) ?? .cancelled {
            case .choosing, .cancelled: return []
            case .refused(let why): return [.status(why, .info)]
            case .alternative(let k):
                return forkAtToken(ordinal: view.ordinal, token: view.cursor, replacement: .alternative(k))
            case .text(let text):
                return forkAtToken(ordinal: view.ordinal, token: view.cursor, replacement: .text(text))
            }
        }
        guard var editor = forkEditor else { return [] }
        switch editor.handle(key) {
        case .editing: forkEditor = editor
        case .cancelled: forkEditor = nil
        case .submitted(let text):
            forkEditor = nil
            guard let ordinal = currentOrdinal else { return [] }
            return fork(at: ordinal, with: text)
        }
        return []
    }

    /// Runs `trace fork` at `ordinal` with `text` as the step's new tool result or user message.
    private func fork(at ordinal: Int, with text: String) -> [PanelEffect] {
        guard let trace, ordinal < trace.spans.count else { return [] }
        let flag = trace.spans[ordinal].kind == SpanKind.tool.rawValue ? "--result" : "--message"
        return [
            .run(
                "trace fork \(trace.summary.id) --at \(ordinal) \(flag) \(Self.shellQuoted(text))", tag: Self.forkTag)
        ]
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
        if tag == Self.tokenForkTag { return tokenForkFinished(outcome) }
        guard tag == Self.forkTag else { return }
        if let failure = outcome.error { error = failure }
        // "fork: trace N (trace P at span k)": open the diff of parent and fork.
        guard let range = outcome.output.range(of: "fork: trace "),
            let fork = Int64(outcome.output[range.upperBound...].prefix { $0.isNumber }),
            let parent = trace?.summary.id
        else { return }
        queued += [.ask(DiffTraces(left: parent, right: fork))]
    }

    /// A token fork ran: the new trace opens on the forked step's tokens at the changed one,
    /// its parent marked so `d` compares them; the status line says what was forked.
    private mutating func tokenForkFinished(_ outcome: CommandOutcome) {
        guard let forked = tokenFork else { return }
        tokenFork = nil
        if let failure = outcome.error {
            queued.append(.status("fork failed: " + UntrustedText.sanitized(failure), .error))
            return
        }
        let lines = outcome.output.split(separator: "\n")
        guard let line = lines.last(where: { $0.hasPrefix("fork: trace ") }),
            let id = Int64(line.dropFirst("fork: trace ".count).prefix { $0.isNumber })
        else { return }
        let answer = lines.last { $0.hasPrefix("answer: ") }.map { " · " + $0 } ?? ""
        let said = line.split(separator: " — ").first.map(String.init) ?? String(line)
        queued.append(
            .status(
                UntrustedText.sanitized(said + answer) + " · d: diff with trace \(forked.parent)", .ok))
        marked = forked.parent
        diffView = nil
        closeTrace()
        opening = id
        openingFork = (id, forked.ordinal, forked.token)
        queued += [.ask(OpenTrace(id: id)), .ask(ListTraces())]
    }

    // MARK: - Messages

    package mutating func receive(_ msg: Msg) -> [PanelEffect] {
        switch msg {
        case .navigate(.trace(let id)):
            // Another panel (an eval answer) asked for this trace: close what is open, open it.
            diffView = nil
            goBack()
            if let index = rows.firstIndex(where: { $0.id == id }) { listView.list.selected = index }
            opening = id
            return [.ask(OpenTrace(id: id)), .ask(ListTraces())]
        case .answered(let answer):
            return receive(answer)
        case .edited(Self.forkEditorName, let text, let error):
            return finishEditingFork(text: text, error: error)
        case .tick(let now):
            return traceView?.tick(now) ?? []
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
        case .input, .terminate, .fileWritten, .edited, .readFinished, .navigate, .listening, .unreachable: break
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

    /// The traces port's answers; stale ones (another trace opened since) are dropped.
    private mutating func receive(_ answer: PortAnswer) -> [PanelEffect] {
        if let (_, page) = answer.matching(ListFirstTraces.self) {
            return receiveFirst(page)
        } else if let (_, loaded) = answer.matching(ListTraces.self) {
            return receiveList(loaded)
        } else if let (asked, opened) = answer.matching(OpenTrace.self) {
            switch opened {
            case .loaded(let loaded): return receiveTrace(loaded, asked: asked.id)
            case .failed(let message): error = message
            }
        } else if let (asked, loaded) = answer.matching(LoadSpan.self) {
            if let message = traceView?.receive(asked, loaded) { error = message }
        } else if let (asked, found) = answer.matching(SearchTrace.self) {
            guard asked.trace == trace?.summary.id else { return [] }
            switch found {
            case .loaded(let ordinals): return traceView?.matched(asked.text, ordinals: ordinals) ?? []
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
        } else if let (asked, loaded) = answer.matching(TokenAttentionAt.self) {
            return receiveInside(.attention, asked.address, loaded) { .attention(TokenAttentionView($0)) }
        } else if let (asked, loaded) = answer.matching(TokenLensAt.self) {
            return receiveInside(.lens, asked.address, loaded) { .lens(TokenLensView($0)) }
        } else if let (asked, loaded) = answer.matching(TokenFeaturesAt.self) {
            return receiveInside(.features, asked.address, loaded) { .features(TokenFeaturesView($0)) }
        } else if let (_, loaded) = answer.matching(DiffTraces.self) {
            switch loaded {
            case .loaded(let compared): diffView = DiffView(compared)
            case .failed(let message): error = message
            }
        }
        return []
    }

    /// The first traces of a large workspace: shown while the whole list is read.
    private mutating func receiveFirst(_ page: Load<TraceService.Page>) -> [PanelEffect] {
        switch page {
        case .loaded(let page):
            // The whole list may have come first (a reload asked meanwhile): it stands.
            guard traces == nil || partOf != nil else { return [] }
            let more = page.total > page.traces.count
            listView.accept(page.traces, partOf: more ? page.total : nil)
            sessionsView.clamp(to: sessions)
            guard more else { return [] }
        case .failed:
            // The whole list says what is wrong, if anything still is.
            break
        }
        listInFlight = true
        return [.ask(ListTraces())]
    }

    /// The whole list: shown, the open trace read again when its row shows it grew, and the
    /// list read again when the workspace changed while it was read.
    private mutating func receiveList(_ loaded: Load<[TraceSummary]>) -> [PanelEffect] {
        listInFlight = false
        var effects: [PanelEffect] = []
        switch loaded {
        case .loaded(let loaded):
            // The open trace grew: read it again (the cursor stays, or follows the newest step).
            if let open = trace?.summary, let row = loaded.first(where: { $0.id == open.id }),
                row.spanCount != open.spanCount || row.importedAt != open.importedAt
            {
                effects.append(.ask(OpenTrace(id: open.id)))
            }
            listView.accept(loaded)
            sessionsView.clamp(to: sessions)
        case .failed(let message):
            listView.failed(message)
        }
        if listStale {
            listStale = false
            listInFlight = true
            effects.append(.ask(ListTraces()))
        }
        return effects
    }

    /// A trace read: opened when it is the one asked for, or read again when it is open (a
    /// run recorded live). A live trace opens on its newest step and follows it as it grows
    /// (`h` stops following; the last step follows again).
    private mutating func receiveTrace(_ loaded: TraceService.Loaded, asked id: Int64) -> [PanelEffect] {
        guard trace?.summary.id == id || (trace == nil && opening == id) else { return [] }
        traceReads += 1
        error = nil
        if var open = traceView {
            let effects = open.reload(loaded, generation: traceReads)
            traceView = open
            return effects
        }
        var open = TraceView(loaded, generation: traceReads, settings: traceSettings, following: live.contains(id))
        var effects = open.loadStep()
        if let fork = openingFork, fork.id == id {
            openingFork = nil
            effects += open.focus(ordinal: fork.ordinal, token: fork.token)
        }
        traceView = open
        return effects
    }

    // MARK: - Search

    package mutating func searchSubmitted(_ query: String) -> [PanelEffect] {
        guard let trace else {
            // In the list, enter keeps what was typed as a filter.
            let kept = TraceFilter(query)
            listView.keep(kept)
            return kept.problems.map { [.status($0, .error)] } ?? []
        }
        return [.ask(SearchTrace(trace: trace.summary.id, text: query))]
    }

    package mutating func search(_ query: String, forward: Bool, includeCurrent: Bool) -> Bool {
        if var open = traceView {
            let found = open.search(query, forward: forward, includeCurrent: includeCurrent, effects: &queued)
            traceView = open
            return found
        }
        // The list: the filter language (`errors`, `cost>0.01`, `format:inspect`, words).
        return listView.search(query, forward: forward, includeCurrent: includeCurrent)
    }
}
