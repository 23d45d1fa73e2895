import Foundation
import LoupePostgres
import LoupeStore
import LoupeTestSupport
import Synchronization
import Testing

/// The eval tables and the workers' queue, written once: every test runs on a SQLite workspace
/// and on a real PostgreSQL server.
@Suite struct EvalTablesTests {
    typealias Backend = StoreBackend

    private func tables(_ backend: Backend, _ label: String) throws -> EvalTables {
        EvalTables(try backend.database("evals_\(label)"))
    }

    private func run(_ planned: Int) -> EvalRunRecord {
        var run = EvalRunRecord(
            suite: "capitals", suiteFile: "/suites/capitals.yaml", suiteHash: "s", datasetHash: "d",
            targetKind: "model",
            targetJSON: "{}", scorersJSON: "[\"match\"]", epochs: 1, planned: planned, loupeVersion: "test",
            gitRevision: nil)
        run.suiteText = "name: capitals"
        return run
    }

    private func items(_ count: Int) -> [EvalWorkItem] {
        (0..<count).map { EvalWorkItem(runID: 0, itemID: "q\($0)", epoch: 1, position: $0, itemJSON: "{\"n\":\($0)}") }
    }

    private func answer(_ run: Int64, _ item: String, output: String = "Paris") -> (EvalResultRecord, [EvalScoreRecord])
    {
        (
            EvalResultRecord(
                runID: run, itemID: item, epoch: 1, input: "capital of France?", targetsJSON: "[\"Paris\"]",
                output: output, error: nil, latencyMs: 12.5),
            [
                EvalScoreRecord(
                    runID: run, itemID: item, epoch: 1, scorer: "match", value: output == "Paris" ? 1 : 0,
                    passed: output == "Paris", explanation: "")
            ]
        )
    }

    @Test(arguments: Backend.allCases) func aQueuedRunKeepsItsItemsAndSuiteAndReadsBackAsWritten(_ backend: Backend)
        throws
    {
        let evals = try tables(backend, "queue")
        let id = try evals.queueEvalRun(run(3), items: items(3))
        let stored = try #require(try evals.evalRun(id))
        #expect(stored.suiteText == "name: capitals" && stored.planned == 3 && stored.status == "running")
        #expect(stored.startedAt.timeIntervalSinceNow > -60)
        #expect(try evals.evalWorkProgress(run: id) == EvalWorkProgress(total: 3, done: 0, inFlight: 0))
        #expect(try evals.openWorkedRuns() == [id])
    }

