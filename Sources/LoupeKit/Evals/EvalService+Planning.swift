import Foundation
import LoupeBase
import LoupeEvals
import LoupeRetrieval
import LoupeStore

extension EvalService {
    /// What a call to ``run(_:options:reporter:onProgress:)`` will do: the run it writes into,
    /// the answers still to make, and whether it resumed an unfinished run.
    struct Plan {
        var runID: Int64
        var tasks: [Task]
        var resumed: Bool
    }

    /// Plans a run of `items` × `epochs`: with `--only-failed` a new run that carries the
    /// parent's passing answers over and makes the rest again; else the suite's unfinished run
    /// when its inputs are unchanged (unless `fresh`); else a new run of everything.
    func plan(_ loaded: LoadedSuite, items: [EvalItem], epochs: Int, options: RunOptions) throws -> Plan {
        if let parentID = options.onlyFailed { return try planOnlyFailed(loaded, items: items, parentID: parentID) }
        if !options.fresh, let resumed = try planResume(loaded, items: items, epochs: epochs) { return resumed }
        let runID = try evals.createEvalRun(try newRun(loaded, epochs: epochs, planned: items.count * epochs))
        try claim(runID)
        var tasks: [Task] = []
        for item in items { for epoch in 1...epochs { tasks.append(Task(item: item, epoch: epoch)) } }
        return Plan(runID: runID, tasks: tasks, resumed: false)
    }

    /// A new run of `loaded` with its provenance (suite and dataset hashes, target, scorers,
    /// Loupe's version, the git revision beside the suite).
    func newRun(_ loaded: LoadedSuite, epochs: Int, planned: Int, parentRunID: Int64? = nil) throws
        -> EvalRunRecord
    {
        let suite = loaded.suite
        var record = EvalRunRecord(
            suite: suite.name, suiteFile: suite.file, suiteHash: loaded.suiteHash, datasetHash: loaded.datasetHash,
            targetKind: suite.target.kind, targetJSON: Self.targetJSON(suite.target).compactJSON,
            scorersJSON: JSONValue.array(suite.scorers.map { .string($0.name) }).compactJSON, epochs: epochs,
            planned: planned, parentRunID: parentRunID, loupeVersion: loupeVersion,
            gitRevision: Self.gitRevision(near: suite.file))
        record.workspaceJSON = try workspaceState().compactJSON
        return record
    }

    /// The corpus as a run finds it: a fingerprint of the ingested files and their chunking,
    /// and the counts of documents, chunks and embedded chunks.
    func workspaceState() throws -> JSONValue {
        let corpus = CorpusTables(evals.database)
        let lines = try corpus.corpusSourceLines()
        let model = try RetrievalService.embeddingModel(of: evals.database)
        let counts = try corpus.corpusCounts(model: model)
        return .object([
            "corpus": .string(
                lines.isEmpty ? "empty" : String(SHA256.hex(Array(lines.joined(separator: "\n").utf8)).prefix(16))),
            "documents": .number(Double(counts.documents)), "chunks": .number(Double(counts.chunks)),
            "embedded": .number(Double(counts.embedded)), "embedding_model": .string(model),
        ])
    }

    /// A run's workspace state (its `workspace_json`, parsed) in a line: `corpus 3f2a… · 1,400
    /// documents · 1,400 chunks (all embedded)`.
    package static func workspaceLine(_ state: JSONValue) -> String? {
        guard let corpus = state["corpus"]?.string else { return nil }
        let chunks = state["chunks"]?.int ?? 0
        let embedded = state["embedded"]?.int ?? 0
        return "corpus \(corpus) · \(state["documents"]?.int ?? 0) documents · \(chunks) chunks"
            + (chunks == 0 ? "" : embedded == chunks ? " (all embedded)" : " (\(embedded) embedded)")
    }

