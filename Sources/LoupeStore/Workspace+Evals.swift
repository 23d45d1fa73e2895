import Foundation

/// The eval tables of a SQLite workspace: ``EvalTables`` holds their SQL, written once for both
/// backends.
extension Workspace {
    package var evals: EvalTables { EvalTables(self) }

    package func createEvalRun(_ run: EvalRunRecord) throws(WorkspaceError) -> Int64 {
        try evals.createEvalRun(run)
    }

    package func evalRuns() throws(WorkspaceError) -> [EvalRunRecord] { try evals.evalRuns() }

    package func evalRun(_ id: Int64) throws(WorkspaceError) -> EvalRunRecord? { try evals.evalRun(id) }

    /// See ``EvalTables/recordEvalResult(_:scores:worker:)``.
    package func recordEvalResult(_ result: EvalResultRecord, scores: [EvalScoreRecord]) throws(WorkspaceError) {
        try evals.recordEvalResult(result, scores: scores)
    }

    package func recordEvalResults(_ results: [(EvalResultRecord, [EvalScoreRecord])]) throws(WorkspaceError) {
        try evals.recordEvalResults(results)
    }

    package func evalResults(run: Int64) throws(WorkspaceError) -> [EvalResultRecord] {
        try evals.evalResults(run: run)
    }

    package func evalScores(run: Int64) throws(WorkspaceError) -> [EvalScoreRecord] { try evals.evalScores(run: run) }

    package func answeredEvalKeys(run: Int64) throws(WorkspaceError) -> Set<EvalItemKey> {
        try evals.answeredEvalKeys(run: run)
    }

    package func finishEvalRun(_ id: Int64, status: String, summaryJSON: String?, at: Date = Date())
        throws(WorkspaceError)
    {
        try evals.finishEvalRun(id, status: status, summaryJSON: summaryJSON, at: at)
    }

    package func setEvalRunStatus(_ id: Int64, status: String) throws(WorkspaceError) {
        try evals.setEvalRunStatus(id, status: status)
    }

    package func evalTraceIDs(source: String) throws(WorkspaceError) -> Set<Int64> {
        try evals.evalTraceIDs(source: source)
    }

    package func evalRun(source: String, key: String) throws(WorkspaceError) -> EvalRunRecord? {
        try evals.evalRun(source: source, key: key)
    }
}
