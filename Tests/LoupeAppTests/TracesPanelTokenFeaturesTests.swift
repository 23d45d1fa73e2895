import Foundation
import LoupeApp
import LoupeBase
import LoupeKit
import LoupeStore
import LoupeTUI
import LoupeTestSupport
import Testing

/// `x` in the Traces panel's token view: the SAE features where the cursor token was chosen, as
/// the command `sae at` (its output in the output pane). The features themselves are
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

    @Test func xRunsSaeAtForTheCursorToken() throws {
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
        let expected = "sae at --trace \(trace) --span \(view.ordinal) --token 2"
        #expect(
            effects.contains {
                if case .runCommand(_, let line) = $0 { return line == expected }
                return false
            }, "\(effects)")
    }
}
