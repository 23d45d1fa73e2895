import Foundation
import LoupeApp
import LoupeCommands
import LoupeKit
import LoupeModels
import LoupeTUI
import LoupeTerminal
import Testing

/// The Attention panel on the real SmolLM2 through the real loop (`m` in the panel), checked
/// against the commands on the same text: every head statistic the panel holds is what
/// `loupe heads TEXT --json` prints, the rows it draws and ranks are what `loupe attention
/// --model smollm2 --layer L --json` prints, for the first layer and for one it reads later.
@Suite(.serialized) struct AttentionSmolLM2RuntimeTests {
    static let text = "Alice gave Bob the red key. Later, Bob gave Alice the red"

    /// The runtime with the Attention panel on SmolLM2 and the text analysed.
    func analysed() throws -> (AppRuntime, HeadlessBackend) {
        try #require(
            FileManager.default.fileExists(atPath: ModelsCommandTests.smolLM2Path),
            "SmolLM2 weights not found at \(ModelsCommandTests.smolLM2Path): run scripts/fetch-smollm2")
        let session = TestEnvironment.session()
        let executor = CommandExecutor(session: session, isInsideTUI: true)
        let script: [InputEvent] =
            [.key(.character("3")), .key(.character("i")), .key(.control("u"))]
            + Self.text.map { .key(.character($0)) } + [.key(.escape), .key(.character("m"))]
        let backend = HeadlessBackend(size: Size(width: 120, height: 36), script: script)
        let state = AppState(
            size: backend.size, theme: .builtInDefault, panels: AppState.standardPanels(), workspaceName: "w.sqlite",
            catalog: executor.catalog, themeNames: ["default"])
        let environment = try TestEnvironment.appEnvironment(session: session, executor: executor)
        let runtime = AppRuntime(state: state, backend: backend, environment: environment)
        AppRuntimeTests.pump(runtime) { backend.lastFrame?.text().contains("tokens · Head grid") ?? false }
        return (runtime, backend)
    }

    func panel(_ runtime: AppRuntime) throws -> AttentionPanel {
        try #require(runtime.state.panels.first { $0.id == .attention } as? AttentionPanel)
    }

    /// `loupe attention --model smollm2 TEXT --layer L --json`'s rows, `[head][query][key]`.
    func commandRows(layer: Int) throws -> (tokens: [String], rows: [[[Double]]]) {
        let result = try GenerateCommandTests.run([
            "attention", "--model", "smollm2", Self.text, "--layer", String(layer), "--json",
        ])
        #expect(result.status == 0, "\(result.error)")
        let json = try GenerateCommandTests.object(result.output)
        return (
            try #require(json["tokens"] as? [String]), try #require(json["attention"] as? [[[Double]]])
        )
    }

    @Test func thePanelsNumbersAreTheCommandsNumbers() throws {
        let (runtime, backend) = try analysed()
        let analysis = try #require(try panel(runtime).smolLM2.analysis)
        // Head statistics: `loupe heads TEXT --json`, all 270, in the same order.
        let heads = try GenerateCommandTests.run(["heads", Self.text, "--json"])
        #expect(heads.status == 0, "\(heads.error)")
        let listed = try #require(try GenerateCommandTests.object(heads.output)["heads"] as? [[String: Any]])
        #expect(listed.count == 270 && analysis.statistics.count == 270)
        for (mine, theirs) in zip(analysis.statistics, listed) {
            #expect(mine.layer == theirs["layer"] as? Int && mine.head == theirs["head"] as? Int)
            #expect(mine.keyValueHead == theirs["key_value_head"] as? Int)
            for (value, name) in [
                (mine.entropy, "entropy"), (mine.sinkMass, "sink_mass"), (mine.previousToken, "previous_token"),
                (mine.induction, "induction"),
            ] {
                let other = try #require(theirs[name] as? Double)
                #expect(abs(value - other) <= 1e-6, "L\(mine.layer)H\(mine.head) \(name): \(value) vs \(other)")
            }
        }
        // Layer 0's rows, kept with the analysis.
        let (tokens, rows) = try commandRows(layer: 0)
        #expect(analysis.tokens == tokens && analysis.keyValueHeads == [0, 0, 0, 1, 1, 1, 2, 2, 2])
        expectRows(analysis.kept, equal: rows)
        #expect(analysis.kept.layer == 0)
        // The grid's side column prints the cursor head's statistics as the command gives them.
        let first = try #require(listed.first)
        let screen = try #require(backend.lastFrame).text()
        #expect(screen.contains(String(format: "induction %6.3f", try #require(first["induction"] as? Double))))
    }

    @Test func aHeadOfALaterLayerIsReadAndRankedAsTheCommandsRow() throws {
        let (runtime, backend) = try analysed()
        // Down to layer 17, head 4, open it: the panel reads layer 17's rows.
        let keys: [Key] = Array(repeating: .character("j"), count: 17) + Array(repeating: .character("l"), count: 4)
        backend.enqueue(keys.map { .key($0) } + [.key(.enter)])
        AppRuntimeTests.pump(runtime) {
            ((try? panel(runtime).smolLM2.rowsShown?.layer) ?? nil) == 17
                && backend.lastFrame?.text().contains("attends to") == true
        }
        let view = try panel(runtime).smolLM2
        let kept = try #require(view.rowsShown)
        #expect(kept.layer == 17 && view.head == 4)
        let (_, rows) = try commandRows(layer: 17)
        expectRows(kept, equal: rows)
        // "Attends to" for the last token: the command's row, ranked, with its probabilities.
        let analysis = try #require(view.analysis)
        let last = analysis.count - 1
        let ranked = rows[4][last].enumerated().sorted { $0.element > $1.element }
        let top = analysis.top(head: 4, query: last, limit: 5)
        #expect(top.map(\.key) == ranked.prefix(5).map(\.offset))
        let screen = try #require(backend.lastFrame).text()
        for entry in ranked.prefix(3) { #expect(screen.contains(String(format: "%.3f", entry.element))) }
    }

    private func expectRows(_ layer: CausalAttention.Layer, equal rows: [[[Double]]]) {
        #expect(rows.count == 9 && rows.allSatisfy { $0.count == layer.count })
        var worst = 0.0
        for (head, matrix) in rows.enumerated() {
            for (query, row) in matrix.enumerated() {
                let mine = layer.row(head: head, query: query)
                for (key, value) in row.enumerated() {
                    worst = max(worst, abs(Double(mine[mine.startIndex + key]) - value))
                }
            }
        }
        #expect(worst <= 1e-6, "largest difference \(worst)")
    }
}
