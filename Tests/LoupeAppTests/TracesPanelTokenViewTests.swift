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
        #expect(box.contains("token \(cursor + 1) of 34"))
        #expect(box.contains(String(format: "p %.3f", reference[cursor].p)))
        for (text, p) in reference[cursor].top {
            #expect(box.contains("\"\(text)\"") && box.contains(String(format: "%.3f", p)), "\(text) \(p)")
        }
        // `[` goes back, wrapping around from the first to the last uncertain token.
        AppFixtures.press([.character("["), .character("[")], on: &state)
        let last = try #require(reference.indices.last { reference[$0].p < 0.3 })
        #expect(panel(state).traceView?.tokenView?.cursor == last)
        // `l` moves a token; esc closes the token view, not the trace.
        AppFixtures.press([.character("l")], on: &state)
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
        // With the token view open, l moves the token cursor; esc then l steps.
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

    @Test func screens() {
        for (width, height, mono) in [(120, 36, false), (80, 24, false), (80, 24, true)] {
            var state = opened(width: width, height: height, monochrome: mono)
            AppFixtures.press([.character("T"), .character("]")], on: &state)
            expectFrame(state.render(), matchesGolden: "traces-tokens-\(width)x\(height)\(mono ? "-mono" : "")")
        }
        var step = opened(width: 80, height: 24)
        settle(AppFixtures.press([.character("l"), .character("l")], on: &step), &step)
        expectFrame(step.render(), matchesGolden: "traces-local-step-80x24")
    }
}
