import Foundation
import LoupeBase
import LoupeEvals
import LoupeRetrieval
import LoupeStore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Runs answered by workers: `eval run SUITE --workers` queues a run's items in the workspace,
/// and any number of `eval worker` processes, on any machines that reach it, lease them, answer,
/// score and store each answer in its own transaction.
extension EvalService {
    package struct QueueOutcome: Sendable {
        package var runID: Int64
        package var queued: Int
        package var unjudged: [String]
    }

    /// Creates a run of `loaded` and queues its items × epochs for workers, in one transaction.
    package func queue(_ loaded: LoadedSuite, options: RunOptions = RunOptions()) throws -> QueueOutcome {
        if options.onlyFailed != nil { throw EvalError("--only-failed re-runs on this machine: leave out --workers") }
        let epochs = options.epochs ?? loaded.suite.epochs
        var items = loaded.items
        if let limit = options.limit { items = Array(items.prefix(limit)) }
        var record = try newRun(loaded, epochs: epochs, planned: items.count * epochs)
        record.suiteText = try Self.storableSuiteText(loaded)
        var work: [EvalWorkItem] = []
        for (index, item) in items.enumerated() {
            let json = Self.itemJSON(item)
            for epoch in 1...epochs {
                work.append(
                    EvalWorkItem(
                        runID: 0, itemID: item.id, epoch: epoch, position: index * epochs + epoch - 1, itemJSON: json))
            }
        }
        let runID = try evals.queueEvalRun(record, items: work)
        return QueueOutcome(runID: runID, queued: work.count, unjudged: loaded.unjudged)
    }

    /// An item as a work item carries it.
    static func itemJSON(_ item: EvalItem) -> String {
        var object: [String: JSONValue] = [
            "id": .string(item.id), "input": .string(item.input), "targets": .array(item.targets.map { .string($0) }),
            "metadata": .object(item.metadata), "line": .number(Double(item.line)),
        ]
        if let confidence = item.confidence { object["confidence"] = .number(confidence) }
        return JSONValue.object(object).compactJSON
    }

    /// The item a work item carries.
    static func item(_ work: EvalWorkItem) throws -> EvalItem {
        let value: JSONValue
        do { value = try JSONValue.parse(work.itemJSON) } catch {
            throw EvalError("run \(work.runID) item \(work.itemID): its stored item is not JSON (\(error))")
        }
        guard let id = value["id"]?.string, let input = value["input"]?.string else {
            throw EvalError("run \(work.runID) item \(work.itemID): its stored item has no id or input")
        }
        return EvalItem(
            id: id, input: input, targets: value["targets"]?.array?.compactMap(\.string) ?? [],
            confidence: value["confidence"]?.number, metadata: value["metadata"]?.object ?? [:],
            line: Int(value["line"]?.int ?? 0))
    }

    // MARK: - Working

    /// Waits while there is nothing to lease: until a change is announced (at most
    /// `idleSeconds`), or `pollSeconds` where nothing announces changes.
    /// `stopping`: another thread of this worker found its runs done; the wait ends with it
    /// (the commit that ended the runs was the last announcement: nothing else would wake it).
    private static func idle(
        _ options: WorkOptions, since seen: Int?, stopping: borrowing Atomic<Bool>, reporter: JobReporter
    ) {
        guard let announced = options.announced, let seen else {
            usleep(UInt32(options.pollSeconds * 1e6))
            return
        }
        let deadline = Date().addingTimeInterval(options.idleSeconds)
        // The count is in memory: looking at it costs the database nothing.
        while announced() == seen, Date() < deadline, !reporter.isCancelled, !stopping.load(ordering: .relaxed) {
            usleep(20_000)
        }
    }

    package struct WorkOptions: Sendable {
        /// Only this run's items; nil takes any running run's, oldest first.
        package var run: Int64?
        /// Items answered at once by this worker.
        package var concurrency = 8
        /// How long an item stays leased without word from its worker: a killed worker's items
        /// go back after it. A live worker renews its leases every third of it.
        package var leaseSeconds = 60.0
        /// The name this worker stores with its answers.
        package var worker = "\(JobLease.currentHost):\(getpid())"
        /// Wait for new runs when there is nothing to answer, instead of stopping.
        package var follow = false
        /// How long to wait before looking again when every open item is leased.
        package var pollSeconds = 0.25
        /// A count that grows with each change announced on the workspace (PostgreSQL's
        /// notices, ``PostgresWatcher``): an idle worker waits for it to grow instead of asking the
        /// database every ``pollSeconds``, and still looks at least every ``idleSeconds`` (a
        /// lease running out is announced by nobody). Nil: poll.
        package var announced: (@Sendable () -> Int)?
        package var idleSeconds = 5.0
        /// An item leased this many times without an answer (each of its workers died on it) is
        /// stored as an error rather than tried again.
        package var maxAttempts = 3
        /// How long to keep trying when the workspace cannot be reached (a server restarting).
        package var reconnectSeconds = 60.0
        /// Told, once an outage, that the workspace cannot be reached and the worker waits for it
        /// (and again once it is back); `eval worker` prints it.
        package var waiting: (@Sendable (String) -> Void)?

        package init() {}
    }

