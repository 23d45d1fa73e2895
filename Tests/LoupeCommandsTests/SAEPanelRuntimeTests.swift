import Foundation
import LoupeApp
import LoupeCommands
import LoupeKit
import LoupeModels
import LoupeStore
import LoupeTUI
import LoupeTerminal
import Testing

/// The SAE panel through the real loop: activations collected from MiniLM over a real workspace,
/// an SAE trained from the `:` line while the panel follows its curves, then its features, a
/// feature's card, the test text run live through MiniLM and the SAE, and a label stored.
@Suite(.serialized) struct SAEPanelRuntimeTests {
    @Test func anSAETrainedFromTheCommandLineIsBrowsedAndLabelled() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let session = WorkspaceSession(
            path: directory + "/w.sqlite", displayPath: "w.sqlite", busyTimeout: 2, themes: TestEnvironment.themes)
        try EvalCommandTests.corpus.write(toFile: directory + "/corpus.jsonl", atomically: true, encoding: .utf8)
        let workspace = try session.workspace()
        let models = ModelLibrary.standard(environment: ProcessInfo.processInfo.environment)
        _ = try RetrievalService(workspace: workspace, models: models).ingest(
            [directory + "/corpus.jsonl"], embed: false)
        let collected = try SAEService(workspace: workspace, models: models).collect(layer: 2, tokens: 10_000)

        let size = Size(width: 120, height: 36)
        let executor = CommandExecutor(session: session, isInsideTUI: true)
        let backend = HeadlessBackend(size: size, script: [.key(.character("7"))])
        let state = AppState(
            size: size, theme: .builtInDefault, panels: AppState.standardPanels(), workspaceName: "w.sqlite",
            catalog: executor.catalog, themeNames: session.themes.availableThemes())
        let environment = try TestEnvironment.appEnvironment(session: session, executor: executor)
        let runtime = AppRuntime(state: state, backend: backend, environment: environment)
        func screen() -> String { backend.lastFrame?.text() ?? "" }
        func send(_ events: [InputEvent], until done: () -> Bool) {
            backend.enqueue(events)
            AppRuntimeTests.pump(runtime, until: done)
        }
        func type(_ text: String) -> [InputEvent] { text.map { .key(.character($0)) } }

        // No SAE yet: the panel says how to make one.
        AppRuntimeTests.pump(runtime) { screen().contains("No SAE in this workspace yet") }
        // Trained from the : line; the panel follows the run and shows its curves and metrics.
        let train = "sae train --set \(collected.set) --width 32 --k 4 --steps 60 --batch 16"
        send([.key(.character(":"))] + type(train) + [.key(.enter)]) {
            screen().contains("trained 60 steps") && screen().contains("fidelity")
        }
        #expect(screen().contains("SAE 1 · layer 2 · TopK k 4 · 32 latents"))
        #expect(screen().contains("explained var") && screen().contains("dense >10%"))

        // Its features, indexed over the activation set (esc first closes the command's output).
        // H shows the dense and dead features too (a 32-latent SAE with k 4 has many dense ones);
        // the list opens on the strongest.
        send([.key(.escape)] + type("v")) { screen().contains("of 32 features") }
        send(type("H")) { screen().contains("32 of 32 features · 0 labelled") }
        let summaries = try SAEBrowser(workspace: workspace, models: models).index(1).summaries
        let strongest = try #require(
            summaries.max { ($0.maxActivation, $1.feature) < ($1.maxActivation, $0.feature) })
        #expect(screen().contains(String(format: "%.3f", strongest.maxActivation)))

        // The strongest feature's card: contexts from the corpus, the nearest tokens through MiniLM's
        // word embeddings, and the test text run through MiniLM and the SAE.
        send([.key(.enter)]) {
            screen().contains("Feature \(strongest.feature) ·") && screen().contains("nearest tokens")
        }
        AppRuntimeTests.pump(runtime) { screen().contains("strongest here") || screen().contains("does not fire") }
        #expect(screen().contains("top"))
        send(
            type("i") + Array(repeating: .key(.backspace), count: 80) + type("Heated plates flutter.") + [.key(.enter)]
        ) {
            screen().contains("heated plates flutter") && !screen().contains("Running MiniLM")
        }

        // A label typed on the card is stored in the workspace and listed.
        send(type("L") + type("plates") + [.key(.enter)]) { screen().contains("Feature \(strongest.feature) · plates") }
        #expect(try workspace.saeTables.saeFeatureLabels(model: 1)[strongest.feature] == "plates")
        send([.key(.escape)]) { screen().contains("1 labelled") }
    }
}
