import Foundation
import LoupeStore
import Testing

/// Eval runs, their answers and scores as `eval run`, resumes and Inspect imports store them.
@Suite struct WorkspaceEvalsTests {
    static let startedAt = Date(timeIntervalSince1970: 1_800_000_000)

    static func run(source: String = "loupe", key: String? = nil) -> EvalRunRecord {
        EvalRunRecord(
            suite: "arith", suiteFile: "arith.yaml", suiteHash: "s", datasetHash: "d", targetKind: "agent",
            targetJSON: "{}", scorersJSON: #"["exact"]"#, epochs: 1, planned: 2, source: source, sourceKey: key,
            loupeVersion: "test", gitRevision: nil, startedAt: startedAt)
    }

    static func answer(run: Int64, _ item: String, output: String, value: Double) -> (
        EvalResultRecord, [EvalScoreRecord]
    ) {
        (
            EvalResultRecord(
                runID: run, itemID: item, epoch: 1, input: "question \(item)", targetsJSON: #"["4"]"#, output: output,
                error: nil, latencyMs: 12.5, finishedAt: startedAt),
            [
                EvalScoreRecord(
                    runID: run, itemID: item, epoch: 1, scorer: "exact", value: value, passed: value == 1,
                    explanation: "")
            ]
        )
    }

    @Test func aRunIsCreatedRunningAndFinishedWithItsSummary() throws {
        let workspace = try TemporaryWorkspace.make("evals")
        let id = try workspace.evals.createEvalRun(Self.run())
        let created = try #require(try workspace.evals.evalRun(id))
        #expect(created.id == id && created.status == "running" && created.endedAt == nil)
        #expect(created.startedAt == Self.startedAt && created.scorersJSON == #"["exact"]"#)
        #expect(try workspace.evals.evalRun(id + 1) == nil)

        let end = Self.startedAt.addingTimeInterval(60)
        try workspace.evals.finishEvalRun(id, status: "complete", summaryJSON: #"{"rows":2}"#, at: end)
        let finished = try #require(try workspace.evals.evalRun(id))
        #expect(finished.status == "complete" && finished.endedAt == end && finished.summaryJSON == #"{"rows":2}"#)

        // Resuming sets it running again, without an end.
        try workspace.evals.setEvalRunStatus(id, status: "running")
        let resumed = try #require(try workspace.evals.evalRun(id))
        #expect(resumed.status == "running" && resumed.endedAt == nil)
        #expect(try workspace.evals.evalRuns().map(\.id) == [id])
    }

    @Test func answersAndScoresReadBackInTheOrderTheyWereStored() throws {
        let workspace = try TemporaryWorkspace.make("evals")
        let id = try workspace.evals.createEvalRun(Self.run())
        let (first, firstScores) = Self.answer(run: id, "q2", output: "4", value: 1)
        try workspace.evals.recordEvalResult(first, scores: firstScores)
        try workspace.evals.recordEvalResults([Self.answer(run: id, "q1", output: "5", value: 0)])

        let results = try workspace.evals.evalResults(run: id)
        #expect(results.map(\.itemID) == ["q2", "q1"])
        #expect(results[0] == first)
        let scores = try workspace.evals.evalScores(run: id)
        #expect(Set(scores.map(\.itemID)) == ["q1", "q2"])
        #expect(scores.first { $0.itemID == "q1" }?.passed == false)
        // What a resumed run skips.
        #expect(
            try workspace.evals.answeredEvalKeys(run: id) == [
                EvalItemKey(itemID: "q1", epoch: 1), EvalItemKey(itemID: "q2", epoch: 1),
            ])
        #expect(try workspace.evals.evalResults(run: id + 1).isEmpty)
    }

    @Test func anAnswerIsStoredWithItsScoresOrNotAtAll() throws {
        let workspace = try TemporaryWorkspace.make("evals")
        let id = try workspace.evals.createEvalRun(Self.run())
        // The same scorer twice for one answer breaks the scores' primary key after the answer went in.
        func twiceScored(_ item: String) -> (EvalResultRecord, [EvalScoreRecord]) {
            let (result, scores) = Self.answer(run: id, item, output: "4", value: 1)
            return (result, scores + scores)
        }
        let (result, scores) = twiceScored("q1")
        #expect(throws: WorkspaceError.self) { try workspace.evals.recordEvalResult(result, scores: scores) }
        #expect(try workspace.evals.evalResults(run: id).isEmpty)
        #expect(try workspace.evals.answeredEvalKeys(run: id).isEmpty)

        // A batch with one bad answer stores none of the batch.
        #expect(throws: WorkspaceError.self) {
            try workspace.evals.recordEvalResults([
                Self.answer(run: id, "q1", output: "4", value: 1), twiceScored("q2"),
            ])
        }
        #expect(try workspace.evals.evalResults(run: id).isEmpty)
    }

    @Test func importedRunsAreFoundBySourceAndKeyOnce() throws {
        let workspace = try TemporaryWorkspace.make("evals")
        _ = try workspace.evals.createEvalRun(Self.run())
        let imported = try workspace.evals.createEvalRun(Self.run(source: "inspect", key: "a.eval#arith"))
        #expect(try workspace.evals.evalRun(source: "inspect", key: "a.eval#arith")?.id == imported)
        #expect(try workspace.evals.evalRun(source: "inspect", key: "b.eval#arith") == nil)
        #expect(try workspace.evals.evalRun(source: "loupe", key: "a.eval#arith") == nil)
        // One run per log and task: a second import of the same key is refused.
        #expect(throws: WorkspaceError.self) {
            try workspace.evals.createEvalRun(Self.run(source: "inspect", key: "a.eval#arith"))
        }
        #expect(try workspace.evals.evalRuns().count == 2)
    }

    @Test func theTracesLinkedFromASourcesAnswersAreListed() throws {
        let workspace = try TemporaryWorkspace.make("evals")
        let traces = try workspace.traces.importTraces([
            WorkspaceTracesTests.trace("t1"), WorkspaceTracesTests.trace("t2"),
        ]).ids
        let inspect = try workspace.evals.createEvalRun(Self.run(source: "inspect", key: "a.eval#arith"))
        let local = try workspace.evals.createEvalRun(Self.run())
        var linked = Self.answer(run: inspect, "q1", output: "4", value: 1)
        linked.0.traceID = traces[0]
        var other = Self.answer(run: local, "q1", output: "4", value: 1)
        other.0.traceID = traces[1]
        try workspace.evals.recordEvalResults([linked, Self.answer(run: inspect, "q2", output: "5", value: 0), other])
        #expect(try workspace.evals.evalTraceIDs(source: "inspect") == [traces[0]])
        #expect(try workspace.evals.evalTraceIDs(source: "loupe") == [traces[1]])
        #expect(try workspace.evals.evalTraceIDs(source: "nobody").isEmpty)
    }
}
