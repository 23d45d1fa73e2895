import Foundation
import GRDB

/// A run of an eval suite, or an Inspect log imported as one. JSON columns hold what the eval
/// layer defines (target configuration, scorers, summary); the store only keeps them.
package struct EvalRunRecord: Codable, FetchableRecord, MutablePersistableRecord, Hashable, Sendable {
    package static let databaseTableName = "eval_runs"
    package var id: Int64?
    package var suite: String
    package var suiteFile: String?
    package var suiteHash: String
    package var datasetHash: String
    package var targetKind: String
    package var targetJSON: String
    /// The scorers' names in the suite's order, as a JSON array.
    package var scorersJSON: String
    package var epochs: Int
    /// Answers the run set out to make (items × epochs).
    package var planned: Int
    /// running, complete, cancelled, failed (or, for a run killed mid-way, still running).
    package var status: String
    /// `loupe` for runs made here, `inspect` for imported logs.
    package var source: String
    package var sourceKey: String?
    package var parentRunID: Int64?
    package var loupeVersion: String
    package var gitRevision: String?
    package var startedAt: Date
    package var endedAt: Date?
    package var summaryJSON: String?

    package init(
        suite: String, suiteFile: String?, suiteHash: String, datasetHash: String, targetKind: String,
        targetJSON: String, scorersJSON: String, epochs: Int, planned: Int, status: String = "running",
        source: String = "loupe", sourceKey: String? = nil, parentRunID: Int64? = nil, loupeVersion: String,
        gitRevision: String?, startedAt: Date = Date()
    ) {
        self.suite = suite
        self.suiteFile = suiteFile
        self.suiteHash = suiteHash
        self.datasetHash = datasetHash
        self.targetKind = targetKind
        self.targetJSON = targetJSON
        self.scorersJSON = scorersJSON
        self.epochs = epochs
        self.planned = planned
        self.status = status
        self.source = source
        self.sourceKey = sourceKey
        self.parentRunID = parentRunID
        self.loupeVersion = loupeVersion
        self.gitRevision = gitRevision
        self.startedAt = startedAt
    }

    package mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    enum CodingKeys: String, CodingKey {
        case id, suite, epochs, planned, status, source
        case suiteFile = "suite_file"
        case suiteHash = "suite_hash"
        case datasetHash = "dataset_hash"
        case targetKind = "target_kind"
        case targetJSON = "target_json"
        case scorersJSON = "scorers_json"
        case sourceKey = "source_key"
        case parentRunID = "parent_run_id"
        case loupeVersion = "loupe_version"
        case gitRevision = "git_revision"
        case startedAt = "started_at"
        case endedAt = "ended_at"
        case summaryJSON = "summary_json"
    }
}

/// One answer of a run: an item at an epoch.
package struct EvalResultRecord: Codable, FetchableRecord, PersistableRecord, Hashable, Sendable {
    package static let databaseTableName = "eval_results"
    package var runID: Int64
    package var itemID: String
    package var epoch: Int
    package var input: String
    package var targetsJSON: String
    package var output: String?
    package var error: String?
    package var latencyMs: Double?
    package var inputTokens: Int?
    package var outputTokens: Int?
    package var cost: Double?
    package var confidence: Double?
    package var traceID: Int64?
    package var retrievalRecordID: Int64?
    package var metadataJSON: String
    package var finishedAt: Date

    package init(
        runID: Int64, itemID: String, epoch: Int, input: String, targetsJSON: String, output: String?, error: String?,
        latencyMs: Double?, inputTokens: Int? = nil, outputTokens: Int? = nil, cost: Double? = nil,
        confidence: Double? = nil, traceID: Int64? = nil, retrievalRecordID: Int64? = nil, metadataJSON: String = "{}",
        finishedAt: Date = Date()
    ) {
        self.runID = runID
        self.itemID = itemID
        self.epoch = epoch
        self.input = input
        self.targetsJSON = targetsJSON
        self.output = output
        self.error = error
        self.latencyMs = latencyMs
        self.inputTokens = inputTokens
        self.outputTokens = outputTokens
        self.cost = cost
        self.confidence = confidence
        self.traceID = traceID
        self.retrievalRecordID = retrievalRecordID
        self.metadataJSON = metadataJSON
        self.finishedAt = finishedAt
    }

    enum CodingKeys: String, CodingKey {
        case epoch, input, output, error, cost, confidence
        case runID = "run_id"
        case itemID = "item_id"
        case targetsJSON = "targets_json"
        case latencyMs = "latency_ms"
        case inputTokens = "input_tokens"
        case outputTokens = "output_tokens"
        case traceID = "trace_id"
        case retrievalRecordID = "retrieval_record_id"
        case metadataJSON = "metadata_json"
        case finishedAt = "finished_at"
    }
}

