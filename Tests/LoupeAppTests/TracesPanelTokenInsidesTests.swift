import Foundation
import LoupeApp
import LoupeBase
import LoupeKit
import LoupeStore
import LoupeTUI
import LoupeTestSupport
import Testing

/// `a` (attention) and `l` (logit lens) in the Traces panel's token view, as the reducer handles
/// them: the keys, the request each sends for the cursor token (the work runs off the main loop,
/// on the port), what an answer that failed says, and what esc closes. The screens with SmolLM2's
/// real answers are TokenInsidesTests' (LoupeCommandsTests), on a real local agent run.
@Suite struct TracesPanelTokenInsidesTests {
    let workspace: Workspace

    init() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-insides-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        workspace = try Workspace(path: directory + "/w.sqlite")
        _ = try TraceService(workspace: workspace).importFiles([TracesPanelTokenViewTests.fixture])
    }

    private func panel(_ state: AppState) -> TracesPanel { state.panels[state.focusedPanel] as! TracesPanel }

    /// The port requests run on a workspace whose model library has no SmolLM2 (`models`).
    private func settle(_ effects: [Effect], _ state: inout AppState, models: String = "/nonexistent/models") {
        var ports = Ports()
        ports.register(TracesBrowser(workspace: workspace))
        ports.register(TokenInsidesBrowser(workspace: workspace, models: ModelLibrary(root: models)))
        AppFixtures.settle(effects, &state, ports: ports)
    }

    /// The fixture's trace open on its first model call, its tokens on show.
    private func tokens() throws -> AppState {
        var state = AppFixtures.state(width: 120, height: 36)
        settle([.ask(TracesPanel.ListTraces())], &state)
        settle(AppFixtures.press([.enter], on: &state), &state)
        AppFixtures.press([.character("T")], on: &state)
        try #require(panel(state).traceView?.tokenView != nil)
        return state
    }

    @Test func inTheTokenViewLIsTheLensAndTheArrowMovesAToken() throws {
        var state = try tokens()
        let keymap = panel(state).keymap
        #expect(keymap.action(for: .character("l")) == .panel(.own(TracesPanel.Action.lens)))
        #expect(keymap.action(for: .character("a")) == .panel(.own(TracesPanel.Action.attention)))
        #expect(keymap.action(for: .right) == .panel(.right))
        // No key is bound twice in the token view's keymap either.
        let keys = keymap.bindings.flatMap(\.keys).map(\.displayName)
        #expect(Set(keys).count == keys.count)
        AppFixtures.press([.right, .right], on: &state)
        #expect(panel(state).traceView?.tokenView?.cursor == 2)
        // Outside the token view `l` steps, as everywhere in the panel.
        AppFixtures.press([.escape], on: &state)
        #expect(panel(state).keymap.action(for: .character("l")) == .panel(.right))
    }

    @Test func aAndLAskForTheCursorTokenAndNothingRunsOnTheMainLoop() throws {
        var state = try tokens()
        let id = try #require(panel(state).trace?.summary.id)
        AppFixtures.press([.character("]")], on: &state)
        let cursor = try #require(panel(state).traceView?.tokenView?.cursor)
        let attention = AppFixtures.press([.character("a")], on: &state)
        let address = TracesPanel.TokenAddress(trace: id, span: 1, token: cursor)
        #expect(AppFixtures.requests(TracesPanel.TokenAttentionAt.self, in: attention).map(\.address) == [address])
        #expect(
            state.message?.text.contains("loupe attention --model smollm2 --trace \(id) --span 1 --token \(cursor)")
                == true)
        let lens = AppFixtures.press([.character("l")], on: &state)
        #expect(AppFixtures.requests(TracesPanel.TokenLensAt.self, in: lens).map(\.address) == [address])
        #expect(state.message?.text.contains("loupe lens --trace \(id) --span 1 --token \(cursor)") == true)
    }

    /// Without SmolLM2 the answer says how to fetch it, and nothing opens; a step that recorded no
    /// prompt (this fixture's, exported before prompts were) says so once the model is there.
    @Test func aFailedReadSaysWhatIsMissing() throws {
        var state = try tokens()
        settle(AppFixtures.press([.character("a")], on: &state), &state)
        #expect(panel(state).tokenInside == nil)
        #expect(state.message?.text.contains("run loupe models fetch smollm2") == true, "\(state.message?.text ?? "")")
        // esc then closes the token view as before.
        AppFixtures.press([.escape], on: &state)
        #expect(panel(state).traceView?.tokenView == nil && panel(state).trace != nil)
    }

    @Test func outsideTheTokenViewAAndLSayHowToGetThere() throws {
        var state = AppFixtures.state(width: 120, height: 36)
        settle([.ask(TracesPanel.ListTraces())], &state)
        settle(AppFixtures.press([.enter], on: &state), &state)
        let effects = AppFixtures.press([.character("a")], on: &state)
        #expect(AppFixtures.requests(TracesPanel.TokenAttentionAt.self, in: effects).isEmpty)
        #expect(state.message?.text.contains("open a local model step's tokens with T") == true)
    }
}