    package struct WorkOutcome: Sendable {
        /// Answers this worker stored.
        package var answered = 0
        /// Of them, answers whose target failed.
        package var errors = 0
        /// Runs this worker marked complete (every item answered).
        package var completed: [Int64] = []
        package var seconds = 0.0
    }

    /// What answers the items of one run, made once per run a worker meets.
    private struct RunContext: Sendable {
        var suite: EvalSuite
        var answerer: Answerer
        var tools: ScoringTools
        /// Held around each answer when the target answers one item at a time (retrieval).
        var serial: NSLock?
    }

    /// Leases, answers and stores items until none is left (or, with `follow`, until cancelled),
    /// `concurrency` at a time. Marks each run complete, with its summary, once every item of it
    /// is answered. Cancelling through the reporter stops leasing; the answers under way are
    /// stored and the items this worker still holds are given back at once.
    package func work(_ options: WorkOptions, reporter: JobReporter = .detached()) throws -> WorkOutcome {
        let started = Date()
        let contexts = Mutex<[Int64: RunContext]>([:])
        let state = Mutex((outcome: WorkOutcome(), failure: nil as (any Error)?, touched: Set<Int64>()))
        let renewing = Atomic<Bool>(true)
        let evals = self.evals
        // The items this worker's threads are answering, by thread.
        let held = Mutex<[Int: (run: Int64, itemID: String, epoch: Int)]>([:])
        // Renews the leases of the items this worker is answering, so a slow answer is not taken
        // from it. Only those: a lease granted while the server went away, whose grant never
        // reached the worker, runs out and its item goes back to the queue.
        let renewer = Thread {
            var last = Date()
            while renewing.load(ordering: .relaxed) {
                usleep(100_000)
                guard Date().timeIntervalSince(last) >= options.leaseSeconds / 3 else { continue }
                last = Date()
                // A renewal that fails (the workspace away a moment) is tried again a third of a
                // lease later; a lease lapses only after three in a row.
                _ = try? evals.renewEvalLeases(
                    worker: options.worker, leaseSeconds: options.leaseSeconds,
                    held: Array(held.withLock { $0.values }))
            }
        }
        renewer.start()
        defer {
            renewing.store(false, ordering: .relaxed)
            // Leases not given back run out on their own, and their items go back to the queue.
            try? evals.releaseEvalLeases(worker: options.worker)
        }

        let service = self
        let wait = WorkspaceWait(seconds: options.reconnectSeconds, waiting: options.waiting)
        // One thread at a time looks for finished runs (a run's statistics are worked out once per
        // worker, not once per idle thread), and tells the others when to stop.
        let finisher = NSLock()
        let stopping = Atomic<Bool>(false)
        let loop: @Sendable (Int) -> Void = { thread in
            defer { held.withLock { _ = $0.removeValue(forKey: thread) } }
            while !reporter.isCancelled, !stopping.load(ordering: .relaxed), state.withLock({ $0.failure == nil }) {
                // Read before looking for work: a change announced while it looks wakes it.
                let seen = options.announced?()
                do {
                    let leased = try wait.retrying {
                        try evals.leaseEvalWork(
                            run: options.run, worker: options.worker, leaseSeconds: options.leaseSeconds)
                    }
                    guard let work = leased else {
                        if finisher.try() {
                            defer { finisher.unlock() }
                            if try wait.retrying({ try service.finishRuns(options, state: state) }) {
                                stopping.store(true, ordering: .relaxed)
                                return
                            }
                        }
                        Self.idle(options, since: seen, stopping: stopping, reporter: reporter)
                        continue
                    }
                    state.withLock { _ = $0.touched.insert(work.runID) }
                    held.withLock { $0[thread] = (work.runID, work.itemID, work.epoch) }
                    let context = try contexts.withLock { cached throws -> RunContext in
                        if let context = cached[work.runID] { return context }
                        let context = try wait.retrying { try service.context(run: work.runID, storing: wait) }
                        cached[work.runID] = context
                        return context
                    }
                    let item = try Self.item(work)
                    let task = Task(item: item, epoch: work.epoch)
                    let answerer =
                        work.attempts > options.maxAttempts
                        ? Answerer(serial: false) { _, _ in
                            throw EvalError(
                                "abandoned: leased \(work.attempts - 1) times and never answered (its workers "
                                    + "stopped or stalled past the lease)")
                        } : context.answerer
                    // A workspace error while answering is never the answer: once the workspace is
                    // back the item is answered again (a model target's answer is kept: only its
                    // trace waited, ``modelAnswer``).
                    let (result, scores) = try wait.retrying {
                        try context.serial.map { lock in
                            try lock.withLock {
                                try Self.answer(
                                    task, runID: work.runID, suite: context.suite, answerer: answerer,
                                    tools: context.tools, worker: options.worker)
                            }
                        }
                            ?? Self.answer(
                                task, runID: work.runID, suite: context.suite, answerer: answerer,
                                tools: context.tools, worker: options.worker)
                    }
                    let stored = try wait.retrying {
                        try evals.recordEvalResult(result, scores: scores, worker: options.worker)
                    }
                    held.withLock { _ = $0.removeValue(forKey: thread) }
                    guard stored else { continue }
                    let answered = state.withLock { state -> Int in
                        state.outcome.answered += 1
                        if result.error != nil { state.outcome.errors += 1 }
                        return state.outcome.answered
                    }
                    reporter.report(
                        JobProgress(
                            completed: Double(answered), total: nil,
                            detail: "\(answered) answered by \(options.worker)"))
                } catch {
                    state.withLock { $0.failure = $0.failure ?? error }
                    return
                }
            }
        }
        // Threads of their own: the answers wait on a model, not on a core.
        onThreads(max(1, options.concurrency)) { thread in loop(thread) }
        let final = state.withLock { $0 }
        if let failure = final.failure { throw failure }
        var outcome = final.outcome
        outcome.seconds = Date().timeIntervalSince(started)
        return outcome
    }

