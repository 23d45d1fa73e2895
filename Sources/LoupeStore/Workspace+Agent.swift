import Foundation

/// What the agent's `read` and `sql` tools need from the workspace: ``AgentTables`` over this file.
extension Workspace {
    package var agentTables: AgentTables { AgentTables(self) }

    package func chunk(id: Int64) throws(WorkspaceError) -> StoredChunk? { try agentTables.chunk(id: id) }

    package func tableNames() throws(WorkspaceError) -> [String] { try agentTables.tableNames() }

    package func readOnlyQuery(_ sql: String, limit: Int) throws(WorkspaceError) -> (
        columns: [String], rows: [[String]], truncated: Bool
    ) { try agentTables.readOnlyQuery(sql, limit: limit) }
}
