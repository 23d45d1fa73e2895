import Foundation
import LoupeApp
import LoupeBase
import LoupeKit
import LoupeStore
import LoupeTUI
import LoupeTestSupport
import Testing

/// `x` in the Traces panel's token view: the SAE features where the cursor token was chosen, as
/// the command `sae at` (over the token view, as `a` and `l`). The features themselves are
/// SAELanguageModelTests' (LoupeCommandsTests), on a real local agent run.
@Suite struct TracesPanelTokenFeaturesTests {
    let workspace: Workspace

    init() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-features-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        workspace = try Workspace(path: directory + "/w.sqlite")
        _ = try TraceService(workspace: workspace).importFiles([TracesPanelTokenViewTests.fixture])
    }

    private func panel(_ state: AppState) -> TracesPanel { state.panels[state.focusedPanel] as! TracesPanel }

    private func settle(_ effects: [Effect], _ state: inout AppState) {
        var ports = Ports()
        ports.register(TracesBrowser(workspace: workspace))
        AppFixtures.settle(effects, &state, ports: ports)
    }

    /// What `sae at --json` answers: three features of SAE 2 at layer 15, one labelled, one
    /// without a recorded peak.
    static let answer = """
        {"trace": 1, "span": 1, "token": 2, "chosen": "_", "position": 712, "sae": 2, "layer": 15,
         "features": [
           {"feature": 491, "activation": 1.74, "max_activation": 3.93, "label": "numbers in a list"},
           {"feature": 42, "activation": 1.71, "max_activation": 5.95},
           {"feature": 7, "activation": 0.5}]}
        """

    @Test func xAsksForTheFeaturesAtTheCursorTokenAndShowsThem() throws {
        var state = AppFixtures.state(width: 120, height: 36)
        settle([.ask(TracesPanel.ListTraces())], &state)
        settle(AppFixtures.press([.enter], on: &state), &state)
        // Outside the token view x says how to get there.
        AppFixtures.press([.character("x")], on: &state)
        #expect(state.render().text().contains("then x: the SAE features there"))
        AppFixtures.press([.character("T")], on: &state)
        let view = try #require(panel(state).traceView?.tokenView)
        AppFixtures.press([.right, .right], on: &state)
        let effects = AppFixtures.press([.character("x")], on: &state)
        let trace = try #require(panel(state).trace?.summary.id)
        let address = TracesPanel.TokenAddress(trace: trace, span: view.ordinal, token: 2)
        #expect(AppFixtures.requests(TracesPanel.TokenFeaturesAt.self, in: effects).map(\.address) == [address])
        #expect(state.message?.text.contains("loupe sae at --trace \(trace) --span \(view.ordinal) --token 2") == true)
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        var features = try decoder.decode(TokenFeatures.self, from: Data(Self.answer.utf8))
        features.trace = trace
        features.span = view.ordinal
        _ = state.update(Self.finished(effects, TracesPanel.TokenFeaturesAt(address), features))
        let screen = state.render().text()
        #expect(screen.contains("SAE features · token #2"), "\(screen)")
        #expect(screen.contains("SAE 2 on the stream after layer 15 at position 712: 3 features active"))
        #expect(screen.contains("1.74/3.93") && screen.contains("numbers in a list") && screen.contains("0.50"))
        expectPanel(state, matchesGolden: "traces-token-features-120x36")
        // x again closes it, as a and l close theirs.
        AppFixtures.press([.character("x")], on: &state)
        #expect(!state.render().text().contains("SAE features · token #2"))
        // An SAE whose feature index could not be read: no bars, and the row that would title
        // them says why.
        features.maximaUnreadable = "SAE 2's feature maxima are unreadable: sae_tokens, column position"
        for j in features.features.indices { features.features[j].maxActivation = nil }
        let again = AppFixtures.press([.character("x")], on: &state)
        _ = state.update(Self.finished(again, TracesPanel.TokenFeaturesAt(address), features))
        let warned = state.render().text()
        #expect(warned.contains("⚠ SAE 2's feature maxima are unreadable") && !warned.contains("its max"))
        #expect(warned.contains("1.74") && !warned.contains("1.74/"), "\(warned)")
    }

    /// The port job x started, finished with `value` (as the runtime reports it).
    static func finished<Request: PortRequest>(_ effects: [Effect], _ request: Request, _ value: Request.Answer) -> Msg
    {
        let id = effects.compactMap { effect -> JobID? in
            if case .portJob(let id, _) = effect { return id }
            return nil
        }.first
        guard let id else { return AppFixtures.answer(request, value) }
        return .readFinished(id, PortAnswer(request, .loaded(value)))
    }

    @Test func theFeaturesFitEightyColumns() throws {
        var state = AppFixtures.state(width: 80, height: 24)
        settle([.ask(TracesPanel.ListTraces())], &state)
        settle(AppFixtures.press([.enter], on: &state), &state)
        AppFixtures.press([.character("T"), .right, .right], on: &state)
        let view = try #require(panel(state).traceView?.tokenView)
        let trace = try #require(panel(state).trace?.summary.id)
        let address = TracesPanel.TokenAddress(trace: trace, span: view.ordinal, token: 2)
        let effects = AppFixtures.press([.character("x")], on: &state)
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        _ = state.update(
            Self.finished(
                effects, TracesPanel.TokenFeaturesAt(address),
                try decoder.decode(TokenFeatures.self, from: Data(Self.answer.utf8))))
        // Each activation is right-aligned with its peak, so the bars line up.
        let lines = state.render().text().split(separator: "\n").map(String.init)
        func end(_ text: String) -> Int? {
            lines.lazy.compactMap { line in
                line.range(of: text).map { line.distance(from: line.startIndex, to: $0.upperBound) }
            }
            .first
        }
        #expect(state.render().text().contains("SAE 2 on the stream after layer 15 at position 712: 3 features"))
        #expect(end("1.74/3.93") != nil && end("1.74/3.93") == end("0.50"), "\(lines)")
        expectPanel(state, matchesGolden: "traces-token-features-80x24")
    }
}