    /// Nothing could be leased: marks the runs this worker met (or `options.run`), and any run
    /// whose answers are all in, complete where every item is answered. Returns true when the
    /// worker should stop: its run is answered, or no running run has an open item (unless it
    /// follows).
    private func finishRuns(
        _ options: WorkOptions,
        state: borrowing Mutex<(outcome: WorkOutcome, failure: (any Error)?, touched: Set<Int64>)>
    ) throws -> Bool {
        // Which runs still have an open item, read before the runs are finished: when none has,
        // every run then running has all its answers in and is among those finished below. (Read
        // after, an answer stored between the two reads could let this worker stop beside a run
        // nobody marked complete.)
        let open = options.run == nil && !options.follow ? try evals.openWorkedRuns() : []
        // Besides the runs it met, a worker finishes any run whose answers are all in but which
        // is still running: the worker that stored its last answer was killed before marking it.
        let runs =
            try options.run.map { [$0] }
            ?? Set(state.withLock { $0.touched }).union(try evals.answeredWorkedRuns()).sorted()
        var allDone = true
        for run in runs {
            let progress = try evals.evalWorkProgress(run: run)
            guard progress.total > 0, progress.done == progress.total else {
                allDone = false
                continue
            }
            guard try evals.existingEvalRun(run).status == "running" else { continue }
            let summary = try summary(run: run)
            if try evals.completeWorkedRun(run, summaryJSON: Self.encode(summary)) {
                state.withLock { $0.outcome.completed.append(run) }
            }
        }
        if options.follow { return false }
        if options.run != nil { return allDone }
        return open.isEmpty
    }

    /// The suite of run `id` parsed from the text the run keeps, its target and its scorers.
    private func context(run id: Int64, storing wait: WorkspaceWait) throws -> RunContext {
        let run = try evals.existingEvalRun(id)
        guard let text = run.suiteText else {
            throw EvalError("run \(id) was not queued for workers (loupe eval run SUITE --workers)")
        }
        let suite = try SuiteParser.parse(text, file: run.suiteFile ?? "suite.yaml")
        var loaded = LoadedSuite(
            suite: suite, items: [], suiteHash: run.suiteHash, datasetHash: run.datasetHash, suiteText: text)
        if case .retrieval(let target) = suite.target {
            // Judgments are read where the worker runs, as the corpus is.
            guard let data = FileManager.default.contents(atPath: target.qrelsPath),
                let qrels = String(data: data, encoding: .utf8)
            else { throw EvalError("run \(id): its qrels \(target.qrelsPath) cannot be read on this machine") }
            loaded.qrels = try Qrels.parse(qrels, file: target.qrelsPath).judgments
        }
        let answerer = try makeAnswerer(loaded, storing: wait)
        return RunContext(
            suite: suite, answerer: answerer, tools: try scoringTools(), serial: answerer.serial ? NSLock() : nil)
    }
}
