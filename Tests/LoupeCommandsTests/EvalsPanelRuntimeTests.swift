import Foundation
import LoupeApp
import LoupeCommands
import LoupeKit
import LoupeModels
import LoupeStore
import LoupeTUI
import LoupeTerminal
import Testing

/// The Evals panel through the real loop on a real workspace: a suite run from the panel with
/// `r`, its answers, the drill-down, the jump to the ranking in Retrieval and back, a baseline
/// and a comparison.
@Suite(.serialized) struct EvalsPanelRuntimeTests {
    private func keys(_ text: String) -> [InputEvent] { text.map { .key(.character($0)) } }

    @Test func aSuiteRunsFromThePanelAndItsAnswersLeadToTheirRankings() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let session = WorkspaceSession(
            path: directory + "/w.sqlite", displayPath: "w.sqlite", busyTimeout: 2, themes: TestEnvironment.themes)
        try EvalCommandTests.corpus.write(toFile: directory + "/corpus.jsonl", atomically: true, encoding: .utf8)
        try EvalCommandTests.queries.write(toFile: directory + "/queries.jsonl", atomically: true, encoding: .utf8)
        try EvalCommandTests.qrels.write(toFile: directory + "/qrels.trec", atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: directory + "/evals", withIntermediateDirectories: true)
        try EvalCommandTests.suite("tiny-bm25").replacingOccurrences(of: ": queries.jsonl", with: ": ../queries.jsonl")
            .replacingOccurrences(of: "qrels: qrels.trec", with: "qrels: ../qrels.trec")
            .write(toFile: directory + "/evals/bm25.yaml", atomically: true, encoding: .utf8)
        let workspace = try session.workspace()
        let models = ModelLibrary.standard(environment: ProcessInfo.processInfo.environment)
        _ = try RetrievalService(workspace: workspace, models: models).ingest(
            [directory + "/corpus.jsonl"], embed: false)

        let size = Size(width: 120, height: 36)
        let executor = CommandExecutor(session: session, isInsideTUI: true)
        let backend = HeadlessBackend(size: size, script: [.key(.character("5"))])
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

        // A suite not run yet is listed; r runs it as a job and the run appears with its headline.
        AppRuntimeTests.pump(runtime) { screen().contains("bm25.yaml") }
        #expect(screen().contains("not run"))
        // The job's "complete" can reach the screen before the list's re-read: wait for the row.
        send(keys("r")) {
            screen().contains("tiny-bm25") && screen().contains("complete") && screen().contains("4/4")
                && screen().contains("t n 4")
        }
        #expect(screen().contains("4/4") && screen().contains("ndcg@10"))
        // The selected run's statistics under the list.
        #expect(screen().contains("[") && screen().contains("t n 4"))

        // Its answers, then one answer's verdicts.
        send([.key(.enter)]) { screen().contains("4 of 4 answers") }
        send(keys("ff")) { screen().contains("filter errors") }
        send(keys("ff")) { screen().contains("filter all") }
        send([.key(.down), .key(.down), .key(.enter)]) { screen().contains("Verdicts") }
        #expect(screen().contains("buckling of shells") && screen().contains("relevant judged"))

        // t: the ranking in the Retrieval panel, the query typed in; ctrl+o: back to the answer.
        send(keys("t")) { screen().contains("Retrieval · Hits") && screen().contains("Shells") }
        #expect(screen().contains("buckling of shells"))
        send([.key(.control("o"))]) { screen().contains("Verdicts") }

        // A second run with the baseline marked: the comparison.
        send([.key(.escape), .key(.escape)]) { screen().contains("run ") && screen().contains("headline") }
        send(keys("b")) { screen().contains("baseline #1") }
        send(keys("r")) { screen().contains("2 runs") }
        AppRuntimeTests.pump(runtime) { !screen().contains("running") && screen().contains("2 runs") }
        send([.key(.up)] + keys("c")) { screen().contains("run 2 vs baseline 1") }
        #expect(screen().contains("W/T/L") && screen().contains("0/4/0"))
    }
}
