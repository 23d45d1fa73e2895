import Foundation
import LoupeApp
import LoupeKit
import LoupeModels
import LoupeTUI
import LoupeTestSupport
import Testing

/// The Attention panel on SmolLM2 (`m`): the fixtures are what `loupe tokenize --special --json`,
/// `loupe heads --json` and `loupe attention --model smollm2 --layer 18 --json` printed for the
/// text in `text.txt` (a sentence said twice, so layer 18's induction head L18 H6 copies). The
/// panel shows those numbers; AttentionSmolLM2RuntimeTests (LoupeCommandsTests) checks the
/// panel's own run of the real model against the commands.
@Suite struct AttentionPanelSmolLM2Tests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/attention-smollm2")

    static func json(_ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: directory.appendingPathComponent(name + ".json"))
        return try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static let text = "The cat sat on the mat. The cat sat on the mat because it was tired."

    /// The analysis as the commands printed it.
    static func analysis() throws -> CausalAttention {
        let tokenized = try json("tokenize")
        let attention = try json("attention-layer18")
        let ids = try #require(tokenized["ids"] as? [Int]).map { Int32($0) }
        let tokens = try #require(attention["tokens"] as? [String])
        #expect(tokens == tokenized["pieces"] as? [String])
        let rows = try #require(attention["attention"] as? [[[Double]]]).flatMap { $0.flatMap { $0.map { Float($0) } } }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        struct Heads: Decodable { var heads: [LlamaHeadStatistics] }
        let heads = try decoder.decode(
            Heads.self, from: try Data(contentsOf: directory.appendingPathComponent("heads.json")))
        return CausalAttention(
            text: text, ids: ids, tokens: tokens, layers: 30, heads: 9,
            keyValueHeads: try #require(attention["key_value_heads"] as? [Int]), statistics: heads.heads,
            kept: CausalAttention.Layer(layer: 18, count: ids.count, rows: rows))
    }

    private func panel(_ state: AppState) -> AttentionPanel? { state.panels[state.focusedPanel] as? AttentionPanel }

    /// The panel on SmolLM2 with the fixture's text analysed, its grid on show.
    func analysed(width: Int = 120, height: Int = 36) throws -> AppState {
        var state = AppFixtures.state(width: width, height: height)
        AppFixtures.press([.character("3"), .character("i"), .control("u")], on: &state)
        AppFixtures.type(Self.text, on: &state)
        AppFixtures.press([.escape], on: &state)
        let asked = AppFixtures.press([.character("m")], on: &state)
        let request = AttentionPanel.AnalyzeSmolLM2(request: CausalAttentionRequest(Self.text, layer: 0))
        #expect(AppFixtures.requests(AttentionPanel.AnalyzeSmolLM2.self, in: asked) == [request])
        // It runs as a job; its answer ends the job.
        guard case .portJob(let job, _) = try #require(asked.first) else {
            Issue.record("SmolLM2's run is not a job: \(asked)")
            return state
        }
        _ = state.update(.readFinished(job, PortAnswer(request, .loaded(try Self.analysis()))))
        return state
    }

    /// Moves the grid's cursor to layer 18, head 6: the strongest induction head.
    func onInductionHead(_ state: inout AppState) {
        AppFixtures.press(Array(repeating: .character("j"), count: 18), on: &state)
        AppFixtures.press(Array(repeating: .character("l"), count: 6), on: &state)
    }

    @Test func mSwitchesModelsAndAsksSmolLM2OnceForTheText() throws {
        var state = AppFixtures.state()
        AppFixtures.press([.character("3")], on: &state)
        let first = AppFixtures.press([.character("m")], on: &state)
        let text = try #require(panel(state)?.input.text)
        #expect(
            AppFixtures.requests(AttentionPanel.AnalyzeSmolLM2.self, in: first)
                == [AttentionPanel.AnalyzeSmolLM2(request: CausalAttentionRequest(text, layer: 0))])
        #expect(panel(state)?.model == .smolLM2)
        #expect(state.render().text().contains("Attention · SmolLM2"))
        // Back to MiniLM and again to SmolLM2: the text is already being read, nothing new is asked.
        AppFixtures.press([.character("m")], on: &state)
        #expect(panel(state)?.model == .miniLM)
        #expect(AppFixtures.press([.character("m")], on: &state).isEmpty)
    }

    @Test func aFailedRunSaysWhyAndMiniLMKeysSaySo() throws {
        var state = AppFixtures.state()
        AppFixtures.press([.character("3")], on: &state)
        let asked = try #require(
            AppFixtures.requests(
                AttentionPanel.AnalyzeSmolLM2.self, in: AppFixtures.press([.character("m")], on: &state)
            ).first)
        _ = state.update(AppFixtures.failure(asked, "SmolLM2-135M-Instruct.Q4_1.gguf: not found\u{1B}[2J"))
        let screen = state.render().text()
        #expect(screen.contains("not found"))
        #expect(!screen.contains("\u{1B}"))
        AppFixtures.press([.character("p")], on: &state)
        #expect(state.message?.text.contains("m switches back to MiniLM") == true)
    }

    @Test func theGridShowsTheCommandsNumbersShadedByTheChosenStatistic() throws {
        var state = try analysed()
        onInductionHead(&state)
        let analysis = try Self.analysis()
        let numbers = analysis.statistics(layer: 18, head: 6)
        #expect(numbers.layer == 18 && numbers.head == 6 && numbers.keyValueHead == 2)
        var screen = state.render().text()
        #expect(screen.contains("L18 H6 reads KV head 2") && screen.contains("─ KV 2 ─"))
        #expect(screen.contains(String(format: "induction %6.3f", numbers.induction)))
        #expect(screen.contains(String(format: "entropy   %6.3f bits", numbers.entropy)))
        #expect(screen.contains("shaded by induction") && screen.contains("3 per KV head"))
        expectPanel(state, matchesGolden: "attention-smollm2-grid-120x36")
        AppFixtures.press([.character("c")], on: &state)
        #expect(panel(state)?.smolLM2.statistic == .previous)
        screen = state.render().text()
        // The previous-token heads the command ranks first lead the side column.
        let best = try #require(analysis.statistics.max { $0.previousToken < $1.previousToken })
        #expect(screen.contains("strongest previous token") && screen.contains("L\(best.layer)H\(best.head)"))
    }

    @Test func theGridFitsEightyColumns() throws {
        var state = try analysed(width: 80, height: 24)
        onInductionHead(&state)
        expectPanel(state, matchesGolden: "attention-smollm2-grid-80x24")
    }

    @Test func aHeadsPatternAndWhatTheCursorTokenAttendsTo() throws {
        var state = try analysed()
        onInductionHead(&state)
        // Layer 18 is the one kept: opening its head reads nothing more.
        #expect(AppFixtures.press([.enter], on: &state).isEmpty)
        let view = try #require(panel(state)?.smolLM2)
        #expect(view.showsHead && view.query == 17)
        let screen = state.render().text()
        // The last token "." of the second sentence: the head's top keys, as the command's row has them.
        let attention = try Self.json("attention-layer18")
        let row = try #require((attention["attention"] as? [[[Double]]])?[6][17])
        let top = row.enumerated().sorted { $0.element > $1.element }.prefix(3)
        for entry in top { #expect(screen.contains(String(format: "%.3f", entry.element)), "\(entry)") }
        #expect(screen.contains("17 attends to"))
        // Byte-level pieces are shown as their text, the leading space inside the quotes.
        #expect(screen.contains("\" cat\""))
        expectPanel(state, matchesGolden: "attention-smollm2-head-120x36")
        // The key cursor walks the row; it never passes the query (causal).
        AppFixtures.press([.character("k"), .character("k")], on: &state)
        AppFixtures.press(Array(repeating: .character("l"), count: 30), on: &state)
        #expect(panel(state)?.smolLM2.key == 15)
        // Past the layer's last head, `]` reads layer 19.
        AppFixtures.press([.character("]"), .character("]")], on: &state)
        let read = AppFixtures.press([.character("]")], on: &state)
        let ids = try Self.analysis().ids
        #expect(
            AppFixtures.requests(AttentionPanel.ReadSmolLM2Layer.self, in: read)
                == [AttentionPanel.ReadSmolLM2Layer(request: AttentionBrowser.LayerRequest(ids: ids, layer: 19))])
        #expect(state.render().text().contains("Reading layer 19"))
        AppFixtures.press([.escape], on: &state)
        #expect(panel(state)?.smolLM2.showsHead == false)
    }

    @Test func theHeadFitsEightyColumns() throws {
        var state = try analysed(width: 80, height: 24)
        onInductionHead(&state)
        AppFixtures.press([.enter], on: &state)
        expectPanel(state, matchesGolden: "attention-smollm2-head-80x24")
    }

    /// Thousands of tokens: the pattern shows the rows and columns around the cursor and says how
    /// many are above, below and to either side; the cursor reaches the last token.
    @Test func aLongContextScrollsWithTheCursor() throws {
        let t = 2_000
        var rows = [Float](repeating: 0, count: t * t)
        // Each query reads its previous token (the first itself).
        for query in 0..<t { rows[query * t + max(0, query - 1)] = 1 }
        let statistics = [
            LlamaHeadStatistics(
                layer: 0, head: 0, keyValueHead: 0, entropy: 0, sinkMass: 0, previousToken: 1, induction: 0)
        ]
        let long = CausalAttention(
            text: "long", ids: (0..<t).map { Int32($0 % 100) }, tokens: (0..<t).map { " w\($0)" }, layers: 1, heads: 1,
            keyValueHeads: [0], statistics: statistics, kept: CausalAttention.Layer(layer: 0, count: t, rows: rows))
        var state = AppFixtures.state(width: 120, height: 36)
        AppFixtures.press([.character("3"), .character("i"), .control("u")], on: &state)
        AppFixtures.type("long", on: &state)
        AppFixtures.press([.escape], on: &state)
        AppFixtures.press([.character("m")], on: &state)
        _ = state.update(
            AppFixtures.answer(
                AttentionPanel.AnalyzeSmolLM2(request: CausalAttentionRequest("long", layer: 0)), long))
        AppFixtures.press([.enter], on: &state)
        var screen = state.render().text()
        #expect(screen.contains("1999 attends to") && screen.contains("1998 \" w1998\""))
        #expect(screen.contains("▲ ") && !screen.contains("▼ "))
        AppFixtures.press([.character("g")], on: &state)
        AppFixtures.press([.pageDown], on: &state)
        let query = try #require(panel(state)?.smolLM2.query)
        #expect(query > 0 && query < 100)
        screen = state.render().text()
        #expect(screen.contains("\(query) attends to") && screen.contains("▼ "))
        #expect(!screen.contains("1999 \""))
    }
}
