import Foundation
import LoupeAgents
import LoupeApp
import LoupeBase
import LoupeKit
import LoupeModels
import LoupeStore
import LoupeTUI
import LoupeTensor
import LoupeTestSupport
import Testing

/// The Traces panel on the sample OTLP export, imported into a real workspace; its port's
/// answers are played in the test's thread (effect in, message back).
@Suite struct TracesPanelTests {
    let service: TraceService
    let workspace: Workspace

    init() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-traces-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        workspace = try Workspace(path: directory + "/w.sqlite")
        service = TraceService(workspace: workspace)
        let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../sample-data/traces/otlp-genai.jsonl").standardized.path
        _ = try service.importFiles([sample])
    }

    private func panel(_ state: AppState) -> TracesPanel { state.panels[state.focusedPanel] as! TracesPanel }

    /// Runs the port requests a key asked for on the real Traces port, as the runtime would.
    private func settle(_ effects: [Effect], _ state: inout AppState) throws {
        var ports = Ports()
        ports.register(TracesBrowser(workspace: workspace))
        AppFixtures.settle(effects, &state, ports: ports)
    }

    /// An Inspect sample stopped by a limit says so at its root, with the limits it ran under.
    @Test func anInspectSampleShowsItsLimits() throws {
        let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../sample-data/traces/inspect-limits.json").standardized.path
        let traces = try TraceImport.traces(Data(contentsOf: URL(fileURLWithPath: sample)), file: sample)
        let stopped = TracesPanel.limitLines(traces[0].spans[0].attributes, theme: .builtInDefault).map {
            $0.map(\.text).joined()
        }
        #expect(
            stopped == [
                "── limits ──", "ran under  messages 4 · tokens 2000", "⚠ stopped by the message limit (4)",
                "  Message limit exceeded. count: 5; limit: 4",
            ])
        let answered = TracesPanel.limitLines(traces[1].spans[0].attributes, theme: .builtInDefault)
        #expect(answered.last?.map(\.text).joined() == "no limit was reached")
        #expect(TracesPanel.limitLines([:], theme: .builtInDefault).isEmpty)
    }

    /// A workspace of many traces shows its first ones at once, says how many there are while
    /// it reads the rest, and then shows them all with the selection kept.
    @Test func aLargeListShowsItsFirstTracesWhileTheRestIsRead() throws {
        #expect(TracesPanel().initialEffects == [.ask(TracesPanel.ListFirstTraces())])
        var state = AppState(
            size: Size(width: 120, height: 36), theme: .builtInDefault, panels: AppState.standardPanels(),
            workspaceName: "w.sqlite", catalog: AppFixtures.catalog, themeNames: ["default"])
        let browser = TracesBrowser(workspace: workspace)
        let page = try browser.list(first: 2)
        #expect(page.total == 3 && page.traces.map(\.id) == [1, 2])
        #expect(page.traces == Array(try browser.list().prefix(2)))
        let effects = state.update(AppFixtures.answer(TracesPanel.ListFirstTraces(limit: 2), page))
        #expect(!state.panels[state.focusedPanel].isLoadingFirstView)
        #expect(state.render().text().contains("first 2 of 3, reading the rest · sort: start ↑"))
        AppFixtures.press([.down], on: &state)
        let selected = panel(state).rows[panel(state).list.selected].id
        try settle(effects, &state)
        #expect(panel(state).partOf == nil && panel(state).rows.count == 3)
        #expect(panel(state).rows[panel(state).list.selected].id == selected)
        #expect(!state.render().text().contains("reading the rest"))

        // A workspace whose traces all fit the first view reads nothing more.
        var small = AppState(
            size: Size(width: 120, height: 36), theme: .builtInDefault, panels: AppState.standardPanels(),
            workspaceName: "w.sqlite", catalog: AppFixtures.catalog, themeNames: ["default"])
        let whole = try browser.list(first: 10)
        #expect(small.update(AppFixtures.answer(TracesPanel.ListFirstTraces(limit: 10), whole)).isEmpty)
        #expect(panel(small).rows.count == 3 && panel(small).partOf == nil)
    }

    @Test func aListThatCannotBeReadIsSaidSoInsteadOfNoTraces() {
        var state = AppFixtures.state(width: 120, height: 36)
        _ = state.update(AppFixtures.failure(TracesPanel.ListTraces(), "w.sqlite: no such table: spans"))
        let text = state.render().text()
        #expect(text.contains("w.sqlite: no such table: spans"))
        #expect(!text.contains("Replay agent runs step by step"))
        // The next read that succeeds (a PostgreSQL server back after a restart) shows the list:
        // the failure is not kept over it.
        _ = state.update(.workspaceChanged)
        _ = state.update(AppFixtures.answer(TracesPanel.ListTraces(), [TraceSummary]()))
        let again = state.render().text()
        #expect(!again.contains("no such table") && again.contains("Replay agent runs step by step"), "\(again)")
    }

    @Test func spacePlaysTheStepsOnTicksAndStopsAtTheEnd() throws {
        var state = try opened()
        try settle(AppFixtures.press([.character(" ")], on: &state), &state)
        #expect(panel(state).playing && state.wantsTicks)
        #expect(state.render().text().contains("▶ 1 s/step"))
        try settle(state.update(.tick(100.0)), &state)
        #expect(panel(state).currentOrdinal == 2)
        try settle(state.update(.tick(100.5)), &state)  // not a second yet
        #expect(panel(state).currentOrdinal == 2)
        AppFixtures.press([.character(">")], on: &state)  // 0.5 s a step
        for t in [101.0, 101.5, 102.0, 102.5, 103.0] { try settle(state.update(.tick(t)), &state) }
        #expect(panel(state).currentOrdinal == 5 && !panel(state).playing && !state.wantsTicks)
    }

    @Test func slashFindsTextInsideTheStepsContent() throws {
        var state = try opened()
        // "transition" is only in the search tool's arguments (step 2) and a later model input.
        try settle(
            AppFixtures.press([.character("/")] + "transition".map { .character($0) } + [.enter], on: &state), &state)
        #expect(panel(state).deepMatches?.ordinals.isEmpty == false)
        let first = try #require(panel(state).currentOrdinal)
        #expect(panel(state).deepMatches?.ordinals.contains(first) == true)
        #expect(state.render().text().contains("“transition” in"))
        try settle(AppFixtures.press([.character("n")], on: &state), &state)
        #expect(panel(state).deepMatches?.ordinals.contains(panel(state).currentOrdinal ?? -1) == true)
        #expect(panel(state).detail != nil)
        // The found text is highlighted in the step.
        let frame = state.render()
        let rows = frame.text().split(separator: "\n", omittingEmptySubsequences: false).map(Array.init)
        let hits = rows.indices.flatMap { y in
            TextSearch.caseInsensitiveMatches(of: "transition", in: rows[y]).map { (y, $0.lowerBound) }
        }
        #expect(hits.contains { frame[$0.1, $0.0].style == Theme.builtInDefault.match })
    }

    @Test func highlightingSplitsSpansAtEveryMatch() {
        let spans = [Span("Boundary layer TRANSITION and transition", .plain)].highlighting(
            "transition", as: Style(attributes: .bold))
        #expect(spans.map(\.text) == ["Boundary layer ", "TRANSITION", " and ", "transition"])
        #expect(spans.map(\.style) == [.plain, Style(attributes: .bold), .plain, Style(attributes: .bold)])
    }

    @Test func aTraceRecordedLiveGrowsOnScreenAndTheCursorFollows() throws {
        var state = try opened()
        try settle(AppFixtures.press([.character("G")], on: &state), &state)
        let id = try #require(panel(state).trace?.summary.id)
        let effects = state.update(
            .jobProgress(JobID(7), JobProgress(completed: 1, total: 4, detail: "trace \(id) · 3 spans")))
        #expect(
            effects.contains(.ask(TracesPanel.OpenTrace(id: id))) && effects.contains(.ask(TracesPanel.ListTraces())))
        // Another trace's progress does not reload the open one.
        #expect(
            !state.update(.jobProgress(JobID(7), JobProgress(completed: 1, total: 4, detail: "trace 999 · x")))
                .contains(.ask(TracesPanel.OpenTrace(id: id))))
    }

    /// Every span can be selected, not only the steps: K from the first step is the agent span
    /// at the root, with what its subtree used and its attributes; J goes back down.
    @Test func spansThatAreNotStepsAreSelectableWithJAndK() throws {
        var state = try opened()
        #expect(panel(state).currentOrdinal == 1)
        try settle(AppFixtures.press([.character("K")], on: &state), &state)
        #expect(panel(state).currentOrdinal == 0 && panel(state).spanCursor == 0)
        let text = state.render().text()
        #expect(text.contains("agent · invoke_agent cranfield-qa"))
        #expect(text.contains("under it: 5 steps · tokens 1485/102"))
        #expect(text.contains("── attributes ──") && text.contains("gen_ai.agent.name"))
        // l goes on to the first step after it; J from the root is that step too.
        try settle(AppFixtures.press([.character("l")], on: &state), &state)
        #expect(panel(state).currentOrdinal == 1 && panel(state).spanCursor == nil)
        try settle(AppFixtures.press([.character("K"), .character("J")], on: &state), &state)
        #expect(panel(state).currentOrdinal == 1)
    }

    /// `/` then enter keeps a filter over the list: words, `field:text` and comparisons.
    @Test func theListFiltersWithAFilterLanguage() throws {
        let summaries = try workspace.traces.traceSummaries()
        #expect(summaries.count >= 3)
        for query in ["errors", "steps>1", "spans<=3", "tokens>=1000", "cost>0", "duration>2s", "format:otlp", "qa"] {
            let filter = TraceFilter(query)
            let expected = summaries.filter { summary in
                switch query {
                case "errors": summary.errorCount > 0
                case "steps>1": summary.stepCount > 1
                case "spans<=3": summary.spanCount <= 3
                case "tokens>=1000": (summary.inputTokens ?? 0) + (summary.outputTokens ?? 0) >= 1000
                case "cost>0": (summary.cost ?? 0) > 0
                case "duration>2s": summary.timed && Double(summary.durationNs) > 2e9
                case "format:otlp": summary.format == "otlp"
                default: summary.name.lowercased().contains("qa") || summary.externalID.lowercased().contains("qa")
                }
            }
            #expect(summaries.filter(filter.matches).map(\.id) == expected.map(\.id), "\(query)")
        }
        // Models come from the spans: the OTLP traces called gpt-4o-mini, the others did not.
        let mini = summaries.filter { $0.models.contains { $0.contains("gpt-4o-mini") } }
        #expect(!mini.isEmpty && mini.count < summaries.count)
        #expect(summaries.filter(TraceFilter("model:gpt-4o-mini").matches).map(\.id) == mini.map(\.id))
        // Time: since and before a date, and relative to now.
        let starts = summaries.map { $0.timed ? Double($0.startedNs) / 1e9 : $0.importedAt.timeIntervalSince1970 }
        let latest = try #require(starts.max())
        let now = Date(timeIntervalSince1970: latest + 1800)
        #expect(
            summaries.filter(TraceFilter("since:1h", now: now).matches).map(\.id)
                == zip(summaries, starts).filter { $0.1 >= latest - 1800 }.map(\.0.id))
        #expect(summaries.filter(TraceFilter("since:1m", now: now).matches).isEmpty)
        #expect(summaries.filter(TraceFilter("before:1970-01-02").matches).isEmpty)
        #expect(summaries.filter(TraceFilter("since:1970-01-02").matches).count == summaries.count)
        // A time it cannot read matches nothing and says what a time is.
        let unreadable = TraceFilter("errors since:30s")
        #expect(summaries.filter(unreadable.matches).isEmpty)
        #expect(unreadable.problems == "since:30s: a time is 30m, 2h, 7d or a date such as 2026-11-20")
        #expect(TraceFilter("since:2h").problems == nil)
        // In the panel: the filter narrows the list, esc clears it.
        var state = AppFixtures.state(width: 120, height: 36)
        try settle([.ask(TracesPanel.ListTraces())], &state)
        try settle(
            AppFixtures.press([.character("/")] + "errors".map { .character($0) } + [.enter], on: &state), &state)
        #expect(panel(state).rows.count == summaries.filter { $0.errorCount > 0 }.count)
        #expect(
            state.render().text().contains(
                "Traces · filter “errors” · \(panel(state).rows.count) of \(summaries.count)"))
        AppFixtures.press([.escape, .escape], on: &state)
        #expect(panel(state).filter == nil && panel(state).rows.count == summaries.count)
    }

    /// y copies the step on screen to the clipboard (OSC 52), as its pane shows it.
    @Test func yCopiesTheStepOnScreen() throws {
        var state = try opened()
        try settle(AppFixtures.press([.character("l")], on: &state), &state)
        let effects = AppFixtures.press([.character("y")], on: &state)
        guard case .copy(let text)? = effects.first else {
            Issue.record("y copied nothing: \(effects)")
            return
        }
        #expect(text.contains("\"query\": \"heat transfer boundary layer transition\""))
        #expect(state.message?.text == "✓ copied \(text.count) characters to the clipboard")
        // With nothing selected, it says so.
        var empty = AppFixtures.state()
        AppFixtures.press([.character("4"), .character("y")], on: &empty)
        #expect(empty.message?.text == "Nothing selected to copy here")
    }

    /// A model call shows its own output first, then the conversation it was sent with the earlier
    /// messages folded to a line each (the walkthrough's SWE-agent step: 37 half-pages of system
    /// prompt before the output); `c` unfolds them, and `y` copies them whole either way.
    @Test func aModelCallShowsItsOutputFirstAndFoldsTheConversation() throws {
        let state = try opened()
        let traces = panel(state)
        let trace = try #require(traces.trace)
        let ordinal = try #require(traces.currentOrdinal)
        func text(_ expanded: Bool) -> [String] {
            TracesPanel.detailLines(
                trace: trace, ordinal: ordinal, detail: traces.detail, raw: false, theme: .builtInDefault,
                conversationExpanded: expanded
            ).map { $0.map(\.text).joined() }
        }
        let folded = text(false)
        let output = try #require(folded.firstIndex { $0.hasPrefix("── output ──") })
        let conversation = try #require(folded.firstIndex { $0.hasPrefix("── conversation as sent") })
        #expect(output < conversation)
        #expect(folded[conversation].hasSuffix("c: unfold"))
        // The system prompt is one folded line; the last message (what the model answered) is whole.
        #expect(folded.contains { $0.hasPrefix("▸ [system] Answer from the Cranfield collection") })
        #expect(!folded.contains("[system]"))
        let attributes = try #require(folded.firstIndex { $0.hasPrefix("── attributes ──") })
        #expect(folded[attributes - 1].contains("what is the effect of heat transfer on boundary layer"))
        // A step has its attribute table too, below the conversation.
        #expect(folded[attributes...].contains { $0.hasPrefix("gen_ai.request.model  gpt-4o-mini") })
        let whole = text(true)
        #expect(whole.contains("[system]") && whole.contains("  Answer from the Cranfield collection. Cite chunk ids."))
        #expect(!whole.contains { $0.hasPrefix("▸ ") })
        // The key switches the pane's view.
        var keyed = state
        #expect(!panel(keyed).conversationExpanded)
        AppFixtures.press([.character("c")], on: &keyed)
        #expect(panel(keyed).conversationExpanded)
        #expect(keyed.render().text().contains("c: fold"))
    }

    /// A fork says who continues it: the offline policy, not the model the trace ran (the
    /// walkthrough's forked mockllm trace answered "2 ** 10 - 24 = 1000" with nothing saying why).
    @Test func aForkSaysWhoContinuesIt() throws {
        var state = try opened()
        AppFixtures.press([.character("f")], on: &state)
        #expect(panel(state).forking)
        #expect(state.render().text().contains("fork · new message · continued by the offline policy, not gpt-4o-mini"))
    }

    /// The steps beside the cursor are read ahead: stepping shows the next one at once.
    @Test func theNextStepIsReadAheadSoSteppingShowsItAtOnce() throws {
        var state = try opened()
        let effects = AppFixtures.press([.character("l")], on: &state)
        #expect(panel(state).currentOrdinal == 2 && panel(state).detail != nil)
        #expect(!state.render().text().contains("loading…"))
        // What it asks for now is the step after it, not the one on screen.
        #expect(!effects.contains { $0.request(as: TracesPanel.LoadSpan.self)?.ordinal == 2 })
    }

    /// A read-ahead answer asked before the trace was read again (a live trace that grew) is
    /// dropped: its content is the old one.
    @Test func aReadAheadAnswerFromBeforeAReloadIsDropped() throws {
        var state = try opened()
        let id = try #require(panel(state).trace?.summary.id)
        // Step on, keeping the read-ahead request unanswered; then the trace is read again.
        let effects = AppFixtures.press([.character("l")], on: &state)
        let pending = try #require(effects.compactMap { $0.request(as: TracesPanel.LoadSpan.self) }.first)
        try settle([.ask(TracesPanel.OpenTrace(id: id))], &state)
        let stale = SpanDetail(payload: SpanPayload(attributes: ["stale": .bool(true)]), raw: nil)
        _ = state.update(AppFixtures.answer(pending, stale))
        for _ in 0..<6 where panel(state).currentOrdinal != pending.ordinal {
            AppFixtures.press([.character("l")], on: &state)
        }
        #expect(panel(state).currentOrdinal == pending.ordinal)
        #expect(panel(state).detail?.payload.attributes["stale"] == nil)
    }

    /// A key pressed before the list has loaded (as the app starts) is played once it has,
    /// not dropped on an empty list; global keys are not held.
    @Test func keysPressedWhileTheListLoadsAreNotDropped() throws {
        func starting() -> AppState {
            AppState(
                size: Size(width: 120, height: 36), theme: .builtInDefault, panels: AppState.standardPanels(),
                workspaceName: "w.sqlite", catalog: AppFixtures.catalog, themeNames: ["default"])
        }
        var state = starting()
        #expect(AppFixtures.press([.enter], on: &state).isEmpty)
        #expect(state.deferredKeys == [.enter])
        try settle([.ask(TracesPanel.ListTraces())], &state)
        #expect(state.deferredKeys.isEmpty)
        #expect(panel(state).trace?.summary.name == "invoke_agent cranfield-qa")

        var help = starting()
        AppFixtures.press([.character("?")], on: &help)
        #expect(help.mode == .help && help.deferredKeys.isEmpty)

        // A held key is for the panel: not typed into a dialog opened since (y would confirm a
        // quit).
        var quitting = starting()
        AppFixtures.press([.character("y")], on: &quitting)
        _ = quitting.start("workspace vacuum")
        AppFixtures.press([.character("q")], on: &quitting)
        #expect(quitting.mode == .confirmQuit && quitting.deferredKeys.isEmpty)
        try settle([.ask(TracesPanel.ListTraces())], &quitting)
        #expect(quitting.mode == .confirmQuit)
    }

    /// Spans received into the workspace as `loupe serve` stores them (the ingest's own path),
    /// one span at a time, children first.
    private func receive(_ raw: [String]) async throws {
        let body =
            #"{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"live-agent"}}]},"scopeSpans":[{"spans":["#
            + raw.joined(separator: ",") + "]}]}]}"
        let request = try OTLPImporter.spans(in: try JSONValue.parse(body), file: "request", line: nil)
        let ingest = TraceIngest(workspace: workspace)
        try await ingest.submit(request.read, source: "OTLP/HTTP")
        ingest.drain()
    }

    private static func span(_ id: String, parent: String?, name: String, start: Int, attributes: String = "") -> String
    {
        let trace = "11111111111111111111111111111111"
        return
            #"{"traceId":"\#(trace)","spanId":"\#(id)","name":"\#(name)","startTimeUnixNano":"\#(1_767_225_700_000_000_000 + start * 1_000_000)","endTimeUnixNano":"\#(1_767_225_700_000_000_000 + start * 1_000_000 + 500_000)""#
            + (parent.map { #","parentSpanId":"\#($0)""# } ?? "")
            + #","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}},{"key":"gen_ai.request.model","value":{"stringValue":"gpt-4o-mini"}},{"key":"session.id","value":{"stringValue":"s-live"}}\#(attributes)]}"#
    }

    /// A trace received span by span: the list marks it live and shows it without moving the
    /// selection; the open trace grows on screen and the cursor follows its newest step; once the
    /// root arrives it is no longer live. The Sessions view groups it with its session.
    @Test func aReceivedTraceGrowsLiveAndItsSessionIsListed() async throws {
        var state = AppFixtures.state(width: 120, height: 36)
        // The wall clock must not decide liveness here: a loaded CI machine can pause this test
        // for longer than the ten-minute window (the window itself: TraceSummary's test below).
        var traces = state.panels[state.focusedPanel] as! TracesPanel
        traces.liveWindow = .infinity
        state.panels[state.focusedPanel] = traces
        try settle([.ask(TracesPanel.ListTraces())], &state)
        AppFixtures.press([.character("j")], on: &state)
        let selected = panel(state).rows[panel(state).list.selected].id
        try await receive([Self.span("a000000000000001", parent: "a000000000000000", name: "chat first", start: 1)])
        try settle(state.update(.workspaceChanged), &state)
        let live = try #require(panel(state).rows.first { $0.externalID == "11111111111111111111111111111111" })
        #expect(panel(state).live == [live.id])
        #expect(panel(state).rows[panel(state).list.selected].id == selected)
        #expect(state.render().text().contains("● live-agent"))

        // Open it, then a second step arrives: it is on screen and the cursor is on it.
        panel(state).rows.firstIndex { $0.id == live.id }.map { index in
            var traces = state.panels[state.focusedPanel] as! TracesPanel
            traces.list.selected = index
            state.panels[state.focusedPanel] = traces
        }
        try settle(AppFixtures.press([.enter], on: &state), &state)
        #expect(panel(state).trace?.steps.count == 1)
        #expect(state.render().text().contains("● live · following · step 1/1"))
        try await receive([Self.span("a000000000000002", parent: "a000000000000000", name: "chat second", start: 5)])
        try settle(state.update(.workspaceChanged), &state)
        #expect(panel(state).trace?.steps.count == 2)
        #expect(panel(state).step == 1)
        #expect(state.render().text().contains("step 2/2"))

        // The root ends last: the trace is whole, no longer live, named after its root.
        try await receive([Self.span("a000000000000000", parent: nil, name: "invoke_agent live", start: 0)])
        try settle(state.update(.workspaceChanged), &state)
        #expect(panel(state).trace?.summary.name == "invoke_agent live")
        #expect(panel(state).live.isEmpty)
        #expect(!state.render().text().contains("● live"))

        AppFixtures.press([.escape], on: &state)
        AppFixtures.press([.character("v")], on: &state)
        let sessions = panel(state).sessions.map(\.id)
        #expect(sessions.contains("s-live") && sessions.contains("conv-0001"))
        let text = state.render().text()
        #expect(text.contains("Sessions") && text.contains("s-live"))
        let index = try #require(panel(state).sessions.firstIndex { $0.id == "s-live" })
        for _ in 0..<index { AppFixtures.press([.character("j")], on: &state) }
        AppFixtures.press([.enter], on: &state)
        #expect(panel(state).openSession == "s-live")
        #expect(state.render().text().contains("invoke_agent live"))
        try settle(AppFixtures.press([.enter], on: &state), &state)
        #expect(panel(state).trace?.summary.id == live.id)
        AppFixtures.press([.escape], on: &state)
        #expect(panel(state).trace == nil && panel(state).openSession == "s-live")
        AppFixtures.press([.escape], on: &state)
        AppFixtures.press([.escape], on: &state)
        #expect(!panel(state).showingSessions)
    }

    /// A trace's answer that arrives after the user went back, or opened another, is dropped: the
    /// user stays where they went.
    @Test func anOpenAnswerForATraceTheUserLeftIsDropped() throws {
        var state = AppFixtures.state(width: 120, height: 36)
        try settle([.ask(TracesPanel.ListTraces())], &state)
        let asked = AppFixtures.press([.enter], on: &state)
        AppFixtures.press([.escape], on: &state)
        try settle(asked, &state)
        #expect(panel(state).trace == nil)
        AppFixtures.press([.character("j")], on: &state)
        let second = AppFixtures.press([.enter], on: &state)
        try settle(asked + second, &state)
        #expect(panel(state).trace?.summary.id == panel(state).rows[1].id)
    }

    private func opened(width: Int = 120, height: Int = 36) throws -> AppState {
        var state = AppFixtures.state(width: width, height: height)
        try settle([.ask(TracesPanel.ListTraces())], &state)
        try settle(AppFixtures.press([.enter], on: &state), &state)
        return state
    }

    /// A span whose stored payload was damaged (a raw `UPDATE` on the workspace) says so, by
    /// span and column, where its content would be; its numbers and the other steps show as before.
    @Test func aSpanWhosePayloadDoesNotReadBackSaysSoInItsPane() throws {
        let id = try #require(try service.list().first?.id)
        _ = try workspace.writeStatements { sql in
            try sql.execute(
                "UPDATE spans SET payload_json = '{\"tool\": ' WHERE trace_id = ? AND ordinal = 2", [.integer(id)])
        }
        var state = try opened(width: 200, height: 40)
        #expect(!state.render().text().contains("unreadable"))
        try settle(AppFixtures.press([.character("l")], on: &state), &state)
        #expect(panel(state).currentOrdinal == 2)
        let text = state.render().text()
        #expect(text.contains("⚠ unreadable payload (trace \(id), span 2, column payload_json): line 1, column"))
        #expect(!text.contains("\"query\": \"heat transfer boundary layer transition\""))
        try settle(AppFixtures.press([.character("l")], on: &state), &state)
        #expect(!state.render().text().contains("unreadable"))
    }

    @Test func stepsWalkModelAndToolCallsAndJumpToErrorsAndTools() throws {
        var state = try opened()
        #expect(panel(state).trace?.summary.name == "invoke_agent cranfield-qa")
        #expect(panel(state).currentOrdinal == 1)
        #expect(state.render().text().contains("what is the effect of heat transfer on boundary layer"))
        try settle(AppFixtures.press([.character("l")], on: &state), &state)
        #expect(panel(state).currentOrdinal == 2)
        #expect(state.render().text().contains("\"query\": \"heat transfer boundary layer transition\""))
        try settle(AppFixtures.press([.character("e")], on: &state), &state)
        #expect(panel(state).currentOrdinal == 4)
        #expect(state.render().text().contains("✗ division by zero"))
        try settle(AppFixtures.press([.character("t")], on: &state), &state)
        #expect(panel(state).currentOrdinal == 2)  // wraps around to the first tool call
        try settle(AppFixtures.press([.character("G")], on: &state), &state)
        #expect(panel(state).currentOrdinal == 5)
        #expect(state.render().text().contains("so far 1485/102"))
        try settle(AppFixtures.press([.character("h")], on: &state), &state)
        #expect(panel(state).currentOrdinal == 4)
        try settle(AppFixtures.press([.character("r")], on: &state), &state)
        #expect(
            state.render().text().contains("── raw source ──") && state.render().text().contains("\"attributes\": ["))
        AppFixtures.press([.escape], on: &state)
        #expect(panel(state).trace == nil)
    }

    /// An agent run whose search timed a forward pass (three operations over two layers) and
    /// stored its kernel runs, recorded as `AgentService` records it.
    private func recordRunWithAForwardPass() throws -> (trace: Int64, runs: [Int64]) {
        let search = AgentTool(
            spec: ToolSpec(name: "search", description: "search", parameters: .object([:])),
            perform: { _ in
                let started = OperationProfile.now()
                let profile = OperationProfile(keepingCalls: true)
                for layer in 0..<2 {
                    profile.scope("layer \(layer)") {
                        profile.measure("linear", flops: 4e6, bytes: 1e6) { usleep(200) }
                        profile.measure("GELU", flops: 1e5, bytes: 8e5) { usleep(100) }
                    }
                }
                let ids = try workspace.roofline.record(
                    ForwardPassRecord.kernelRuns(
                        profile.entriesByTime, precision: .fp32, workload: "4 tokens (agent search)", threads: 1))
                return ToolOutput(
                    "[]",
                    spans: ForwardPassRecord.spans(profile, origin: started, tokens: 4, runIDs: ids, precision: .fp32))
            })
        let trace = ReActRunner(
            provider: OfflinePolicy(similarity: OfflinePolicy.wordOverlap, named: "word-overlap"), tools: [search]
        ).run("heated aircraft models", id: "with-a-pass")
        let id = try #require(
            try workspace.traces.importTraces([TraceService.record(trace, sourceFile: nil)]).ids.first)
        let attributes = try #require(trace.spans.first { $0.kind == .embedding }?.attributes)
        let runs = try #require(attributes[ForwardPassRecord.kernelRunsAttribute]?.array).compactMap(\.number).map {
            Int64($0)
        }
        return (id, runs)
    }

    /// `p` on a search step goes to the Roofline panel showing only its forward pass's runs; esc
    /// there shows every kernel again; `p` where no pass ran says so.
    @Test func pGoesFromASearchStepToItsForwardPassOnTheRoofline() throws {
        let (id, runs) = try recordRunWithAForwardPass()
        var ports = Ports()
        ports.register(TracesBrowser(workspace: workspace))
        ports.register(RooflineBrowser(workspace: workspace))
        var state = AppFixtures.state(width: 120, height: 36)
        state.settle([.ask(TracesPanel.ListTraces())], ports: ports)
        let row = try #require(panel(state).rows.firstIndex { $0.id == id })
        for _ in 0..<row { AppFixtures.press([.character("j")], on: &state) }
        state.settle(AppFixtures.press([.enter], on: &state), ports: ports)
        state.settle(AppFixtures.press([.character("p")], on: &state), ports: ports)
        #expect(state.message?.text.contains("ran no MiniLM forward pass") == true)
        // `l` through the steps to the pass, a bounded number of times: a run without one fails here.
        for _ in 0..<(panel(state).trace?.steps.count ?? 0) {
            guard let ordinal = panel(state).currentOrdinal, panel(state).trace?.spans[ordinal].kind != "embedding"
            else { break }
            state.settle(AppFixtures.press([.character("l")], on: &state), ports: ports)
        }
        let reached = try #require(panel(state).currentOrdinal)
        #expect(panel(state).trace?.spans[reached].kind == "embedding")
        let detail = state.render().text()
        #expect(detail.contains("── operations (") && detail.contains("p shows them on the roofline"))
        #expect(detail.contains("linear") && detail.contains("GELU"))

        state.settle(AppFixtures.press([.character("p")], on: &state), ports: ports)
        let roofline = try #require(state.panels[state.focusedPanel] as? RooflinePanel)
        #expect(roofline.focus?.runIDs == runs && roofline.focus?.trace == id)
        #expect(Set(roofline.rows.compactMap(\.point.runID)) == Set(runs))
        #expect(state.render().text().contains("Roofline · trace \(id) · span 2 search → MiniLM forward · 4 tokens"))
        let back = AppFixtures.press([.escape], on: &state)
        #expect((state.panels[state.focusedPanel] as? RooflinePanel)?.focus == nil)
        #expect(AppFixtures.requests(RooflinePanel.LoadRoofline.self, in: back).map(\.focus) == [nil])
    }

    @Test func theListSortsByEachMeasure() throws {
        var state = AppFixtures.state(width: 120, height: 36)
        try settle([.ask(TracesPanel.ListTraces())], &state)
        #expect(panel(state).rows.map(\.name).first == "invoke_agent cranfield-qa")
        AppFixtures.press([.character("s")], on: &state)  // duration, longest first
        #expect(panel(state).rows.map(\.durationNs) == [4_210_000_000, 1_900_000_000, 1_450_000_000])
        AppFixtures.press([.character("S")], on: &state)
        #expect(panel(state).rows.first?.durationNs == 1_450_000_000)
    }

    /// Two epochs of an Inspect sample scored differently (`match`: C, then I): the diff's table
    /// shows both verdicts on the score's row, not only "≠".
    @Test func aDiffOfScoredRunsShowsEachSidesVerdictInTheTable() throws {
        let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../sample-data/traces/inspect-arith.json").standardized.path
        _ = try service.importFiles([sample])
        var state = AppFixtures.state(width: 120, height: 36)
        try settle([.ask(TracesPanel.ListTraces())], &state)
        let rows = panel(state).rows
        let first = try #require(rows.firstIndex { $0.externalID.hasSuffix("/q3/1") })
        let second = try #require(rows.firstIndex { $0.externalID.hasSuffix("/q3/2") })
        AppFixtures.press([.character("g")] + Array(repeating: .character("j"), count: first), on: &state)
        AppFixtures.press([.character("m"), .character("g")], on: &state)
        AppFixtures.press(Array(repeating: .character("j"), count: second), on: &state)
        try settle(AppFixtures.press([.character("d")], on: &state), &state)
        let diff = try #require(panel(state).diff)
        let scored = try #require(diff.rows.firstIndex { $0.left?.name == "score match" })
        #expect(diff.rows[scored].change == .changed)
        let screen = state.render().text().split(separator: "\n").map(String.init)
        let line = try #require(screen.first { $0.contains("score match") })
        #expect(line.contains("≠") && line.contains("C → I"), "\(line)")
        #expect(screen.contains { $0.contains("score") && $0.contains("Δ tokens") })
    }

    /// Every action of the panel does something (changes the panel or asks for something) in
    /// one of its views: the list, an open trace, a diff. The compiler checks that each is
    /// considered in every view; this checks that none is considered and then dropped everywhere.
    @Test func everyActionDoesSomethingInOneOfTheViews() throws {
        let area = Rect(x: 0, y: 0, width: 120, height: 30)
        var list = AppFixtures.state(width: 120, height: 36)
        try settle([.ask(TracesPanel.ListTraces())], &list)
        let trace = try opened()
        var diff = list
        try settle(AppFixtures.press([.character("m"), .character("G"), .character("d")], on: &diff), &diff)
        #expect(panel(diff).diff != nil)
        for action in TracesPanel.Action.allCases {
            let acted = [list, trace, diff].contains { state in
                var acting = panel(state)
                let before = String(describing: acting)
                let effects = acting.perform(.own(action), area: area)
                return !effects.isEmpty || String(describing: acting) != before
            }
            #expect(acted, "\(action) does nothing in the list, an open trace or a diff")
        }
    }

    /// At 80 columns the trace's header is cut, and ends in "…" rather than mid-word; it is ordered
    /// as Langfuse heads a trace, so errors, latency, cost and tokens survive the cut and the step
    /// and span counts give way.
    @Test func theHeaderCutAtEightyColumnsEndsInAnEllipsis() throws {
        let state = try opened(width: 80, height: 24)
        let header = try #require(
            state.render().text().split(separator: "\n").first { $0.contains("otlp · ✗ 1 error") })
        #expect(header.hasSuffix("…│"), "\(header)")
        #expect(header.contains("· 4.21 s · cost $0.000265 · tokens 1485/102 ·"), "\(header)")
        #expect(!header.contains("6 spans"), "\(header)")
    }

    @Test func screensAt120x36() throws {
        var state = try opened()
        expectPanel(state, matchesGolden: "traces-step-120x36")
        try settle(AppFixtures.press([.character("e")], on: &state), &state)
        expectPanel(state, matchesGolden: "traces-error-120x36")
        var list = AppFixtures.state(width: 120, height: 36)
        try settle([.ask(TracesPanel.ListTraces())], &list)
        expectPanel(list, matchesGolden: "traces-list-120x36")
        // Mark the first run, compare the OpenInference one with it.
        try settle(AppFixtures.press([.character("m"), .character("G"), .character("d")], on: &list), &list)
        let diff = try #require((list.panels[list.focusedPanel] as? TracesPanel)?.diff)
        #expect(diff.left.id == 1 && diff.right.id == 3 && diff.firstDivergence == 0)
        expectPanel(list, matchesGolden: "traces-diff-120x36")
    }
}