package struct EvalScoreRecord: Codable, FetchableRecord, PersistableRecord, Hashable, Sendable {
    package static let databaseTableName = "eval_scores"
    package var runID: Int64
    package var itemID: String
    package var epoch: Int
    package var scorer: String
    package var value: Double
    package var passed: Bool?
    package var explanation: String
    package var detailsJSON: String?

    package init(
        runID: Int64, itemID: String, epoch: Int, scorer: String, value: Double, passed: Bool?, explanation: String,
        detailsJSON: String? = nil
    ) {
        self.runID = runID
        self.itemID = itemID
        self.epoch = epoch
        self.scorer = scorer
        self.value = value
        self.passed = passed
        self.explanation = explanation
        self.detailsJSON = detailsJSON
    }

    enum CodingKeys: String, CodingKey {
        case epoch, scorer, value, passed, explanation
        case runID = "run_id"
        case itemID = "item_id"
        case detailsJSON = "details_json"
    }
}

extension Workspace {
    package func createEvalRun(_ run: EvalRunRecord) throws(WorkspaceError) -> Int64 {
        try write { db in
            var run = run
            try run.insert(db)
            return run.id!
        }
    }

    package func evalRuns() throws(WorkspaceError) -> [EvalRunRecord] {
        try read { db in try EvalRunRecord.order(Column("id")).fetchAll(db) }
    }

    package func evalRun(_ id: Int64) throws(WorkspaceError) -> EvalRunRecord? {
        try read { db in try EvalRunRecord.fetchOne(db, key: id) }
    }

    /// Stores one answer with its scores, all or nothing: a run killed between two calls keeps
    /// every answer it finished and none half-written.
    package func recordEvalResult(_ result: EvalResultRecord, scores: [EvalScoreRecord]) throws(WorkspaceError) {
        try write { db in
            try result.insert(db)
            for score in scores { try score.insert(db) }
        }
    }

    /// Stores many answers in one transaction (imports).
    package func recordEvalResults(_ results: [(EvalResultRecord, [EvalScoreRecord])]) throws(WorkspaceError) {
        try write { db in
            for (result, scores) in results {
                try result.insert(db)
                for score in scores { try score.insert(db) }
            }
        }
    }

    package func evalResults(run: Int64) throws(WorkspaceError) -> [EvalResultRecord] {
        try read { db in
            try EvalResultRecord.filter(Column("run_id") == run).order(Column("rowid")).fetchAll(db)
        }
    }

    package func evalScores(run: Int64) throws(WorkspaceError) -> [EvalScoreRecord] {
        try read { db in try EvalScoreRecord.filter(Column("run_id") == run).fetchAll(db) }
    }

    /// The (item, epoch) pairs a run has answered: what a resumed run skips.
    package func answeredEvalKeys(run: Int64) throws(WorkspaceError) -> Set<EvalItemKey> {
        try read { db in
            Set(
                try Row.fetchAll(db, sql: "SELECT item_id, epoch FROM eval_results WHERE run_id = ?", arguments: [run])
                    .map { EvalItemKey(itemID: $0["item_id"], epoch: $0["epoch"]) })
        }
    }

    package func finishEvalRun(_ id: Int64, status: String, summaryJSON: String?, at: Date = Date())
        throws(WorkspaceError)
    {
        try write { db in
            try db.execute(
                sql: "UPDATE eval_runs SET status = ?, ended_at = ?, summary_json = ? WHERE id = ?",
                arguments: [status, at, summaryJSON, id])
        }
    }

    package func setEvalRunStatus(_ id: Int64, status: String) throws(WorkspaceError) {
        try write { db in
            try db.execute(
                sql: "UPDATE eval_runs SET status = ?, ended_at = NULL WHERE id = ?", arguments: [status, id])
        }
    }

    /// The traces the answers of `source`'s runs link to.
    package func evalTraceIDs(source: String) throws(WorkspaceError) -> Set<Int64> {
        try read { db in
            Set(
                try Int64.fetchAll(
                    db,
                    sql: """
                        SELECT r.trace_id FROM eval_results r JOIN eval_runs e ON e.id = r.run_id
                        WHERE e.source = ? AND r.trace_id IS NOT NULL
                        """, arguments: [source]))
        }
    }

    /// The run imported from `key` (an Inspect log's run id and task), if any.
    package func evalRun(source: String, key: String) throws(WorkspaceError) -> EvalRunRecord? {
        try read { db in
            try EvalRunRecord.filter(Column("source") == source && Column("source_key") == key).fetchOne(db)
        }
    }
}
