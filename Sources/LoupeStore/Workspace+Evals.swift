import Foundation
import GRDB

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
            // Two processes can answer the same (item, epoch) of one run (two `eval run` of a suite
            // at once both resume it): the first answer stored wins, the other is dropped, so
            // nothing is scored twice and neither dies on the unique key.
            try result.insert(db, onConflict: .ignore)
            guard db.changesCount > 0 else { return }
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