    /// `--only-failed PARENT`: a new run with the parent's answers that passed copied over (and
    /// marked `carried_from_run`), and the failed ones to make again.
    private func planOnlyFailed(_ loaded: LoadedSuite, items: [EvalItem], parentID: Int64) throws -> Plan {
        let suite = loaded.suite
        guard let parent = try evals.evalRun(parentID) else { throw EvalError("there is no run \(parentID)") }
        guard parent.suite == suite.name else {
            throw EvalError("run \(parentID) is of suite \(parent.suite), not \(suite.name)")
        }
        let failed = try failedKeys(run: parentID)
        let results = try evals.evalResults(run: parentID)
        let scores = Dictionary(grouping: try evals.evalScores(run: parentID)) { $0.itemKey }
        let byID = Dictionary(items.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        // A re-run of the same parent that was killed (no live lease) is resumed: what it stored
        // stays, the rest is carried over or made again as for a new one.
        let leases = try runLeases()
        let runID: Int64
        var answered: Set<EvalItemKey> = []
        if let unfinished = try evals.evalRuns().last(where: {
            $0.parentRunID == parentID && $0.source == "loupe" && $0.status != "complete" && $0.status != "failed"
                && $0.suiteHash == loaded.suiteHash && $0.planned == results.count
                && !(leases[$0.id!]?.isLive() ?? false)
        }), let id = unfinished.id {
            try claim(id)
            try evals.setEvalRunStatus(id, status: "running")
            answered = try evals.answeredEvalKeys(run: id)
            runID = id
        } else {
            runID = try evals.createEvalRun(
                try newRun(loaded, epochs: parent.epochs, planned: results.count, parentRunID: parentID))
            try claim(runID)
        }
        var tasks: [Task] = []
        var carried: [(EvalResultRecord, [EvalScoreRecord])] = []
        for result in results where !answered.contains(result.itemKey) {
            let key = result.itemKey
            if failed.contains(key), let item = byID[result.itemID] {
                tasks.append(Task(item: item, epoch: result.epoch))
            } else {
                var copy = result
                copy.runID = runID
                // A parent answer's metadata that does not read back stops the re-run, naming it:
                // carrying `{}` over in its place would lose what it held.
                let row = "run \(parentID), item \(result.itemID) epoch \(result.epoch)"
                var metadata =
                    try JSONValue.parse(stored: result.metadataJSON, "metadata", row: row, column: "metadata_json")
                    .object ?? [:]
                metadata["carried_from_run"] = .number(Double(parentID))
                copy.metadataJSON = JSONValue.object(metadata).compactJSON
                carried.append(
                    (
                        copy,
                        (scores[key] ?? []).map {
                            var score = $0
                            score.runID = runID
                            return score
                        }
                    ))
            }
        }
        try evals.recordEvalResults(carried)
        return Plan(runID: runID, tasks: tasks, resumed: !answered.isEmpty)
    }

    /// Takes run `id` for this process, or says who is running it.
    private func claim(_ id: Int64) throws {
        if let local, let held = try LeaseTables(local).claimLease(kind: JobLease.Kind.evalRun, targetID: id) {
            throw EvalError(
                "run \(id) is in progress in \(held.holderDescription); wait for it to finish, "
                    + "or start a separate run with --new")
        }
    }

    /// The suite's latest unfinished run made from the same inputs, with the answers it still
    /// lacks; nil when there is none.
    private func planResume(_ loaded: LoadedSuite, items: [EvalItem], epochs: Int) throws -> Plan? {
        let planned = items.count * epochs
        guard
            let unfinished = try evals.evalRuns().last(where: {
                $0.suite == loaded.suite.name && $0.source == "loupe" && $0.status != "complete"
                    && $0.status != "failed" && $0.parentRunID == nil && $0.suiteHash == loaded.suiteHash
                    && $0.datasetHash == loaded.datasetHash && $0.epochs == epochs && $0.planned == planned
            }), let id = unfinished.id
        else { return nil }
        // Two `eval run` of one suite at once: the second finds the first's run unfinished and
        // must not join it; a run whose process was killed (its lease is stale) is taken over.
        try claim(id)
        try evals.setEvalRunStatus(id, status: "running")
        let answered = try evals.answeredEvalKeys(run: id)
        var tasks: [Task] = []
        for item in items {
            for epoch in 1...epochs where !answered.contains(EvalItemKey(itemID: item.id, epoch: epoch)) {
                tasks.append(Task(item: item, epoch: epoch))
            }
        }
        return Plan(runID: id, tasks: tasks, resumed: true)
    }
}
