import Foundation
import LoupeAgents
import LoupeApp
import LoupeKit
import LoupeStore
import LoupeTUI
import LoupeTestSupport
import Testing

/// The Traces panel on the sample OTLP export, imported into a real workspace; the runtime's
/// loads are played by hand (effect in, message back).
@Suite struct TracesPanelTests {
    let service: TraceService

    init() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-traces-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        service = TraceService(workspace: try Workspace(path: directory + "/w.sqlite"))
        let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../sample-data/traces/otlp-genai.jsonl").standardized.path
        _ = try service.importFiles([sample])
    }

    private func panel(_ state: AppState) -> TracesPanel { state.panels[state.focusedPanel] as! TracesPanel }

    /// Runs the effects a key asked for, as the runtime would, feeding the answers back.
    private func settle(_ effects: [Effect], _ state: inout AppState) throws {
        var pending = effects
        while !pending.isEmpty {
            let effect = pending.removeFirst()
            switch effect {
            case .loadTraces: pending += state.update(.tracesLoaded(try service.list()))
            case .openTrace(let id): pending += state.update(.traceOpened(id, .loaded(try service.load(id))))
            case .loadSpan(let trace, let ordinal):
                let loaded = try service.payload(trace: trace, ordinal: ordinal)
                pending += state.update(
                    .spanLoaded(trace: trace, ordinal: ordinal, SpanDetail(payload: loaded.payload, raw: loaded.raw)))
            default: break
            }
        }
    }

    private func opened(width: Int = 120, height: Int = 36) throws -> AppState {
        var state = AppFixtures.state(width: width, height: height)
        try settle([.loadTraces], &state)
        try settle(AppFixtures.press([.enter], on: &state), &state)
        return state
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

    @Test func theListSortsByEachMeasure() throws {
        var state = AppFixtures.state(width: 120, height: 36)
        try settle([.loadTraces], &state)
        #expect(panel(state).rows.map(\.name).first == "invoke_agent cranfield-qa")
        AppFixtures.press([.character("s")], on: &state)  // duration, longest first
        #expect(panel(state).rows.map(\.durationNs) == [4_210_000_000, 1_900_000_000, 1_450_000_000])
        AppFixtures.press([.character("S")], on: &state)
        #expect(panel(state).rows.first?.durationNs == 1_450_000_000)
    }

    @Test func screensAt120x36() throws {
        var state = try opened()
        if let difference = Golden.compare(state.render().text(), named: "traces-step-120x36") {
            Issue.record(Comment(rawValue: difference))
        }
        try settle(AppFixtures.press([.character("e")], on: &state), &state)
        if let difference = Golden.compare(state.render().text(), named: "traces-error-120x36") {
            Issue.record(Comment(rawValue: difference))
        }
        var list = AppFixtures.state(width: 120, height: 36)
        try settle([.loadTraces], &list)
        if let difference = Golden.compare(list.render().text(), named: "traces-list-120x36") {
            Issue.record(Comment(rawValue: difference))
        }
    }
}
