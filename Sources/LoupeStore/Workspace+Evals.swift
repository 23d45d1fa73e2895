import Foundation

/// The eval tables of a SQLite workspace: ``EvalTables`` holds their SQL, written once for both
/// backends.
extension Workspace {
    package var evals: EvalTables { EvalTables(self) }
}