    /// Workers each get a different item, in dataset order, until none is left unleased.
    @Test(arguments: Backend.allCases) func concurrentWorkersLeaseEachItemOnce(_ backend: Backend) throws {
        let evals = try tables(backend, "lease")
        let id = try evals.queueEvalRun(run(40), items: items(40))
        let leased = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            while let item = try? evals.leaseEvalWork(run: id, worker: "w\(worker)", leaseSeconds: 60) {
                leased.withLock { $0.append(item.itemID) }
            }
        }
        let all = leased.withLock { $0 }
        #expect(all.count == 40)
        #expect(Set(all).count == 40)
        #expect(try evals.leaseEvalWork(run: id, worker: "late", leaseSeconds: 60) == nil)
        #expect(try evals.evalWorkProgress(run: id).inFlight == 40)
        let workers = try evals.evalWorkers(run: id)
        #expect(workers.map(\.inFlight).reduce(0, +) == 40 && workers.allSatisfy { $0.answered == 0 })
    }

    /// A killed worker's lease runs out and its item goes to another; a live worker renews its own.
    @Test(arguments: Backend.allCases) func anExpiredLeaseIsTakenOverAndARenewedOneIsNot(_ backend: Backend) throws {
        let evals = try tables(backend, "expiry")
        let id = try evals.queueEvalRun(run(2), items: items(2))
        let first = try #require(try evals.leaseEvalWork(run: id, worker: "dead", leaseSeconds: 0.3))
        let second = try #require(try evals.leaseEvalWork(run: id, worker: "alive", leaseSeconds: 0.3))
        #expect(first.itemID == "q0" && second.itemID == "q1" && first.attempts == 1)
        #expect(try evals.leaseEvalWork(run: id, worker: "other", leaseSeconds: 60) == nil)
        usleep(150_000)
        #expect(try evals.renewEvalLeases(worker: "alive", leaseSeconds: 60) == 1)
        usleep(300_000)
        let taken = try #require(try evals.leaseEvalWork(run: id, worker: "other", leaseSeconds: 60))
        #expect(taken.itemID == "q0" && taken.attempts == 2 && taken.worker == "other")
        #expect(try evals.leaseEvalWork(run: id, worker: "other", leaseSeconds: 60) == nil)
        // Given back on a clean stop: leased again at once.
        try evals.releaseEvalLeases(worker: "alive")
        #expect(try evals.leaseEvalWork(run: id, worker: "other", leaseSeconds: 60)?.itemID == "q1")
    }

    /// Two workers answering one item (the first's lease ran out while it worked): the first answer
    /// stored wins, the second is dropped with its scores, and the item is done once.
    @Test(arguments: Backend.allCases) func theFirstAnswerStoredWinsAndNothingIsScoredTwice(_ backend: Backend) throws {
        let evals = try tables(backend, "first")
        let id = try evals.queueEvalRun(run(2), items: items(2))
        let (result, scores) = answer(id, "q0")
        #expect(try evals.recordEvalResult(result, scores: scores, worker: "a"))
        let (late, lateScores) = answer(id, "q0", output: "Lyon")
        #expect(try !evals.recordEvalResult(late, scores: lateScores, worker: "b"))
        #expect(try evals.evalResults(run: id).map(\.output) == ["Paris"])
        #expect(try evals.evalScores(run: id).count == 1)
        #expect(try evals.answeredEvalKeys(run: id) == [EvalItemKey(itemID: "q0", epoch: 1)])
        #expect(try evals.evalWorkProgress(run: id) == EvalWorkProgress(total: 2, done: 1, inFlight: 0))
        // Done items are never leased again, and the run is not complete while one is open.
        #expect(try evals.leaseEvalWork(run: id, worker: "c", leaseSeconds: 60)?.itemID == "q1")
        #expect(try !evals.completeWorkedRun(id, summaryJSON: "{}"))
        let (last, lastScores) = answer(id, "q1")
        try evals.recordEvalResult(last, scores: lastScores, worker: "c")
        #expect(try evals.openWorkedRuns().isEmpty)
        let workers = try evals.evalWorkers(run: id)
        #expect(Dictionary(uniqueKeysWithValues: workers.map { ($0.worker, $0.answered) }) == ["a": 1, "c": 1])
    }

    /// A worker that stalled past its lease while its item went to another stores neither its
    /// model call's trace nor its answer; the trace of the answer made again replaces the one
    /// the stalled worker stored before it stalled, so no attempt leaves a trace behind.
    @Test(arguments: Backend.allCases) func aStalledWorkersTraceAndAnswerGiveWayToTheNewHolder(_ backend: Backend)
        throws
    {
        let evals = try tables(backend, "stalled")
        let traces = TraceTables(evals.database)
        let id = try evals.queueEvalRun(run(1), items: items(1))
        #expect(try evals.leaseEvalWork(run: id, worker: "a", leaseSeconds: 0.2)?.itemID == "q0")
        // A stores its call's trace, then stalls past its lease; B takes the item.
        let first = try #require(
            try evals.importWorkTrace(
                WorkspaceTracesTests.trace("eval-\(id)-q0-1", hash: "a", answer: "Lyon"), run: id, itemID: "q0",
                epoch: 1, worker: "a"))
        usleep(400_000)
        #expect(try evals.leaseEvalWork(run: id, worker: "b", leaseSeconds: 60)?.itemID == "q0")
        // A wakes: its second call's trace and its answer are refused, nothing is stored.
        #expect(
            try evals.importWorkTrace(
                WorkspaceTracesTests.trace("eval-\(id)-q0-1", hash: "a2", answer: "Nice"), run: id, itemID: "q0",
                epoch: 1, worker: "a") == nil)
        let (late, lateScores) = answer(id, "q0", output: "Lyon")
        #expect(try !evals.recordEvalResult(late, scores: lateScores, worker: "a"))
        // B's trace takes the place (and the id) of A's, and its answer is the one stored.
        let second = try evals.importWorkTrace(
            WorkspaceTracesTests.trace("eval-\(id)-q0-1", hash: "b", answer: "Paris"), run: id, itemID: "q0",
            epoch: 1, worker: "b")
        #expect(second == first)
        let (result, scores) = answer(id, "q0")
        #expect(try evals.recordEvalResult(result, scores: scores, worker: "b"))
        #expect(try evals.evalResults(run: id).map(\.output) == ["Paris"])
        let summaries = try traces.traceSummaries()
        #expect(summaries.map(\.externalID) == ["eval-\(id)-q0-1"])
        #expect(try traces.traceScores(trace: first).map(\.answer) == ["Paris"])
    }

    /// Several workers finishing at once: exactly one marks the run complete.
    @Test(arguments: Backend.allCases) func exactlyOneWorkerCompletesARun(_ backend: Backend) throws {
        let evals = try tables(backend, "complete")
        let id = try evals.queueEvalRun(run(1), items: items(1))
        let (result, scores) = answer(id, "q0")
        try evals.recordEvalResult(result, scores: scores, worker: "a")
        let wins = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            if (try? evals.completeWorkedRun(id, summaryJSON: "{\"rows\":1}")) == true {
                wins.add(1, ordering: .relaxed)
            }
        }
        #expect(wins.load(ordering: .relaxed) == 1)
        let stored = try #require(try evals.evalRun(id))
        #expect(stored.status == "complete" && stored.summaryJSON == "{\"rows\":1}" && stored.endedAt != nil)
        // A finished run's items are not offered to workers that take any run's.
        #expect(try evals.leaseEvalWork(run: nil, worker: "x", leaseSeconds: 60) == nil)
    }
}
