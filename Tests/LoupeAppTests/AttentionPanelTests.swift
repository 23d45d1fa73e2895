import Foundation
import LoupeApp
import LoupeKit
import LoupeTUI
import LoupeTestSupport
import Testing

@Suite struct AttentionPanelTests {
    /// A 2-layer, 3-head analysis of 5 tokens: head h of layer l looks (l + h) tokens back.
    static let analysis: AttentionAnalysis = {
        let tokens = ["[CLS]", "the", "cat", "sat", "[SEP]"]
        var probabilities: [Float] = []
        for layer in 0..<2 {
            for head in 0..<3 {
                for q in 0..<5 {
                    for k in 0..<5 { probabilities.append(k == max(0, q - (layer + head) % 3) ? 1 : 0) }
                }
            }
        }
        return AttentionAnalysis(
            text: "the cat sat", tokens: tokens, layers: 2, heads: 3, probabilities: probabilities, lens: [0.4, 1])
    }()

    static func analysed() -> AppState {
        var state = AppFixtures.state()
        AppFixtures.press([.character("3")], on: &state)
        AppFixtures.press([.character("i")], on: &state)
        AppFixtures.press([.control("u")], on: &state)
        _ = AppFixtures.type("the cat sat", on: &state)
        let effects = AppFixtures.press([.enter], on: &state)
        #expect(effects == [.ask(AttentionPanel.Analyze(request: AttentionRequest("the cat sat")))])
        _ = state.update(
            AppFixtures.answer(AttentionPanel.Analyze(request: AttentionRequest("the cat sat")), Self.analysis))
        return state
    }

    private var panel: (AppState) -> AttentionPanel? { { $0.panels[$0.focusedPanel] as? AttentionPanel } }

    @Test func typingASentenceCapturesKeysAndAnalysesOnEnter() {
        var state = AppFixtures.state()
        AppFixtures.press([.character("3"), .character("i")], on: &state)
        // While editing, q and ? are text, not quit and help.
        #expect(AppFixtures.press([.character("q"), .character("?")], on: &state).isEmpty)
        #expect(state.mode == .normal)
        // The prefilled example sentence is selected on entry, so typing replaces it.
        #expect(panel(state)?.input.text == "q?")
        AppFixtures.press([.escape], on: &state)
        #expect(panel(state)?.capturesText == false)
    }

    @Test func gridMovesOpensAHeadAndCyclesViews() {
        var state = Self.analysed()
        AppFixtures.press([.character("l"), .character("j")], on: &state)
        #expect(panel(state)?.layer == 1)
        #expect(panel(state)?.head == 1)
        AppFixtures.press([.enter], on: &state)
        #expect(panel(state)?.view == .head)
        AppFixtures.press([.escape], on: &state)
        #expect(panel(state)?.view == .grid)
        // Grid, head, head lines (BertViz's head view), table.
        AppFixtures.press([.character("v"), .character("v"), .character("v")], on: &state)
        #expect(panel(state)?.view == .table)
        AppFixtures.press([.character("]")], on: &state)
        #expect(panel(state)?.head == 2)
    }

    @Test func tableSortsAndOpensTheSelectedHead() throws {
        var state = Self.analysed()
        AppFixtures.press([.character("v"), .character("v"), .character("v")], on: &state)
        AppFixtures.press([.character("s"), .character("s"), .character("s"), .character("s")], on: &state)
        #expect(panel(state)?.sort == TableSort(column: 5, ascending: false))  // prev, highest first
        AppFixtures.press([.character("S"), .character("S")], on: &state)
        AppFixtures.press([.enter], on: &state)
        let opened = try #require(panel(state))
        #expect(opened.view == .head)
        let statistics = Self.analysis.statistics.first { $0.layer == opened.layer && $0.head == opened.head }
        #expect(statistics?.previousToken == Self.analysis.statistics.map(\.previousToken).max())
    }

    @Test func exportWritesTheHeadAsCSV() {
        var state = Self.analysed()
        let effects = AppFixtures.press([.character("e")], on: &state)
        guard case .writeFile(let path, let contents)? = effects.first else {
            Issue.record("no export effect: \(effects)")
            return
        }
        #expect(path.hasSuffix("/attention-L0-H0.csv"))
        #expect(contents == Self.analysis.csv(layer: 0, head: 0))
    }

