import Foundation
import GRDB

/// What the agent's `read` and `sql` tools need from the workspace: ``AgentTables`` over this file.
extension Workspace {
    package var agentTables: AgentTables { AgentTables(self) }

    package func chunk(id: Int64) throws(WorkspaceError) -> StoredChunk? { try agentTables.chunk(id: id) }

    package func tableNames() throws(WorkspaceError) -> [String] { try agentTables.tableNames() }

    package func readOnlyQuery(_ sql: String, limit: Int) throws(WorkspaceError) -> (
        columns: [String], rows: [[String]], truncated: Bool
    ) { try agentTables.readOnlyQuery(sql, limit: limit) }

    /// ``AgentTables/readOnlyQuery(_:limit:)`` on SQLite, for one SELECT already checked: the
    /// statement must be read-only, on a read-only connection (``Workspace/read(_:)``), so nothing
    /// it does can write.
    func sqliteReadOnlyQuery(_ trimmed: String, limit: Int) throws(WorkspaceError) -> (
        columns: [String], rows: [[String]], truncated: Bool
    ) {
        try read { db in
            let statement = try db.makeStatement(sql: trimmed)
            guard statement.isReadonly else {
                throw WorkspaceError(.database, path: self.path, message: "the statement writes")
            }
            let cursor = try Row.fetchCursor(statement)
            var rows: [[String]] = []
            var truncated = false
            while let row = try cursor.next() {
                if rows.count == limit {
                    truncated = true
                    break
                }
                rows.append(row.databaseValues.map { AgentTables.text(SQLValue($0)) })
            }
            return (statement.columnNames, rows, truncated)
        }
    }
}
