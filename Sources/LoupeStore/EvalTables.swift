import Foundation
import GRDB

/// The eval runs, their answers and scores, and the work items workers lease: written once, in
/// SQL both backends run, over a ``SQLDatabase`` (a SQLite ``Workspace`` or a PostgreSQL
/// workspace).
///
/// Thread-safety: any thread; each method is one read or one transaction.
package struct EvalTables: Sendable {
    package let database: any SQLDatabase

    package init(_ database: any SQLDatabase) {
        self.database = database
    }

    var dialect: SQLDialect { database.dialect }

    // MARK: - Runs

    package func createEvalRun(_ run: EvalRunRecord) throws(WorkspaceError) -> Int64 {
        try database.writeStatements { sql in
            guard let id = try sql.insert(run, returningID: true).id else {
                throw WorkspaceError(.database, path: "eval_runs", message: "the new run was given no id")
            }
            return id
        }
    }

    package func evalRuns() throws(WorkspaceError) -> [EvalRunRecord] {
        try database.readStatements { sql in try sql.fetch(EvalRunRecord.self, "SELECT * FROM eval_runs ORDER BY id") }
    }

    package func evalRun(_ id: Int64) throws(WorkspaceError) -> EvalRunRecord? {
        try database.readStatements { sql in
            try sql.fetch(EvalRunRecord.self, "SELECT * FROM eval_runs WHERE id = ?", [.integer(id)]).first
        }
    }

    /// The run imported from `key` (an Inspect log's run id and task), if any.
    package func evalRun(source: String, key: String) throws(WorkspaceError) -> EvalRunRecord? {
        try database.readStatements { sql in
            try sql.fetch(
                EvalRunRecord.self, "SELECT * FROM eval_runs WHERE source = ? AND source_key = ?",
                [.text(source), .text(key)]
            ).first
        }
    }

    package func finishEvalRun(_ id: Int64, status: String, summaryJSON: String?, at: Date = Date())
        throws(WorkspaceError)
    {
        try database.writeStatements { sql in
            try sql.execute(
                "UPDATE eval_runs SET status = ?, ended_at = ?, summary_json = ? WHERE id = ?",
                [.text(status), SQLValue(at), SQLValue(summaryJSON), .integer(id)])
        }
    }

    package func setEvalRunStatus(_ id: Int64, status: String) throws(WorkspaceError) {
        try database.writeStatements { sql in
            try sql.execute(
                "UPDATE eval_runs SET status = ?, ended_at = NULL WHERE id = ?", [.text(status), .integer(id)])
        }
    }

    // MARK: - Answers

    /// Stores one answer with its scores, all or nothing, and marks its work item done (when it
    /// has one) in the same transaction: a run killed between two calls keeps every answer it
    /// finished and none half-written.
    ///
    /// Two processes can answer the same (item, epoch) of one run (two `eval run` of a suite at
    /// once both resume it; a worker whose lease ran out while it still worked): the first
    /// answer stored wins and the other is dropped, so nothing is scored twice. A `worker`'s
    /// answer is dropped too once another worker has leased its item: the item, its answer and
    /// the trace of its model call (``importWorkTrace(_:run:itemID:epoch:worker:)``) are then
    /// the other worker's.
    ///
    /// - Returns: whether this answer was stored (false when another was there first).
    @discardableResult
    package func recordEvalResult(
        _ result: EvalResultRecord, scores: [EvalScoreRecord], worker: String? = nil
    ) throws(WorkspaceError) -> Bool {
        let now = dialect.nowSeconds
        return try database.writeStatements { sql in
            if let worker {
                guard try Self.holds(worker, run: result.runID, itemID: result.itemID, epoch: result.epoch, sql: sql)
                else { return false }
            }
            guard try sql.insert(result, ignoringConflicts: true).inserted > 0 else { return false }
            for score in scores { try sql.insert(score) }
            _ = try sql.changes(
                """
                UPDATE eval_work_items SET done_at = \(now), worker = COALESCE(?, worker)
                WHERE run_id = ? AND item_id = ? AND epoch = ?
                """,
                [SQLValue(worker), .integer(result.runID), .text(result.itemID), .integer(Int64(result.epoch))])
            return true
        }
    }

    /// Stores many answers in one transaction (imports, answers carried over).
    package func recordEvalResults(_ results: [(EvalResultRecord, [EvalScoreRecord])]) throws(WorkspaceError) {
        try database.writeStatements { sql in
            for (result, scores) in results {
                try sql.insert(result)
                for score in scores { try sql.insert(score) }
            }
        }
    }

    /// A run's answers in the order they were stored.
    package func evalResults(run: Int64) throws(WorkspaceError) -> [EvalResultRecord] {
        // SQLite's rowid is the order of insertion; PostgreSQL keeps no such order, and an
        // answer's finishing time (milliseconds) comes closest.
        let order = dialect == .sqlite ? "rowid" : "finished_at, item_id, epoch"
        return try database.readStatements { sql in
            try sql.fetch(
                EvalResultRecord.self, "SELECT * FROM eval_results WHERE run_id = ? ORDER BY \(order)",
                [.integer(run)])
        }
    }

    package func evalScores(run: Int64) throws(WorkspaceError) -> [EvalScoreRecord] {
        try database.readStatements { sql in
            try sql.fetch(EvalScoreRecord.self, "SELECT * FROM eval_scores WHERE run_id = ?", [.integer(run)])
        }
    }

    /// The (item, epoch) pairs a run has answered: what a resumed run skips.
    package func answeredEvalKeys(run: Int64) throws(WorkspaceError) -> Set<EvalItemKey> {
        try database.readStatements { sql in
            Set(
                try sql.execute("SELECT item_id, epoch FROM eval_results WHERE run_id = ?", [.integer(run)]).map {
                    EvalItemKey(itemID: $0.text("item_id") ?? "", epoch: Int($0.integer("epoch") ?? 0))
                })
        }
    }

    /// The traces the answers of `source`'s runs link to.
    package func evalTraceIDs(source: String) throws(WorkspaceError) -> Set<Int64> {
        try database.readStatements { sql in
            Set(
                try sql.execute(
                    """
                    SELECT r.trace_id FROM eval_results r JOIN eval_runs e ON e.id = r.run_id
                    WHERE e.source = ? AND r.trace_id IS NOT NULL
                    """, [.text(source)]
                ).compactMap { $0.integer("trace_id") })
        }
    }
}
