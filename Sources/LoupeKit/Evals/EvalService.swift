import Foundation
import LoupeAgents
import LoupeBase
import LoupeEvals
import LoupeModels
import LoupeProfiling
import LoupeRetrieval
import LoupeStore
import Synchronization

/// Runs eval suites against the workspace's engine and reads runs back: `eval run|list|show|
/// compare|export` and the Evals panel. Every answer is stored as it finishes, so a killed run
/// resumes where it stopped and nothing is scored twice.
package struct EvalService: Sendable {
    /// The runs, answers, scores and work items, on SQLite or PostgreSQL.
    package let evals: EvalTables
    /// The workspace when it is a file on this machine (SQLite): a run is answered in this
    /// process, under a lease while it runs. A server's database (PostgreSQL) has its runs
    /// answered by workers, which lease items instead.
    let local: (any SQLDatabase)?
    /// Nil for a service that only reads (the Evals panel): running a suite needs MiniLM.
    private let library: ModelLibrary?
    /// Written into each run's provenance.
    package var loupeVersion = "0.1.0"
    /// The environment providers read their base URL, model and key from.
    package var environment: [String: String] = ProcessInfo.processInfo.environment
    /// Answers every item with its first target at once instead of calling the suite's target:
    /// what `bench evals` times to measure the runner's own cost per item.
    package var instantTarget = false

    package init(workspace: Workspace, models: ModelLibrary? = nil) {
        evals = workspace.evals
        local = workspace
        library = models
    }

    /// A service on a workspace's tables (`evals.database`, a PostgreSQL workspace): it lists,
    /// shows and compares runs, queues them for workers and answers any target.
    package init(evals: EvalTables, models: ModelLibrary? = nil) {
        self.evals = evals
        local = evals.database.file == nil ? nil : evals.database
        library = models
    }

    /// The workspace a run is answered in, in this process (a SQLite file); a PostgreSQL one
    /// says how its runs are answered.
    package var workspace: any SQLDatabase {
        get throws {
            guard let local else {
                throw EvalError(
                    "\(evals.database.displayName) is a PostgreSQL workspace: its eval runs are answered by "
                        + "workers (loupe eval run SUITE --workers, then loupe eval worker)")
            }
            return local
        }
    }

    /// Eval runs' leases on a SQLite workspace; none on PostgreSQL, whose runs are worked
    /// through leased items instead.
    func runLeases() throws -> [Int64: JobLease] {
        guard let local else { return [:] }
        return try LeaseTables(local).leases(kind: JobLease.Kind.evalRun)
    }

    /// The model library a run needs (retrieval targets, agents, the embedding scorer).
    private var models: ModelLibrary {
        get throws {
            guard let library else { throw EvalError("internal: this EvalService only reads (built with no models)") }
            return library
        }
    }

    /// A suite with its items read and its inputs hashed.
    package struct LoadedSuite: Sendable {
        package var suite: EvalSuite
        package var items: [EvalItem]
        package var suiteHash: String
        package var datasetHash: String
        /// Judgments per query, for retrieval targets.
        package var qrels: [String: [String: Int]] = [:]
        /// Items left out because they have no judgments (retrieval).
        package var unjudged: [String] = []
        /// The suite's YAML as read: what a run queued for workers keeps, so they need no file.
        package var suiteText = ""
    }

    package func load(_ path: String) throws -> LoadedSuite {
        let data = Data(try TextFile.bytes(path))
        guard let text = String(data: data, encoding: .utf8) else { throw SuiteError(file: path, "is not UTF-8 text") }
        let suite = try SuiteParser.parse(text, file: path)
        let datasetData = Data(try TextFile.bytes(suite.dataset.path))
        var items = try Dataset.items(datasetData, spec: suite.dataset)
        var hashed = datasetData
        var loaded = LoadedSuite(
            suite: suite, items: items, suiteHash: SHA256.hex(Array(data)), datasetHash: "")
        loaded.suiteText = text
        if case .retrieval(let target) = suite.target {
            guard let qrelsData = FileManager.default.contents(atPath: target.qrelsPath),
                let qrelsText = String(data: qrelsData, encoding: .utf8)
            else { throw SuiteError(file: path, "qrels \(target.qrelsPath) cannot be read") }
            loaded.qrels = try Qrels.parse(qrelsText, file: target.qrelsPath).judgments
            hashed.append(qrelsData)
            loaded.unjudged = items.filter { loaded.qrels[$0.id] == nil }.map(\.id)
            items.removeAll { loaded.qrels[$0.id] == nil }
            loaded.items = items
            if items.isEmpty { throw SuiteError(file: target.qrelsPath, "judges none of the dataset's ids") }
        }
        loaded.datasetHash = SHA256.hex(Array(hashed))
        return loaded
    }

    // MARK: - Running

    package struct RunOptions: Hashable, Sendable {
        package var epochs: Int?
        package var concurrency: Int?
        package var limit: Int?
        /// Re-run only the failed or errored items of this run; the others are carried over.
        package var onlyFailed: Int64?
        /// Start a new run even when an unfinished one of this suite could be resumed.
        package var fresh = false

        package init() {}
    }

    /// Where a run stands, for live progress.
    package struct Progress: Hashable, Sendable {
        package var runID: Int64
        package var done: Int
        package var total: Int
        package var errors: Int
        /// The headline scorer's mean over the answers so far.
        package var runningMean: Double?
        package var elapsedSeconds: Double
        package var etaSeconds: Double? {
            guard done > 0, total > done else { return done >= total ? 0 : nil }
            return elapsedSeconds / Double(done) * Double(total - done)
        }

        package var line: String {
            var parts = ["run \(runID)", "\(done)/\(total)"]
            if let runningMean { parts.append("mean \(String(format: "%.3f", runningMean))") }
            if errors > 0 { parts.append("\(errors) errors") }
            if let etaSeconds, done < total { parts.append("ETA \(Self.duration(etaSeconds))") }
            return parts.joined(separator: " · ")
        }

        static func duration(_ seconds: Double) -> String {
            seconds < 60
                ? String(format: "%.0fs", seconds)
                : String(
                    format: "%.0fm%02.0fs", (seconds / 60).rounded(.down), seconds.truncatingRemainder(dividingBy: 60))
        }
    }

    package struct RunOutcome: Sendable {
        package var runID: Int64
        package var resumed: Bool
        /// Answers made in this call.
        package var answered: Int
        /// Answers already there (resumed) or carried over (--only-failed).
        package var skipped: Int
        package var status: String
        package var summary: RunSummary
        package var unjudged: [String]
        /// Seconds spent before the first answer (loading, building the target's indexes), in
        /// the answer loop, and computing the statistics after it.
        package var setupSeconds = 0.0
        package var loopSeconds = 0.0
        package var summarySeconds = 0.0
    }

    /// One planned answer.
    struct Task: Sendable {
        var item: EvalItem
        var epoch: Int
    }

    /// Runs `loaded`; resumes the suite's latest unfinished run when its inputs are unchanged
    /// (unless `fresh`). Cancelling through the reporter stops taking new items; answers already
    /// made are kept and the run is marked cancelled (run again to resume).
    package func run(
        _ loaded: LoadedSuite, options: RunOptions = RunOptions(), reporter: JobReporter = .detached(),
        onProgress: @escaping @Sendable (Progress) -> Void = { _ in }
    ) throws -> RunOutcome {
        let suite = loaded.suite
        let epochs = options.epochs ?? suite.epochs
        var items = loaded.items
        if let limit = options.limit { items = Array(items.prefix(limit)) }
        let plan = try plan(loaded, items: items, epochs: epochs, options: options)
        let runID = plan.runID
        let heartbeat = LeaseHeartbeat.start(database: try workspace, kind: JobLease.Kind.evalRun, targetID: runID)
        defer { heartbeat.stop() }
        let resumed = plan.resumed
        let tasks = plan.tasks
        let total = (try evals.existingEvalRun(runID).planned)
        let skipped = total - tasks.count

        var watch = Stopwatch()
        let answerer = try makeAnswerer(loaded)
        let concurrency = answerer.serial ? 1 : max(1, options.concurrency ?? suite.concurrency)
        let started = Date()
        let setupSeconds = watch.lap()
        let state = Mutex(
            (next: 0, done: skipped, errors: 0, sum: 0.0, scored: 0, failure: nil as (any Error)?))
        let headline = suite.headline
        let tools = try scoringTools()
        let taskList = tasks
        let work: @Sendable () -> Void = {
            while true {
                let index: Int? = state.withLock { state in
                    guard state.failure == nil, !reporter.isCancelled, state.next < taskList.count else { return nil }
                    state.next += 1
                    return state.next - 1
                }
                guard let index else { return }
                let task = taskList[index]
                let result: EvalResultRecord
                let scores: [EvalScoreRecord]
                do {
                    // A workspace error while answering (the trace not stored) fails the run
                    // rather than being stored as the item's answer: run again to resume.
                    (result, scores) = try Self.answer(
                        task, runID: runID, suite: suite, answerer: answerer, tools: tools)
                    try evals.recordEvalResult(result, scores: scores)
                } catch {
                    state.withLock { $0.failure = $0.failure ?? error }
                    return
                }
                let progress = state.withLock { state -> Progress in
                    state.done += 1
                    if result.error != nil { state.errors += 1 }
                    if let score = scores.first(where: { $0.scorer == headline }) {
                        state.sum += score.passed.map { $0 ? 1 : 0 } ?? score.value
                        state.scored += 1
                    }
                    return Progress(
                        runID: runID, done: state.done, total: total, errors: state.errors,
                        runningMean: state.scored > 0 ? state.sum / Double(state.scored) : nil,
                        elapsedSeconds: Date().timeIntervalSince(started))
                }
                reporter.report(
                    JobProgress(completed: Double(progress.done), total: Double(total), detail: progress.line))
                onProgress(progress)
            }
        }
        // Threads of their own: the answers wait on a model or a tool, not on a core.
        onThreads(concurrency) { _ in work() }
        let final = state.withLock { $0 }
        let loopSeconds = watch.lap()
        let summary = try summary(run: runID)
        let summarySeconds = watch.lap()
        let status: String
        if final.failure != nil {
            status = "failed"
        } else if final.done < total {
            status = "cancelled"
        } else {
            status = "complete"
        }
        try evals.finishEvalRun(runID, status: status, summaryJSON: Self.encode(summary))
        if let failure = final.failure { throw failure }
        return RunOutcome(
            runID: runID, resumed: resumed, answered: final.done - skipped, skipped: skipped, status: status,
            summary: summary, unjudged: loaded.unjudged, setupSeconds: setupSeconds, loopSeconds: loopSeconds,
            summarySeconds: summarySeconds)
    }

    /// What answers an item: a retrieval ranking, an agent run or a model call.
    struct Answerer: Sendable {
        var serial: Bool
        var answer: @Sendable (EvalItem, AnswerSlot) throws -> Answer
    }

    /// Which answer is being made: the run, the item's epoch and, for a worked run, the worker
    /// holding the item. A model call's trace is named after it (``modelAnswer``).
    struct AnswerSlot: Sendable {
        var runID: Int64
        var epoch: Int
        var worker: String?
    }

    struct Answer: Sendable {
        var output: String
        /// Scores the target computes itself (retrieval metrics).
        var scores: [Verdict] = []
        var inputTokens: Int?
        var outputTokens: Int?
        var cost: Double?
        var traceID: Int64?
        var retrievalRecordID: Int64?
        /// Why the target stopped short of a final answer, kept in the result's metadata under
        /// ``EvalService/stopReasonKey``.
        var stopReason: String?
    }

    /// Answers and scores `task`. The target's errors (the model's, the provider's) are the
    /// answer, stored as an errored one; the workspace's (``isWorkspaceError(_:)``: its trace
    /// could not be stored) are thrown, since they say nothing about the target.
    static func answer(
        _ task: Task, runID: Int64, suite: EvalSuite, answerer: Answerer, tools: ScoringTools, worker: String? = nil
    ) throws -> (EvalResultRecord, [EvalScoreRecord]) {
        let item = task.item
        var answer: Answer?
        var failure: String?
        var workspaceFailure: (any Error)?
        let latency =
            Stopwatch.seconds {
                do {
                    answer = try answerer.answer(item, AnswerSlot(runID: runID, epoch: task.epoch, worker: worker))
                } catch  where isWorkspaceError(error) {
                    workspaceFailure = error
                } catch { failure = "\(error)" }
            } * 1e3
        if let workspaceFailure { throw workspaceFailure }
        var scores: [Verdict] = []
        if let answer {
            scores = answer.scores
            for spec in suite.scorers where !spec.kind.isRetrievalMetric {
                do {
                    scores.append(try AnswerScorer.score(spec, output: answer.output, item: item, tools: tools))
                } catch {
                    scores.append(
                        Verdict(scorer: spec.name, value: 0, passed: false, explanation: "scorer error: \(error)"))
                }
            }
        } else {
            // An answer that never came is wrong for every scorer (and kept as an error).
            scores = suite.scorers.map { spec in
                Verdict(
                    scorer: spec.name, value: 0, passed: spec.kind.isRetrievalMetric ? nil : false,
                    explanation: "no answer: \(failure ?? "")")
            }
        }
        var metadata = item.metadata
        metadata["line"] = .number(Double(item.line))
        // Under Loupe's own key, so an item's metadata cannot pose as the target's stop reason.
        if let reason = answer?.stopReason { metadata[EvalService.stopReasonKey] = .string(reason) }
        let result = EvalResultRecord(
            runID: runID, itemID: item.id, epoch: task.epoch, input: item.input,
            targetsJSON: JSONValue.array(item.targets.map { .string($0) }).compactJSON, output: answer?.output,
            error: failure, latencyMs: latency, inputTokens: answer?.inputTokens, outputTokens: answer?.outputTokens,
            cost: answer?.cost, confidence: item.confidence, traceID: answer?.traceID,
            retrievalRecordID: answer?.retrievalRecordID, metadataJSON: JSONValue.object(metadata).compactJSON)
        let records = scores.map {
            EvalScoreRecord(
                runID: runID, itemID: item.id, epoch: task.epoch, scorer: $0.scorer, value: $0.value, passed: $0.passed,
                explanation: $0.explanation, detailsJSON: $0.details?.compactJSON)
        }
        return (result, records)
    }

    /// What answers `loaded`'s items. `storing`: how a worker waits to store a model call's trace
    /// while the workspace cannot be reached (nil: an error at once).
    func makeAnswerer(_ loaded: LoadedSuite, storing wait: WorkspaceWait? = nil) throws -> Answerer {
        if instantTarget {
            return Answerer(serial: false) { item, _ in Answer(output: item.targets.first ?? item.input) }
        }
        switch loaded.suite.target {
        case .retrieval(let target): return try retrievalAnswerer(target, loaded: loaded)
        case .agent(let target):
            let agents = AgentService(database: evals.database, models: try models)
            let provider = try provider(target.provider, agents: agents)
            var limits = AgentLimits()
            limits.maxSteps = target.maxSteps
            limits.maxTokens = target.maxTokens
            limits.maxSeconds = target.timeout
            let traces = TraceService(tables: TraceTables(evals.database))
            let fixedLimits = limits
            // One model in this process, one conversation cache: the local model answers in turn.
            return Answerer(serial: provider.label == "offline" || provider.label == "local") { item, _ in
                let (id, trace) = try agents.run(item.input, provider: provider, limits: fixedLimits)
                let usage = trace.usage
                let cost = try traces.load(id).summary.cost
                // The root span's error is why the agent stopped without an answer.
                var stopReason: String?
                if case .error(let message)? = trace.spans.first?.status { stopReason = message }
                return Answer(
                    output: trace.spans.first?.output.last?.text ?? "", inputTokens: usage.inputTokens,
                    outputTokens: usage.outputTokens, cost: cost, traceID: id, stopReason: stopReason)
            }
        case .model(let target):
            let provider = try provider(
                target.provider, agents: AgentService(database: evals.database, models: try models))
            // Prices read once a run (not once an answer, a read the server answers each time).
            let prices = PriceTable(workspace: try TraceTables(evals.database).modelPrices())
            return Answerer(serial: false) { item, slot in
                try modelAnswer(item, slot: slot, target: target, provider: provider, prices: prices, storing: wait)
            }
        }
    }

    func retrievalAnswerer(_ target: RetrievalTarget, loaded: LoadedSuite) throws -> Answerer {
        let retrieval = RetrievalService(database: evals.database, models: try models)
        var options = RetrievalService.Options()
        guard let retriever = RetrievalService.Retriever(rawValue: target.retriever) else {
            throw EvalError("retriever \(target.retriever): use bm25, dense or hybrid")
        }
        options.retriever = retriever
        options.stem = target.stem
        options.k1 = target.k1
        options.b = target.b
        options.depth = target.depth
        options.k = target.depth
        let counts = try retrieval.corpus.corpusCounts(model: try retrieval.embeddingModel())
        guard counts.chunks > 0 else { throw EvalError("the workspace has no chunks: run loupe ingest FILE first") }
        if retriever != .bm25 && counts.embedded < counts.chunks {
            throw EvalError("\(counts.chunks - counts.embedded) chunks have no embedding: run loupe ingest again")
        }
        // Safe: the run's workers only read the retrieval context (indexes, chunks), built before them.
        let context = UncheckedSendable(try retrieval.context(for: options))
        let fixedOptions = options
        let qrels = loaded.qrels
        let scorers = loaded.suite.scorers
        let shown = target.k
        return Answerer(serial: true) { item, _ in
            // One pass of each retriever; the ranking to depth for the metrics, and the top k with
            // each hit's matched terms and BM25 contributions for the record.
            let found = retrieval.candidates(item.input, options: fixedOptions, context: context.value)
            let hits = retrieval.assemble(found, options: fixedOptions, context: context.value, details: false)
            var top = fixedOptions
            top.k = shown
            let shownHits = retrieval.assemble(found, options: top, context: context.value)
            var best: [String: Double] = [:]
            var order: [String] = []
            for hit in hits {
                if best[hit.documentID] == nil { order.append(hit.documentID) }
                best[hit.documentID] = max(best[hit.documentID] ?? -.infinity, hit.fused.score)
            }
            let judged = qrels[item.id] ?? [:]
            let cutoffs = Array(
                Set(
                    scorers.compactMap { spec -> Int? in
                        switch spec.kind {
                        case .ndcg(let k), .recall(let k), .precision(let k): k
                        default: nil
                        }
                    } + [10]))
            let metrics = RetrievalMetrics.evaluate(
                run: best.map { ($0.key, $0.value) }, qrels: judged, cutoffs: cutoffs)
            let relevantShown = order.prefix(shown).filter { (judged[$0] ?? 0) > 0 }
            let why =
                "\(judged.filter { $0.value > 0 }.count) relevant judged; in the top \(shown): "
                + (relevantShown.isEmpty ? "none" : relevantShown.joined(separator: ", "))
            let scores = scorers.compactMap { spec -> Verdict? in
                let value: Double
                switch spec.kind {
                case .ndcg(let k): value = metrics.ndcg[k] ?? 0
                case .recall(let k): value = metrics.recall[k] ?? 0
                case .precision(let k): value = metrics.precision[k] ?? 0
                case .averagePrecision: value = metrics.averagePrecision
                case .reciprocalRank: value = metrics.reciprocalRank
                default: return nil
                }
                return Verdict(scorer: spec.name, value: value, passed: nil, explanation: why)
            }
            let record = try retrieval.record(item.input, options: top, hits: shownHits)
            return Answer(
                output: order.prefix(shown).joined(separator: " "), scores: scores, retrievalRecordID: record)
        }
    }

    func modelAnswer(
        _ item: EvalItem, slot: AnswerSlot, target: ModelTarget, provider: any ChatProvider, prices: PriceTable,
        storing wait: WorkspaceWait? = nil
    ) throws -> Answer {
        var messages: [Message] = []
        if let system = target.system { messages.append(Message(role: "system", text: system)) }
        messages.append(Message(role: "user", text: item.input))
        let startNs = Int64(Date().timeIntervalSince1970 * 1e9)
        let response = try provider.complete(
            ChatRequest(messages: messages, tools: [], maxTokens: target.maxTokens), onText: { _ in })
        let endNs = Int64(Date().timeIntervalSince1970 * 1e9)
        var root = TraceSpan(
            spanID: "root", parentID: nil, kind: .agent, name: "eval item \(item.id)", startNs: startNs, endNs: endNs)
        root.status = .ok
        root.input = messages
        root.output = [response.message]
        var call = TraceSpan(
            spanID: "llm-1", parentID: "root", kind: .llm, name: "chat \(response.model)", startNs: startNs,
            endNs: endNs)
        call.status = .ok
        call.model = response.model
        call.usage = response.usage
        call.input = messages
        call.output = [response.message]
        // Named after the answer, not the attempt: an item answered again (a resumed run, a
        // worker's lease that ran out) replaces its trace rather than leaving one behind.
        let externalID = "eval-\(slot.runID)-\(item.id)-\(slot.epoch)"
        let trace = Trace(externalID: externalID, format: .loupe, name: "eval · \(item.id)", spans: [root, call])
        // The call's trace, with its cost, in the workspace the run is in (SQLite or PostgreSQL).
        // The model's answer is kept while the workspace is away: the trace waits, not the model.
        // A worker stores it only while the item is still its own, in the same transaction.
        let store = { [evals] () throws -> Int64? in
            let record = TraceService.record(trace, sourceFile: nil)
            guard let worker = slot.worker else {
                return try TraceTables(evals.database).importTraces([record]).ids.first
            }
            return try evals.importWorkTrace(
                record, run: slot.runID, itemID: item.id, epoch: slot.epoch, worker: worker)
        }
        let id = try wait.map { try $0.retrying(store) } ?? store()
        // The cost the trace's summary gives (``TraceService/load(_:)``): the call's own, else its
        // tokens at the workspace's prices.
        let usage = response.usage
        let priced = usage.cost != nil || usage.inputTokens != nil || usage.outputTokens != nil
        let cost =
            id != nil && priced
            ? usage.cost
                ?? prices.cost(
                    model: response.model, input: usage.inputTokens, output: usage.outputTokens,
                    cachedInput: usage.cacheReadTokens) : nil
        // Only the reasons that mean the answer is not whole: servers name a normal end many ways
        // (stop, end_turn, eos_token, stop_sequence).
        let stopReason = response.finishReason.flatMap { reason -> String? in
            switch reason {
            case "length", "max_tokens": "finish_reason \(reason): cut off at the token limit"
            case "content_filter": "finish_reason content_filter: withheld by the provider's filter"
            default: nil
            }
        }
        return Answer(
            output: response.message.text, inputTokens: response.usage.inputTokens,
            outputTokens: response.usage.outputTokens, cost: cost, traceID: id, stopReason: stopReason)
    }

    func provider(_ spec: ProviderSpec, agents: AgentService) throws -> any ChatProvider {
        switch spec.kind {
        case "offline":
            return agents.offlinePolicy()
        case "local":
            return try agents.localModel()
        default:
            let base = spec.baseURL ?? environment["OPENAI_BASE_URL"] ?? "https://api.openai.com/v1"
            guard let url = URL(string: base) else {
                throw EvalError("base_url \(URLCredentials.redacted(base, placeholder: "***")) is not a URL")
            }
            guard let model = spec.model ?? environment["OPENAI_MODEL"] else {
                throw EvalError("name the model: model: NAME in the suite, or $OPENAI_MODEL")
            }
            return OpenAICompatibleProvider(
                baseURL: url, model: model, apiKey: environment[spec.apiKeyEnv], stream: spec.stream)
        }
    }

    func scoringTools() throws -> ScoringTools {
        let models = try self.models
        let agents = AgentService(database: evals.database, models: models)
        let service = self
        return ScoringTools(
            // The library loads MiniLM once and keeps it; the embedder is safe to share.
            embed: { texts in try models.miniLM().embed(texts, parallelBatches: 1).map(\.vector) },
            provider: { spec in try service.provider(spec, agents: agents) })
    }

    /// Whether an answer failed: it errored, a scorer said fail, or (continuous scorers only)
    /// every score is 0. `--only-failed`, `show --failed` and the panel's filter all use this.
    package static func failed(error: String?, scores: [EvalScoreRecord]) -> Bool {
        error != nil || scores.contains { $0.passed == false }
            || (!scores.isEmpty && scores.allSatisfy { $0.passed == nil && $0.value == 0 })
    }

    /// The items and epochs of a run's answers that failed.
    package func failedKeys(run: Int64) throws -> Set<EvalItemKey> {
        let scores = Dictionary(grouping: try evals.evalScores(run: run)) { $0.itemKey }
        var failed: Set<EvalItemKey> = []
        for result in try evals.evalResults(run: run) {
            let key = result.itemKey
            if Self.failed(error: result.error, scores: scores[key] ?? []) { failed.insert(key) }
        }
        return failed
    }

    static func targetJSON(_ target: EvalTarget) -> JSONValue {
        func provider(_ spec: ProviderSpec) -> JSONValue {
            var out: [String: JSONValue] = ["provider": .string(spec.kind)]
            // The request uses the URL's credentials; the run, which is shared, keeps none.
            if let url = spec.baseURL {
                out["base_url"] = .string(URLCredentials.redacted(url, placeholder: SecretRedactor.placeholder))
            }
            if let model = spec.model { out["model"] = .string(model) }
            return .object(out)
        }
        switch target {
        case .retrieval(let t):
            return .object([
                "kind": "retrieval", "retriever": .string(t.retriever), "k": .number(Double(t.k)),
                "depth": .number(Double(t.depth)), "stem": .bool(t.stem), "k1": .number(t.k1), "b": .number(t.b),
                "qrels": .string(t.qrelsPath),
            ])
        case .agent(let t):
            var out: [String: JSONValue] = [
                "kind": "agent", "max_steps": .number(Double(t.maxSteps)), "timeout": .number(t.timeout),
            ]
            if let tokens = t.maxTokens { out["max_tokens"] = .number(Double(tokens)) }
            out.merge(provider(t.provider).object!.dictionary) { a, _ in a }
            return .object(out)
        case .model(let t):
            var out: [String: JSONValue] = ["kind": "model"]
            if let system = t.system { out["system"] = .string(system) }
            out.merge(provider(t.provider).object!.dictionary) { a, _ in a }
            return .object(out)
        }
    }

    /// The short revision of the git checkout holding `file`, if it is in one.
    static func gitRevision(near file: String) -> String? {
        let directory = (file as NSString).deletingLastPathComponent
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "-C", directory.isEmpty ? "." : directory, "rev-parse", "--short", "HEAD"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }

    /// The JSON of statistics: sorted keys, and NaN and infinities (an interval over one item) as
    /// strings. Summaries stored on runs and the commands' `--json` share it.
    package static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return encoder
    }()

    /// The summary to keep with the run; nil (nothing kept, worked out again on each read)
    /// in the case JSONEncoder cannot write it.
    static func encode(_ summary: RunSummary) -> String? {
        (try? encoder.encode(summary)).map { String(decoding: $0, as: UTF8.self) }
    }
}

extension EvalTables {
    /// Eval run `id`; throws "there is no eval run N" when the workspace has none.
    func existingEvalRun(_ id: Int64) throws -> EvalRunRecord {
        guard let run = try evalRun(id) else { throw EvalError("there is no eval run \(id)") }
        return run
    }
}