    /// With heads combined, `e` writes what is on screen, named after how they are combined.
    @Test func exportWritesTheCombinedWeightsWhenHeadsAreCombined() {
        var state = Self.analysed()
        let effects = AppFixtures.press(
            [.enter, .character("a"), .character("a"), .character("a"), .character("e")], on: &state)
        guard case .writeFile(let path, let contents)? = effects.last else {
            Issue.record("no export effect: \(effects)")
            return
        }
        #expect(path.hasSuffix("/attention-L0-L0-rollout.csv"))
        #expect(contents == Self.analysis.csv(Self.analysis.matrix(.rollout, layer: 0, head: 0)))
        #expect(contents != Self.analysis.csv(layer: 0, head: 0))
    }

    @Test func screensAt80x24() {
        var state = Self.analysed()
        expectPanel(state, matchesGolden: "attention-grid-80x24")
        AppFixtures.press([.enter, .character("j")], on: &state)
        expectPanel(state, matchesGolden: "attention-head-80x24")
    }

    @Test func failuresAreShown() {
        var state = AppFixtures.state()
        AppFixtures.press([.character("3"), .enter], on: &state)
        _ = state.update(
            AppFixtures.failure(
                AttentionPanel.Analyze(request: AttentionRequest("The cat sat on the mat because it was tired.")),
                "all-MiniLM-L6-v2: not found"))
        #expect(state.render().text().contains("all-MiniLM-L6-v2: not found"))
    }
}

@Suite struct AttentionPairTests {
    @Test func pairModeSendsBothSentencesAndMarksTheSecond() throws {
        var state = AppFixtures.state(width: 100, height: 30)
        AppFixtures.press([.character("3"), .character("p")], on: &state)
        let panel = try #require(state.panels[state.focusedPanel] as? AttentionPanel)
        #expect(panel.secondInput != nil)
        #expect(panel.capturesText)
        AppFixtures.press([.control("u")], on: &state)
        _ = AppFixtures.type("the dog slept", on: &state)
        AppFixtures.press([.tab, .control("u")], on: &state)
        _ = AppFixtures.type("the cat sat", on: &state)
        let effects = AppFixtures.press([.enter], on: &state)
        let request = AttentionRequest("the cat sat", second: "the dog slept")
        #expect(effects == [.ask(AttentionPanel.Analyze(request: request))])
        var analysis = AttentionPanelTests.analysis
        analysis.secondStart = 3
        _ = state.update(AppFixtures.answer(AttentionPanel.Analyze(request: request), analysis))
        AppFixtures.press([.enter], on: &state)
        let screen = state.render().text()
        #expect(screen.contains("pair       the dog slept"))
        #expect(screen.contains("▏B"))
        // p again leaves pair mode.
        AppFixtures.press([.character("p")], on: &state)
        #expect((state.panels[state.focusedPanel] as? AttentionPanel)?.secondInput == nil)
    }
}

@Suite struct AttentionExportTests {
    @Test func jsonExportCarriesTokensStatisticsAndTheMatrix() throws {
        var state = AppFixtures.state()
        AppFixtures.press([.character("3"), .enter], on: &state)
        _ = state.update(
            AppFixtures.answer(
                AttentionPanel.Analyze(request: AttentionRequest("The cat sat on the mat because it was tired.")),
                AttentionPanelTests.analysis))
        let effects = AppFixtures.press([.character("E")], on: &state)
        guard case .writeFile(let path, let contents)? = effects.first else {
            Issue.record("no export effect: \(effects)")
            return
        }
        #expect(path.hasSuffix("/attention-L0-H0.json"))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contents.utf8)) as? [String: Any])
        #expect(json["tokens"] as? [String] == ["[CLS]", "the", "cat", "sat", "[SEP]"])
        #expect((json["attention"] as? [[Double]])?.count == 5)
        #expect(json["entropy_bits"] as? Double == 0)
    }
}

@Suite struct AttentionPickTests {
    @Test func upAndDownPickExamplesAndEarlierSentences() throws {
        var state = AppFixtures.state()
        AppFixtures.press([.character("3"), .character("i"), .control("u")], on: &state)
        _ = AppFixtures.type("my own sentence", on: &state)
        AppFixtures.press([.enter, .character("i"), .control("u"), .up], on: &state)
        #expect((state.panels[state.focusedPanel] as? AttentionPanel)?.input.text == "my own sentence")
        AppFixtures.press([.up], on: &state)
        #expect(
            (state.panels[state.focusedPanel] as? AttentionPanel)?.input.text
                == "Time flies like an arrow; fruit flies like a banana.")
        AppFixtures.press([.down, .down], on: &state)
        #expect((state.panels[state.focusedPanel] as? AttentionPanel)?.input.text == "")
    }
}

