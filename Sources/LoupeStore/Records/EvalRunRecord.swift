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
    /// The corpus the run read, as JSON (`corpus` fingerprint, `documents`, `chunks`,
    /// `embedded`, `embedding_model`); nil for runs made before it was kept and imported logs.
    package var workspaceJSON: String?
    /// The suite's YAML, kept for runs answered by workers (`eval run --workers`), which parse it
    /// wherever they run; nil for other runs.
    package var suiteText: String?

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
        case workspaceJSON = "workspace_json"
        case suiteText = "suite_text"
    }
}
