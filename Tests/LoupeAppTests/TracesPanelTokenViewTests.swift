import Foundation
import LoupeApp
import LoupeBase
import LoupeKit
import LoupeStore
import LoupeTUI
import LoupeTestSupport
import Testing

/// The token view of the Traces panel (`T`) on a real SmolLM2-135M agent run: the first two
/// model calls and the tool call between them of `loupe agent run --provider local "What is
/// (17 + 25) * 3?"`, exported as OTLP/JSON with each call's `loupe.llm.tokens` as its agent wrote
/// them (Fixtures/smollm2-agent-steps.otlp.json).
@Suite struct TracesPanelTokenViewTests {
    let workspace: Workspace
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/smollm2-agent-steps.otlp.json").path

    init() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-tokens-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        workspace = try Workspace(path: directory + "/w.sqlite")
        _ = try TraceService(workspace: workspace).importFiles([Self.fixture])
    }

    private func panel(_ state: AppState) -> TracesPanel { state.panels[state.focusedPanel] as! TracesPanel }

    private func settle(_ effects: [Effect], _ state: inout AppState) {
        var ports = Ports()
        ports.register(TracesBrowser(workspace: workspace))
        AppFixtures.settle(effects, &state, ports: ports)
    }

    /// The trace open on its first step (the first model call), its content read.
    private func opened(width: Int, height: Int, monochrome: Bool = false) -> AppState {
        var state = AppFixtures.state(width: width, height: height, monochrome: monochrome)
        settle([.ask(TracesPanel.ListTraces())], &state)
        settle(AppFixtures.press([.enter], on: &state), &state)
        return state
    }

    /// The first model call's tokens as the fixture file has them, read without Loupe's decoder:
    /// each token's probability exp(logprob) and its alternatives' texts and probabilities.
    private static func reference() throws -> [(text: String, p: Double, top: [(String, Double)])] {
        let data = try Data(contentsOf: URL(fileURLWithPath: fixture))
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let resource = try #require((root["resourceSpans"] as? [[String: Any]])?.first)
        let scope = try #require((resource["scopeSpans"] as? [[String: Any]])?.first)
        let span = try #require((scope["spans"] as? [[String: Any]])?[1])
        let attributes = try #require(span["attributes"] as? [[String: Any]])
        let tokens = try #require(attributes.first { $0["key"] as? String == GeneratedTokens.attribute })
        func value(_ any: Any?) -> Any? {
            guard let any = any as? [String: Any] else { return nil }
            if let s = any["stringValue"] { return s }
            if let d = any["doubleValue"] { return d }
            if let i = any["intValue"] { return Double("\(i)") }
            if let a = any["arrayValue"] as? [String: Any] { return (a["values"] as? [Any] ?? []).map(value) }
            if let kv = any["kvlistValue"] as? [String: Any] {
                var object: [String: Any] = [:]
                for member in kv["values"] as? [[String: Any]] ?? [] {
                    object[member["key"] as! String] = value(member["value"])
                }
                return object
            }
            return nil
        }
        let items = try #require(value(tokens["value"]) as? [[String: Any]])
        return items.map { item in
            let top = (item["top"] as? [[String: Any]] ?? []).map {
                ($0["text"] as! String, exp($0["logprob"] as! Double))
            }
            return (item["text"] as! String, exp(item["logprob"] as! Double), top)
        }
    }

    @Test func theTokensShowWithTheirCountsAndTheCursorsAlternatives() throws {
        let reference = try Self.reference()
        var state = opened(width: 120, height: 36)
        #expect(panel(state).currentOrdinal == 1)
        // The step says its tokens are there, and the key that shows them.
        #expect(state.render().text().contains("T: its 34 generated tokens by probability"))
        AppFixtures.press([.character("T")], on: &state)
        let view = try #require(panel(state).traceView?.tokenView)
        #expect(view.tokens.map(\.text) == reference.map(\.text))
        // The counts, checked against the file's own log-probabilities.
        let low = reference.filter { $0.p < 0.3 }.count
        let ties = reference.filter { token in
            let sorted = token.top.map(\.1).sorted(by: >)
            return sorted.count >= 2 && sorted[0] - sorted[1] < 0.1
        }.count
        #expect(low == 4 && ties == 0)
        let screen = state.render().text()
        #expect(screen.contains("34 tokens · \(low) low · \(ties) near-ties"))
        // `]` walks the uncertain tokens: the first after the cursor is the tool's name, where the
        // model wanted "1" (p 0.295) and the grammar took "calcul".
        AppFixtures.press([.character("]")], on: &state)
        let cursor = try #require(panel(state).traceView?.tokenView?.cursor)
        let expected = try #require(reference.indices.first { $0 > 0 && reference[$0].p < 0.3 })
        #expect(cursor == expected && reference[cursor].text == "calcul")
        let box = state.render().text()
        #expect(box.contains("token #\(cursor) · \(cursor + 1) of 34"))
        #expect(box.contains(String(format: "p %.3f", reference[cursor].p)))
        for (text, p) in reference[cursor].top {
            #expect(box.contains("\"\(text)\"") && box.contains(String(format: "%.3f", p)), "\(text) \(p)")
        }
        // `[` goes back, wrapping around from the first to the last uncertain token.
        AppFixtures.press([.character("["), .character("[")], on: &state)
        let last = try #require(reference.indices.last { reference[$0].p < 0.3 })
        #expect(panel(state).traceView?.tokenView?.cursor == last)
        // `→` moves a token (`l` is the logit lens there); esc closes the token view, not the trace.
        AppFixtures.press([.right], on: &state)
        #expect(panel(state).traceView?.tokenView?.cursor == last + 1)
        AppFixtures.press([.escape], on: &state)
        #expect(panel(state).traceView?.tokenView == nil && panel(state).trace != nil)
    }

    /// A step without tokens (the tool call) says why `T` shows nothing; stepping away from a
    /// step closes its tokens.
    @Test func aStepWithoutTokensSaysSoAndSteppingClosesTheView() throws {
        var state = opened(width: 120, height: 36)
        AppFixtures.press([.character("T")], on: &state)
        #expect(panel(state).traceView?.tokenView != nil)
        // With the token view open, → moves the token cursor; esc then l steps.
        AppFixtures.press([.escape], on: &state)
        settle(AppFixtures.press([.character("l")], on: &state), &state)
        #expect(panel(state).currentOrdinal == 2)
        AppFixtures.press([.character("T")], on: &state)
        #expect(panel(state).traceView?.tokenView == nil)
        #expect(state.message?.text.contains("span 2 has no generated tokens") == true)
        settle(AppFixtures.press([.character("l")], on: &state), &state)
        AppFixtures.press([.character("]")], on: &state)
        #expect(panel(state).traceView?.tokenView?.ordinal == 3)
        settle(AppFixtures.press([.escape, .character("h")], on: &state), &state)
        #expect(panel(state).traceView?.tokenView == nil)
    }

    /// A malformed record says which span and field, and opens nothing.
    @Test func aMalformedRecordNamesTheField() throws {
        let id = try #require(try TraceService(workspace: workspace).list().first?.id)
        _ = try workspace.writeStatements { sql in
            try sql.execute(
                """
                UPDATE spans SET payload_json = json_set(payload_json, '$.attributes."loupe.llm.tokens"[2].logprob', 'x')
                WHERE trace_id = ? AND ordinal = 1
                """, [.integer(id)])
        }
        var state = opened(width: 120, height: 36)
        AppFixtures.press([.character("T")], on: &state)
        #expect(panel(state).traceView?.tokenView == nil)
        let message = try #require(state.message?.text)
        #expect(message.contains("loupe.llm.tokens[2].logprob"), "\(message)")
    }

    @Test func layoutWrapsAtTokensAndShowsNewlinesAndEmptyTokens() {
        let rows = TracesPanel.TokenView.layout(["The", " answer", " is\n", "", "\u{1b}[2J", " 42"], width: 10)
        let text = rows.map { $0.map(\.text).joined() }
        #expect(text == ["The answer", " is↵", "∅␛[2J 42"])
        // Every token has a place, in order.
        #expect(rows.flatMap { $0.map(\.token) } == [0, 1, 2, 3, 4, 5])
        // A token wider than a row is split over rows.
        let long = TracesPanel.TokenView.layout(["abcdefghij"], width: 4).map { $0.map(\.text).joined() }
        #expect(long == ["abcd", "efgh", "ij"])
    }

    /// At 80 columns the conversation's heading and its fold key fit the step pane.
    @Test func theConversationHeadingFitsANarrowPane() {
        for width in [30, 38, 60, 120] {
            let heading = TracesPanel.conversationHeading(count: 12, folds: true, width: width, theme: .builtInDefault)
            #expect(TextWidth.of(heading.map(\.text).joined()) <= width, "\(width)")
            #expect(heading.last?.text == "  c: unfold")
        }
    }

    /// `f` forks at the cursor token with its second-best alternative (the most likely one the
    /// model did not take): one key runs `trace fork --at-token` and says so.
    @Test func fForksAtTheCursorTokenWithTheSecondBest() throws {
        let reference = try Self.reference()
        var state = opened(width: 120, height: 36)
        AppFixtures.press([.character("T"), .character("]")], on: &state)
        let id = try #require(panel(state).trace?.summary.id)
        let view = try #require(panel(state).traceView?.tokenView)
        let token = view.tokens[view.cursor]
        // Here the grammar took "calcul" where the model wanted "1": the second-best is the best.
        let second = try #require(reference[view.cursor].top.firstIndex { $0.0 != reference[view.cursor].text })
        #expect(TracesPanel.TokenForkChooser.secondBest(token) == second)
        AppFixtures.press([.character("f")], on: &state)
        #expect(state.jobs.last?.title == "trace fork \(id) --at-token 1:\(view.cursor) --choose \(second + 1)")
        let said = try #require(state.message?.text)
        #expect(
            said.contains(
                "forking trace \(id) at span 1, token #\(view.cursor): \"calcul\" → \"\(reference[view.cursor].top[second].0)\""
            ), "\(said)")
        // The footer says what the keys do on the tokens.
        let footer = state.render().text().split(separator: "\n").last.map(String.init) ?? ""
        for hint in ["token", "close", "uncertain", "fork 2nd", "fork…"] {
            #expect(footer.contains(hint), "\(footer)")
        }
    }

    /// `F` opens the fork line: a digit forks with that alternative, the one the model took is
    /// refused, typed text forks with the text; esc closes the line and leaves the tokens open.
    @Test func theForkLineTakesAnAlternativeOrText() throws {
        var state = opened(width: 120, height: 36)
        AppFixtures.press([.character("T")], on: &state)
        // The first token the model chose among its alternatives (the grammar forced some that
        // were not).
        let tokens = try #require(panel(state).traceView?.tokenView?.tokens)
        let index = try #require(
            tokens.indices.first { i in tokens[i].alternatives.contains { $0.id == tokens[i].id } })
        AppFixtures.press([.character("g")] + Array(repeating: .right, count: index), on: &state)
        let id = try #require(panel(state).trace?.summary.id)
        let view = try #require(panel(state).traceView?.tokenView)
        #expect(view.cursor == index)
        let token = view.tokens[view.cursor]
        AppFixtures.press([.character("F")], on: &state)
        #expect(panel(state).traceView?.choosingFork == true)
        let screen = state.render().text()
        #expect(screen.contains("fork at token #\(view.cursor) · 1–5 ↑↓ enter · or type"), "\(screen)")
        // The token the model took is no fork.
        let taken = try #require(token.alternatives.firstIndex { $0.id == token.id })
        AppFixtures.press([.character(Character("\(taken + 1)"))], on: &state)
        #expect(state.message?.text.contains("is the token the model chose") == true)
        #expect(panel(state).traceView?.choosingFork == true)
        let other = taken == 4 ? 3 : 4
        AppFixtures.press([.character(Character("\(other + 1)"))], on: &state)
        #expect(state.jobs.last?.title == "trace fork \(id) --at-token 1:\(view.cursor) --choose \(other + 1)")
        #expect(panel(state).traceView?.choosingFork == false)
        // Typed text, quoted for the command line.
        AppFixtures.press([.character("F")] + "it's".map { .character($0) } + [.enter], on: &state)
        #expect(state.jobs.last?.title == "trace fork \(id) --at-token 1:\(view.cursor) --text 'it'\\''s'")
        AppFixtures.press([.character("F"), .escape], on: &state)
        #expect(panel(state).traceView?.choosingFork == false && panel(state).traceView?.tokenView != nil)
    }

    /// When the fork is made, it opens on the forked step's tokens at the changed token, its
    /// parent marked for `d`, and the status line says what was forked.
    @Test func theForkOpensAtTheChangedToken() throws {
        var state = opened(width: 120, height: 36)
        settle(AppFixtures.press([.character("l"), .character("l")], on: &state), &state)
        AppFixtures.press([.character("T"), .right, .right], on: &state)
        let id = try #require(panel(state).trace?.summary.id)
        #expect(panel(state).currentOrdinal == 3)
        AppFixtures.press([.character("f")], on: &state)
        let job = try #require(state.jobs.last)
        // The command's own last lines; the fixture's trace stands in for the fork it made.
        let output = """
            answer: 126
            fork: trace \(id) (trace \(id) at span 3, token 2: "a" → "b") — loupe trace diff \(id) \(id)
            """
        settle(state.update(.jobFinished(job.id, CommandOutcome(output: output))), &state)
        #expect(panel(state).marked == id)
        #expect(panel(state).currentOrdinal == 3)
        #expect(panel(state).traceView?.tokenView?.cursor == 2)
        let said = try #require(state.message?.text)
        #expect(said.contains("(trace \(id) at span 3, token 2: \"a\" → \"b\") · answer: 126 · d: diff"), "\(said)")
    }

    @Test func screens() {
        for (width, height, mono) in [(120, 36, false), (80, 24, false), (80, 24, true)] {
            var state = opened(width: width, height: height, monochrome: mono)
            AppFixtures.press([.character("T"), .character("]")], on: &state)
            expectPanel(state, matchesGolden: "traces-tokens-\(width)x\(height)\(mono ? "-mono" : "")")
        }
        for (width, height) in [(120, 36), (80, 24)] {
            var state = opened(width: width, height: height)
            AppFixtures.press([.character("T"), .character("]"), .character("F")], on: &state)
            expectPanel(state, matchesGolden: "traces-tokens-fork-\(width)x\(height)")
        }
        var step = opened(width: 80, height: 24)
        settle(AppFixtures.press([.character("l"), .character("l")], on: &step), &step)
        expectPanel(step, matchesGolden: "traces-local-step-80x24")
    }
}