/// Repeated tokens are told apart by position on the axes and in "attends to".
@Suite struct AttentionLabelTests {
    @Test func repeatedTokensCarryTheirPosition() {
        #expect(AttentionPanel.positionedLabels(["the", "cat", "the"]) == ["the·0", "cat", "the·2"])
        #expect(AttentionPanel.positionedLabels(["a-very-long-token"]) == ["a-very-lon"])
    }
}

/// BertViz's head view: each query's line to the keys it attends to, the cursor's weights.
@Suite struct AttentionLinesTests {
    private var panel: (AppState) -> AttentionPanel? { { $0.panels[$0.focusedPanel] as? AttentionPanel } }

    /// The Attention panel (`3`, `enter`) given `analysis` as MiniLM's answer.
    private func analysed(_ analysis: AttentionAnalysis, width: Int) -> AppState {
        var state = AppFixtures.state(width: width, height: 30)
        AppFixtures.press([.character("3"), .enter], on: &state)
        _ = state.update(
            AppFixtures.answer(
                AttentionPanel.Analyze(request: AttentionRequest("The cat sat on the mat because it was tired.")),
                analysis))
        return state
    }

    @Test func theLinesViewDrawsTheCursorsAttentionWithItsWeights() throws {
        var state = analysed(AttentionPanelTests.analysis, width: 100)
        // Grid, then head (enter), then lines (v); head 1 of layer 0 looks one token back.
        AppFixtures.press([.character("l"), .enter, .character("v")], on: &state)
        let panel = try #require(state.panels[state.focusedPanel] as? AttentionPanel)
        #expect(panel.view == .lines && panel.head == 1)
        AppFixtures.press([.character("j"), .character("j")], on: &state)
        let text = state.render().text()
        #expect(text.contains("L0 H1 · query → key lines"))
        // The cursor is on "cat" (token 2), which puts all its weight on "the" (token 1).
        let rows = text.split(separator: "\n")
        #expect(rows.contains { $0.contains("the █1.00") })
        #expect(rows.contains { $0.contains("⠉") || $0.contains("⠒") || $0.contains("⣀") || $0.contains("⠤") })
    }

