import Foundation
import LoupeApp
import LoupeEvals
import LoupeKit
import LoupeStore
import LoupeTUI
import LoupeTestSupport
import Testing

/// The Evals panel's views as golden frames, and its keys as effects, on two runs of a small
/// question-answering suite whose statistics are computed by the real `RunSummary`.
@Suite struct EvalsPanelTests {
    static let items: [(id: String, input: String, target: String)] = [
        ("q1", "What is (17 + 25) * 3?", "126"), ("q2", "How many documents are in the workspace?", "1400"),
        ("q3", "Capital of France?", "Paris"), ("q4", "What is 2 ** 10?", "1024"),
        ("q5", "Largest planet?", "Jupiter"), ("q6", "Boiling point of water in °C?", "100"),
    ]

    /// Imported Inspect logs are listed with their log's file name, and join a trend series by
    /// task and model (logs imported before the model was kept stay a series each); a suite's
    /// runs share one series until its suite or dataset changes.
    @Test func inspectLogsJoinASeriesByTaskAndModel() {
        func inspect(_ log: String, model: String?, task: String = "arith_agent") -> EvalRunRecord {
            EvalRunRecord(
                suite: "inspect:" + task, suiteFile: "/logs/" + log, suiteHash: "", datasetHash: "",
                targetKind: "inspect", targetJSON: model.map { #"{"kind":"inspect","model":"\#($0)"}"# } ?? "{}",
                scorersJSON: "[]", epochs: 1, planned: 5, status: "complete", source: "inspect", loupeVersion: "0.1.0",
                gitRevision: nil, startedAt: Date())
        }
        /// The series the run's listing joins, its target read once as the panel reads it.
        func series(_ run: EvalRunRecord) -> String {
            EvalService.RunListing(run: run, scorers: [], summary: RunSummary(rows: [], scorers: []), answered: 0)
                .series
        }
        let v1 = inspect("v1.eval", model: "openai/gpt-4o-mini")
        let v2 = inspect("v2.json", model: "openai/gpt-4o-mini")
        #expect(EvalsPanel.runName(v1) == "inspect:arith_agent · v1.eval")
        #expect(series(v1) == series(v2))
        #expect(series(v1) != series(inspect("v3.eval", model: "anthropic/claude-sonnet-4")))
        #expect(series(v1) != series(inspect("v1.eval", model: "openai/gpt-4o-mini", task: "b")))
        #expect(series(inspect("a.eval", model: nil)) != series(inspect("b.eval", model: nil)))
        let a = Self.run(1, suite: "qa", passes: { _ in true }).listing.run
        var b = Self.run(2, suite: "qa", passes: { _ in false }).listing.run
        #expect(EvalsPanel.runName(a) == "qa" && series(a) == series(b))
        b.datasetHash = String(repeating: "ef", count: 32)
        #expect(series(a) != series(b))
    }

    /// Run `id`: item i passes when `passes(i)`; answers link to traces 10+i.
    static func run(_ id: Int64, suite: String, passes: (Int) -> Bool) -> EvalService.RunDetail {
        var record = EvalRunRecord(
            suite: suite, suiteFile: "evals/\(suite).yaml", suiteHash: String(repeating: "ab", count: 32),
            datasetHash: String(repeating: "cd", count: 32), targetKind: "agent",
            targetJSON: #"{"kind":"agent","provider":"offline","max_steps":8}"#,
            scorersJSON: #"["contains","token_f1"]"#,
            epochs: 1, planned: items.count, status: "complete", loupeVersion: "0.1.0", gitRevision: "abc1234",
            startedAt: Date(timeIntervalSince1970: 1_795_000_000 + Double(id) * 60))
        record.id = id
        var rows: [EvalService.ResultRow] = []
        var scored: [ScoredRow] = []
        for (index, item) in items.enumerated() {
            let pass = passes(index)
            let output = pass ? "The answer is \(item.target)." : "I could not find it."
            let f1 = TextNormalizer.tokenF1(output, item.target)
            let result = EvalResultRecord(
                runID: id, itemID: item.id, epoch: 1, input: item.input, targetsJSON: "[\"\(item.target)\"]",
                output: output, error: nil, latencyMs: Double(100 + 37 * index), traceID: Int64(10 * Int(id) + index),
                finishedAt: Date(timeIntervalSince1970: 1_795_000_000))
            let scores = [
                EvalScoreRecord(
                    runID: id, itemID: item.id, epoch: 1, scorer: "contains", value: pass ? 1 : 0, passed: pass,
                    explanation: pass ? "contains \"\(item.target)\"" : "contains none of \"\(item.target)\""),
                EvalScoreRecord(
                    runID: id, itemID: item.id, epoch: 1, scorer: "token_f1", value: f1, passed: nil,
                    explanation: String(format: "token F1 %.3f against ", f1) + "\"\(item.target)\""),
            ]
            rows.append(EvalService.ResultRow(result: result, scores: scores))
            scored.append(
                ScoredRow(
                    itemID: item.id, epoch: 1, values: ["contains": pass ? 1 : 0, "token_f1": f1],
                    passed: ["contains": pass], latencySeconds: Double(100 + 37 * index) / 1000))
        }
        let summary = RunSummary(rows: scored, scorers: ["contains", "token_f1"])
        let listing = EvalService.RunListing(
            run: record, scorers: ["contains", "token_f1"], summary: summary, answered: items.count)
        return EvalService.RunDetail(listing: listing, rows: rows)
    }

    static let baseline = run(1, suite: "qa-offline") { $0 % 3 != 2 }
    static let candidate = run(2, suite: "qa-offline") { $0 != 1 }

    static func scored(_ detail: EvalService.RunDetail) -> [ScoredRow] {
        detail.rows.map { row in
            ScoredRow(
                itemID: row.result.itemID, epoch: 1,
                values: Dictionary(uniqueKeysWithValues: row.scores.map { ($0.scorer, $0.value) }),
                passed: Dictionary(uniqueKeysWithValues: row.scores.compactMap { s in s.passed.map { (s.scorer, $0) } })
            )
        }
    }

    func loaded(width: Int = 120, height: Int = 36) -> AppState {
        var state = AppFixtures.state(width: width, height: height)
        AppFixtures.press([.character("5")], on: &state)
        _ = state.update(
            AppFixtures.answer(
                EvalsPanel.LoadOverview(),
                EvalsOverview(
                    runs: [Self.baseline.listing, Self.candidate.listing],
                    suites: ["evals/qa-offline.yaml", "evals/new.yaml"])))
        return state
    }

    private func check(_ state: AppState, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        expectPanel(state, matchesGolden: name, sourceLocation: sourceLocation)
    }

    @Test func theRunsListShowsHeadlinesTrendsAndTheSelectedRunsStatistics() {
        let state = loaded()
        check(state, "evals-runs-120x36")
        let text = state.render().text()
        // Newest first; the suite not run yet last; a sparkline over the suite's two runs.
        #expect(text.contains("new.yaml") && text.contains("not run"))
        #expect(text.contains("clustered") == false && text.contains("wilson n 6"))
    }

    /// A labelled run is listed by its label before its suite, and its provenance names it.
    /// Where the run's statistics do not fit, lines above give way with a count; the keys that
    /// name baseline and compare stay on the box's last row.
    @Test func aShortWindowKeepsTheKeysAndCountsWhatItCut() {
        let state = loaded(width: 80, height: 14)
        let text = state.render().text()
        #expect(text.contains("b baseline") && text.contains("c compare"), "\(text)")
        #expect(text.contains("more lines: a taller window shows them"), "\(text)")
    }

    @Test func aLabelledRunIsListedByItsLabel() {
        var state = AppFixtures.state(width: 120, height: 36)
        AppFixtures.press([.character("5")], on: &state)
        var labelled = Self.candidate.listing
        labelled.label = "prompt v2"
        _ = state.update(
            AppFixtures.answer(
                EvalsPanel.LoadOverview(), EvalsOverview(runs: [Self.baseline.listing, labelled], suites: [])))
        let lines = state.render().text().split(separator: "\n")
        #expect(lines.contains { $0.contains("prompt v2 · qa-offline") })
        #expect(lines.contains { $0.contains("run 2 “prompt v2” · complete") })
    }

    /// Another process's commits (a worker storing answers) read the runs again, and the open
    /// run with them, one read at a time however many arrive.
    @Test func anotherProcesssCommitsReadTheRunsAgainOneReadAtATime() {
        var state = loaded()
        AppFixtures.press([.enter], on: &state)
        _ = state.update(AppFixtures.answer(EvalsPanel.LoadRun(id: 2), Self.candidate))
        let first = state.update(.workspaceChanged)
        #expect(first.contains(.ask(EvalsPanel.LoadOverview())) && first.contains(.ask(EvalsPanel.LoadRun(id: 2))))
        let meanwhile = state.update(.workspaceChanged)
        #expect(!meanwhile.contains(.ask(EvalsPanel.LoadOverview())))
        let overview = EvalsOverview(runs: [Self.baseline.listing, Self.candidate.listing], suites: [])
        // The change that came meanwhile is read once the first read is in.
        #expect(
            state.update(AppFixtures.answer(EvalsPanel.LoadOverview(), overview)).contains(
                .ask(EvalsPanel.LoadOverview())))
        #expect(
            !state.update(AppFixtures.answer(EvalsPanel.LoadOverview(), overview)).contains(
                .ask(EvalsPanel.LoadOverview())))
    }

    @Test func aNarrowTerminalKeepsTheSuiteName() {
        let text = loaded(width: 80, height: 24).render().text()
        #expect(text.contains("qa-offline") && text.contains("0.833"))
    }

    @Test func answersFilterAndTheDrillDownShowEveryVerdict() {
        var state = loaded()
        let effects = AppFixtures.press([.enter], on: &state)
        #expect(effects == [.ask(EvalsPanel.LoadRun(id: 2))])
        _ = state.update(AppFixtures.answer(EvalsPanel.LoadRun(id: 2), Self.candidate))
        check(state, "evals-answers-120x36")
        AppFixtures.press([.character("f")], on: &state)
        #expect(state.render().text().contains("1 of 6 answers  filter failed"))
        AppFixtures.press([.enter], on: &state)
        check(state, "evals-answer-120x36")
        // t jumps to the answer's trace in the Traces panel; ctrl+o comes back.
        let jump = AppFixtures.press([.character("t")], on: &state)
        #expect(state.focusedPanelID == .traces)
        #expect(jump.contains(.ask(TracesPanel.OpenTrace(id: 21))))
        AppFixtures.press([.control("o")], on: &state)
        #expect(state.focusedPanelID == .evals && state.render().text().contains("Verdicts"))
    }

    /// d puts the answer's `dataset add` on the : line, its expected output there to edit.
    @Test func dKeepsTheAnswerAsADatasetItemToEditAndRun() {
        var state = loaded()
        AppFixtures.press([.enter], on: &state)
        _ = state.update(AppFixtures.answer(EvalsPanel.LoadRun(id: 2), Self.candidate))
        AppFixtures.press([.down], on: &state)
        AppFixtures.press([.character("d")], on: &state)
        #expect(state.mode == .commandLine)
        #expect(
            state.commandLine.text
                == "dataset add kept-qa-offline.jsonl --from answer:2/q2/1 --expected 1400 "
                + "--suite kept-qa-offline.yaml --like evals/qa-offline.yaml")
        // From the open answer too; a target with quotes and a backslash is quoted for the line.
        AppFixtures.press([.escape], on: &state)
        #expect(EvalsPanel.quote(#"say "hi" \ bye"#) == #""say \"hi\" \\ bye""#)
        #expect(EvalsPanel.quote("") == #""""#)
    }

    /// A run compared with an identical one shows its MDE as "—" and says why, not "0.000".
    @Test(arguments: [120, 80])
    func identicalRunsShowNoMinimumDetectableEffect(width: Int) throws {
        var state = loaded(width: width, height: width == 80 ? 24 : 36)
        AppFixtures.press([.down, .character("b"), .up], on: &state)
        _ = AppFixtures.press([.character("c")], on: &state)
        let metrics = RunComparison(
            a: Self.scored(Self.baseline), b: Self.scored(Self.baseline), scorers: ["contains", "token_f1"])
        _ = state.update(
            AppFixtures.answer(
                EvalsPanel.CompareRuns(baseline: 1, run: 2),
                EvalService.Comparison(
                    a: Self.baseline.listing, b: Self.candidate.listing, metrics: metrics,
                    deltasByScorer: ["contains": [], "token_f1": []], warnings: [])))
        let text = state.render().text()
        // Neither a zero-width interval nor an MDE of 0: both "—", with the reason below.
        let rows = text.split(separator: "\n").filter { $0.contains("+0.000") && $0.contains(" —") }
        #expect(
            rows.count == 2 && rows.allSatisfy { !$0.contains("[+0.000") && !$0.contains("0.000  ") }, "\(text)")
        // Each row names its scorer, at 80 columns too (other columns give way).
        #expect(rows.first?.contains("contains") == true && rows.last?.contains("token_f1") == true, "\(text)")
        #expect(
            text.contains("CI and MDE —: identical scores on every item: the differences have no spread"), "\(text)")
    }

    @Test func aBaselineAndARunAreCompared() throws {
        var state = loaded()
        // Rows: run 2, run 1, the unrun suite. Mark run 1, compare run 2 with it.
        AppFixtures.press([.down, .character("b")], on: &state)
        // c on the baseline itself says what to do, not that there is no baseline.
        #expect(AppFixtures.press([.character("c")], on: &state).isEmpty)
        #expect(state.message?.text == "run 1 is the baseline: select another run and press c to compare it")
        AppFixtures.press([.up], on: &state)
        let effects = AppFixtures.press([.character("c")], on: &state)
        #expect(
            effects == [.ask(EvalsPanel.CompareRuns(baseline: 1, run: 2)), .ask(EvalsPanel.LoadBaselineRun(id: 1))])
        let metrics = RunComparison(
            a: Self.scored(Self.baseline), b: Self.scored(Self.candidate), scorers: ["contains", "token_f1"])
        let deltas = Self.items.indices.compactMap { index -> EvalService.ItemDelta? in
            let a: Double = index % 3 != 2 ? 1 : 0
            let b: Double = index != 1 ? 1 : 0
            return a == b
                ? nil : EvalService.ItemDelta(itemID: Self.items[index].id, input: Self.items[index].input, a: a, b: b)
        }.sorted { ($0.delta, $0.itemID) < ($1.delta, $1.itemID) }
        _ = state.update(
            AppFixtures.answer(
                EvalsPanel.CompareRuns(baseline: 1, run: 2),
                EvalService.Comparison(
                    a: Self.baseline.listing, b: Self.candidate.listing, metrics: metrics,
                    deltasByScorer: ["contains": deltas, "token_f1": Array(deltas.prefix(1))], warnings: [])))
        check(state, "evals-compare-120x36")
        #expect(state.render().text().contains("2 fixed") && state.render().text().contains("1 regressed"))
        // The columns say which run is which, and a legend names the runs, as promptfoo heads its
        // columns with what ran; the interval and the test are named beneath.
        let compared = state.render().text()
        #expect(compared.contains("A·run 1") && compared.contains("B·run 2") && compared.contains("run 1 → run 2"))
        #expect(compared.contains("A run 1 (baseline) ") && compared.contains("   B run 2 "), "\(compared)")
        #expect(compared.contains("pass/fail: Tango score CI, asymptotic McNemar p · scores: t CI, paired t p"))
        // s lists another scorer's changed items, and back.
        AppFixtures.press([.character("s")], on: &state)
        #expect((state.panels[state.focusedPanel] as? EvalsPanel)?.changedItems == Array(deltas.prefix(1)))
        #expect(state.render().text().contains("token_f1: 0 fixed, 1 regressed"))
        #expect(state.render().text().contains("▸ token_f1"))
        AppFixtures.press([.character("s")], on: &state)
        #expect(state.render().text().contains("contains: 2 fixed, 1 regressed"))

        // A changed item opens with A's answer beside B's.
        _ = state.update(AppFixtures.answer(EvalsPanel.LoadBaselineRun(id: 1), Self.baseline))
        let opened = AppFixtures.press([.enter], on: &state)
        #expect(opened == [.ask(EvalsPanel.LoadRun(id: 2))])
        _ = state.update(AppFixtures.answer(EvalsPanel.LoadRun(id: 2), Self.candidate))
        let text = state.render().text()
        #expect(text.contains("A · run 1 (baseline)") && text.contains("B · run 2"))
        let item = try #require((state.panels[state.focusedPanel] as? EvalsPanel)?.openAnswer?.result.itemID)
        let index = try #require(Self.items.firstIndex { $0.id == item })
        let a = Self.baseline.rows[index].result.output ?? ""
        let b = Self.candidate.rows[index].result.output ?? ""
        #expect(a != b && text.contains(a) && text.contains(b))
    }

    /// A mean with an interval that is not even about it is shown as [low, high], not ±.
    @Test func asymmetricIntervalsAreShownAsTheirEnds() {
        #expect(
            EvalsPanel.intervalText(Interval(estimate: 0.5, lower: 0.45, upper: 0.55, method: "t", n: 100)) == "±0.050")
        #expect(
            EvalsPanel.intervalText(Interval(estimate: 0.833, lower: 0.436, upper: 0.970, method: "wilson", n: 6))
                == "[0.436, 0.970]")
    }

    @Test func runningASuiteIsAJobAndReRunningFailedNamesTheRun() {
        var state = loaded()
        let run = AppFixtures.press([.character("r")], on: &state)
        #expect(
            run.contains {
                if case .runCommand(_, let line) = $0 { line == "eval run evals/qa-offline.yaml" } else { false }
            })
        let rerun = AppFixtures.press([.character("R")], on: &state)
        #expect(
            rerun.contains {
                if case .runCommand(_, let line) = $0 {
                    line == "eval run evals/qa-offline.yaml --only-failed 2"
                } else {
                    false
                }
            })
    }

    /// A run started from another directory recorded its suite relative to it: the suite is
    /// still known as run, not listed again as "not run".
    @Test func aSuiteRecordedRelativeToAnotherDirectoryCountsAsRun() {
        #expect(EvalsPanel.isSameSuite("sample-data/evals/a.yaml", "/repo/sample-data/evals/a.yaml"))
        #expect(EvalsPanel.isSameSuite("../sample-data/evals/a.yaml", "/repo/sample-data/evals/a.yaml"))
        #expect(EvalsPanel.isSameSuite("./evals/a.yaml", "evals/a.yaml"))
        #expect(!EvalsPanel.isSameSuite("evals/a.yaml", "/repo/sample-data/evals/b.yaml"))
        #expect(!EvalsPanel.isSameSuite("evals/a.yaml", "/repo/other-evals/a.yaml"))
        #expect(!EvalsPanel.isSameSuite("/elsewhere/evals/a.yaml", "/repo/evals/a.yaml"))
    }

    /// `enter` on a suite never run does not start a run (only `r` does), `g` goes to the top
    /// and `ctrl+r` reloads, and the selection stays on its row (or follows its suite to the new
    /// run) when a run is added above it.
    @Test func enterDoesNotRunASuiteAndTheSelectionFollowsItsRow() {
        var state = loaded()
        AppFixtures.press([.character("G")], on: &state)
        #expect(state.render().text().contains("new.yaml"))
        let entered = AppFixtures.press([.enter], on: &state)
        #expect(!entered.contains { if case .runCommand = $0 { true } else { false } })
        #expect(state.message?.text == "new.yaml has not been run: r runs it")
        #expect(AppFixtures.press([.character("g")], on: &state).isEmpty)
        #expect(AppFixtures.press([.control("r")], on: &state) == [.ask(EvalsPanel.LoadOverview())])

        // On run 1 (second row), a new run 3 is added at the top: the cursor stays on run 1.
        AppFixtures.press([.character("j")], on: &state)
        let third = Self.run(3, suite: "qa-offline") { _ in true }
        _ = state.update(
            AppFixtures.answer(
                EvalsPanel.LoadOverview(),
                EvalsOverview(
                    runs: [Self.baseline.listing, Self.candidate.listing, third.listing],
                    suites: ["evals/qa-offline.yaml", "evals/new.yaml"])))
        let panel = state.panels[state.focusedPanel] as? EvalsPanel
        #expect(panel?.selectedRun?.id == 1)

        // On the suite row, its first run appears: the cursor follows the suite to it.
        AppFixtures.press([.character("G")], on: &state)
        var fresh = Self.run(4, suite: "new") { _ in false }.listing
        fresh.run.suiteFile = "evals/new.yaml"
        _ = state.update(
            AppFixtures.answer(
                EvalsPanel.LoadOverview(),
                EvalsOverview(
                    runs: [Self.baseline.listing, Self.candidate.listing, third.listing, fresh],
                    suites: ["evals/qa-offline.yaml", "evals/new.yaml"])))
        #expect((state.panels[state.focusedPanel] as? EvalsPanel)?.selectedRun?.id == 4)
    }
}

