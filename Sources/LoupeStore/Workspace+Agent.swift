import Foundation

/// What the agent's `read` and `sql` tools need from the workspace: ``AgentTables`` over this file.
extension Workspace {
    package var agentTables: AgentTables { AgentTables(self) }
}