    /// Every query's lines are drawn with their weight, not one grey for all: the head's pattern
    /// reads without moving the cursor (the walkthrough's BertViz comparison). Here every query of
    /// L0 H1 looks one token back with weight 1, so the rows away from the cursor carry lines in
    /// the text colour at full strength, not the dim style.
    @Test func theLinesViewDrawsEveryQuerysLinesWithTheirWeight() throws {
        var state = analysed(AttentionPanelTests.analysis, width: 100)
        AppFixtures.press([.character("l"), .enter, .character("v")], on: &state)
        let frame = state.render()
        let theme = Theme.builtInDefault
        let braille = (0..<frame.size.height).flatMap { y in
            (0..<frame.size.width).compactMap { x -> Style? in
                let cell = frame[x, y]
                guard let scalar = cell.grapheme.unicodeScalars.first, (0x2801...0x28FF).contains(scalar.value)
                else { return nil }
                return cell.style
            }
        }
        #expect(braille.count > 20)
        let strong = braille.filter { $0.foreground == theme.text.foreground }
        #expect(strong.count > braille.count / 3, "\(strong.count) of \(braille.count) line cells at full weight")
        #expect(
            !braille.contains { $0.foreground == theme.dim.foreground && theme.dim.foreground != theme.text.foreground }
        )
    }

    /// One of the themes Loupe ships, from the repository's `themes/`.
    static func shippedTheme(_ name: String) throws -> Theme {
        let themes = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../themes").standardized.path
        return try ThemeLoader(searchDirectories: [themes]).load(name)
    }

    /// WCAG 2's contrast ratio, written out here from the standard rather than through
    /// `RGB.contrast(with:)`, so the tests check the theme against the formula itself.
    static func wcagContrast(_ first: RGB, _ second: RGB) -> Double {
        func luminance(_ c: RGB) -> Double {
            func channel(_ v: UInt8) -> Double {
                let x = Double(v) / 255
                return x <= 0.04045 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4)
            }
            return 0.2126 * channel(c.red) + 0.7152 * channel(c.green) + 0.0722 * channel(c.blue)
        }
        let (a, b) = (luminance(first), luminance(second))
        return (max(a, b) + 0.05) / (min(a, b) + 0.05)
    }

    /// A key's label in the lines view reads on every theme: WCAG contrast of at least 4.5
    /// against the background at every weight it is drawn at full (the heat ramp's dark purple
    /// low end, #440154, measures 1.1–1.2 on a dark terminal background).
    @Test(arguments: ["default", "light", "high-contrast"])
    func keyLabelsHaveContrastAtEveryWeight(name: String) throws {
        let theme = try Self.shippedTheme(name)
        let background = theme.backgroundOrDefault
        for p: Float in [0.02, 0.05, 0.1, 0.2, 0.3, 0.6, 1] {
            let foreground = try #require(AttentionPanel.keyLabelStyle(p, theme: theme).foreground)
            let contrast = Self.wcagContrast(foreground, background)
            #expect(contrast >= 4.5, "\(name) p \(p): \(foreground.hex) on \(background.hex) is \(contrast)")
        }
    }

    /// The cursor's attention lines read on every theme however weak: from the weakest drawn
    /// (0.05) up, WCAG's graphics contrast of 3 against the background (the ramp's low end drew
    /// them in near-background purple on a dark terminal).
    @Test(arguments: ["default", "light", "high-contrast"])
    func weakAttentionLinesStayVisible(name: String) throws {
        let theme = try Self.shippedTheme(name)
        let background = theme.backgroundOrDefault
        var previous = -1.0
        for p in [0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1] {
            let stroke = theme.heatMarkColor(p)
            let contrast = Self.wcagContrast(stroke, background)
            #expect(contrast >= 3, "\(name) p \(p): \(stroke.hex) on \(background.hex) is \(contrast)")
            // Still a ramp: a stronger weight is never drawn with less contrast than a weaker one
            // (within rounding of 8-bit channels).
            #expect(contrast >= previous - 0.05, "\(name) p \(p): \(contrast) after \(previous)")
            previous = contrast
        }
    }

    @Test func aCombinesHeadsInTheHeadView() throws {
        var state = AttentionPanelTests.analysed()
        AppFixtures.press([.enter], on: &state)
        AppFixtures.press([.character("a")], on: &state)
        #expect(panel(state)?.aggregate == .layerMean)
        #expect(state.render().text().contains("L0 mean of 3 heads"))
        AppFixtures.press([.character("a"), .character("a")], on: &state)
        #expect(state.render().text().contains("rollout L0…L0"))
        AppFixtures.press([.character("a")], on: &state)
        #expect(panel(state)?.aggregate == .head)
    }

    @Test func theLinesViewOverlaysTheLayersHeadsInColours() throws {
        var state = analysed(AttentionPanelTests.analysis, width: 120)
        AppFixtures.press([.enter, .character("v"), .character("a"), .character("j"), .character("j")], on: &state)
        let frame = state.render()
        let text = frame.text()
        #expect(text.contains("L0, 3 heads overlaid"))
        #expect(text.contains("heads H0 H1 H2"))
        // "cat" (token 2) looks at itself in head 0, one back in head 1, two back in head 2:
        // the layer mean puts a third on each.
        let rows = text.split(separator: "\n")
        #expect(rows.contains { $0.contains("the █0.33") })
    }

    @Test func theNeuronViewShowsQueryKeyAndTheirProduct() throws {
        // One layer, one head of size 2 over three tokens, with q and k chosen by hand.
        let tokens = ["[CLS]", "cat", "[SEP]"]
        let queries: [Float] = [1, 0, 2, -1, 0, 1]
        let keys: [Float] = [1, 1, 3, 1, -1, 0]
        var probabilities: [Float] = []
        for i in 0..<3 {
            let scores = (0..<3).map { j in
                (queries[i * 2] * keys[j * 2] + queries[i * 2 + 1] * keys[j * 2 + 1]) / Float(2).squareRoot()
            }
            let exps = scores.map { Foundation.exp($0) }
            probabilities += exps.map { $0 / exps.reduce(0, +) }
        }
        let analysis = AttentionAnalysis(
            text: "cat", tokens: tokens, layers: 1, heads: 1, probabilities: probabilities, lens: [1], headSize: 2,
            queries: queries, keys: keys)
        #expect(abs(analysis.score(layer: 0, head: 0, query: 1, key: 1) - 5 / Float(2).squareRoot()) < 1e-6)
        var state = analysed(analysis, width: 120)
        AppFixtures.press(Array(repeating: .character("v"), count: 5), on: &state)
        #expect(panel(state)?.view == .neuron)
        AppFixtures.press([.character("j"), .character("l")], on: &state)
        let text = state.render().text()
        // Query "cat" = (2, −1), key "cat" = (3, 1): q·k = 5, 6 from agreeing dimensions, −1 not.
        #expect(text.contains("cat → cat · q·k/√2 = 3.536"))
        #expect(text.contains("q·k = 5.00 = 6.00 from dimensions that agree -1.00"))
        #expect(text.contains("q  cat"))
        #expect(text.contains("q×k"))
    }
}
