import LoupeApp
import LoupeTUI
import LoupeTestSupport
import Testing

@Suite struct RooflinePanelTests {
    static let data = RooflineData(
        machine: "Test CPU, 2 cores",
        ceilings: [
            .init(kind: "compute", name: "FP32 (2 cores)", value: 200), .init(kind: "memory", name: "L1", value: 300),
            .init(kind: "memory", name: "DRAM", value: 30),
        ],
        points: [
            .init(name: "sgemm", milliseconds: 10, gflopsPerSecond: 170, flopsPerByte: 60),
            .init(name: "softmax", milliseconds: 2, gflopsPerSecond: 3, flopsPerByte: 0.2),
        ])

    private func loaded(width: Int = 80, height: Int = 24) -> AppState {
        var state = AppFixtures.state(width: width, height: height)
        AppFixtures.press([.character("4")], on: &state)
        _ = state.update(.rooflineLoaded(Self.data))
        return state
    }

    @Test func selectionMovesAndReloadAsksForData() {
        var state = loaded()
        AppFixtures.press([.character("j")], on: &state)
        #expect((state.panels[state.focusedPanel] as? RooflinePanel)?.list.selected == 1)
        #expect(AppFixtures.press([.character("r")], on: &state) == [.loadRoofline])
    }

    @Test func tableJudgesKernelsAgainstTheRoofs() {
        let text = loaded(width: 160, height: 48).render().text()
        #expect(text.contains("sgemm"))
        #expect(text.contains("85%"))  // 170 of min(200, 30 × 60)
        #expect(text.contains("compute"))
        #expect(text.contains("50%"))  // softmax: 3 of 30 × 0.2 = 6
        #expect(text.contains("memory"))
        #expect(text.contains("FP32 (2 cores) 200 GFLOP/s"))
    }

    @Test func withoutAProfileItSaysHowToMeasure() {
        var state = AppFixtures.state()
        AppFixtures.press([.character("4")], on: &state)
        _ = state.update(.rooflineLoaded(RooflineData(machine: nil, ceilings: [], points: [])))
        #expect(state.render().text().contains("loupe roofline measure"))
    }

    @Test func screensAt160x48() {
        if let difference = Golden.compare(loaded(width: 160, height: 48).render().text(), named: "roofline-160x48") {
            Issue.record(Comment(rawValue: difference))
        }
    }
}