@Suite struct EvalsStopReasonTests {

    /// An answer whose stored targets do not read back says so at the top of the drill-down,
    /// naming its run, item and column, instead of showing no Target section.
    @Test func anUnreadableTargetIsNamedInTheDrillDown() {
        let result = EvalResultRecord(
            runID: 7, itemID: "q0", epoch: 2, input: "what is 2 + 3?", targetsJSON: #"["5""#, output: "5",
            error: nil, latencyMs: 300, metadataJSON: "{}", finishedAt: Date(timeIntervalSince1970: 0))
        let row = EvalService.ResultRow(result: result, scores: [])
        let text = EvalsPanel.answerLines(row, theme: .builtInDefault).map { $0.map(\.text).joined() }
        #expect(
            text.contains { $0.hasPrefix("⚠ unreadable targets (run 7, item q0 epoch 2, column targets_json): ") })
        #expect(!text.contains("Target"))
    }
    /// An empty answer from an agent that ran out of steps says so in the table and the drill-down.
    @Test func anEmptyAnswerShowsWhyTheTargetStopped() {
        let result = EvalResultRecord(
            runID: 1, itemID: "q0", epoch: 1, input: "what is 2 + 3?", targetsJSON: #"["5"]"#, output: "", error: nil,
            latencyMs: 300, metadataJSON: #"{"line":1,"loupe_stop_reason":"step limit 1 reached"}"#,
            finishedAt: Date(timeIntervalSince1970: 1_795_000_000))
        let row = EvalService.ResultRow(result: result, scores: [])
        #expect(row.stopReason == "step limit 1 reached")
        #expect(row.shownOutput == "∅ step limit 1 reached")
        let text = EvalsPanel.answerLines(row, theme: .builtInDefault).map { $0.map(\.text).joined() }
        #expect(text.contains("  (empty)"))
        #expect(text.contains("  no final answer: step limit 1 reached"))
        // Metadata without a stop reason is not parsed and shows nothing.
        let plain = EvalService.ResultRow(
            result: EvalResultRecord(
                runID: 1, itemID: "q1", epoch: 1, input: "x", targetsJSON: "[]", output: "5", error: nil,
                latencyMs: 1, metadataJSON: #"{"line":2}"#, finishedAt: Date(timeIntervalSince1970: 0)),
            scores: [])
        #expect(plain.stopReason == nil && plain.shownOutput == "5")
        // A dataset item's own `stop_reason` metadata is not the target's.
        let own = EvalService.ResultRow(
            result: EvalResultRecord(
                runID: 1, itemID: "q2", epoch: 1, input: "x", targetsJSON: "[]", output: "5", error: nil,
                latencyMs: 1, metadataJSON: #"{"line":3,"stop_reason":"from the dataset"}"#,
                finishedAt: Date(timeIntervalSince1970: 0)),
            scores: [])
        #expect(own.stopReason == nil)
    }
}
