import Foundation
import LoupeStore
import Testing

/// What the agent's `read` and `sql` tools may do with the workspace.
@Suite struct WorkspaceAgentTests {
    static func workspace() throws -> Workspace {
        let workspace = try TemporaryWorkspace.make("agent")
        try CorpusTablesTests.ingest(workspace.corpus)
        return workspace
    }

    @Test func tableNamesListOurTablesOnly() throws {
        let names = try Self.workspace().agentTables.tableNames()
        #expect(names.contains("chunks") && names.contains("traces") && names.contains("eval_runs"))
        #expect(!names.contains { $0.hasPrefix("grdb_") || $0.hasPrefix("sqlite_") })
        #expect(names == names.sorted())
    }

    @Test func aSelectReturnsItsColumnsAndRowsAsText() throws {
        let result = try Self.workspace().agentTables.readOnlyQuery(
            "SELECT external_id, length(body), NULL AS absent, X'0102' AS blob, 0.5 AS half FROM documents ORDER BY id;",
            limit: 10)
        #expect(result.columns == ["external_id", "length(body)", "absent", "blob", "half"])
        #expect(result.rows == [["d1", "30", "NULL", "<2 bytes>", "0.5"], ["d2", "22", "NULL", "<2 bytes>", "0.5"]])
        #expect(!result.truncated)
    }

    @Test func moreRowsThanTheLimitAreCutAndSaidToBe() throws {
        let workspace = try Self.workspace()
        let result = try workspace.agentTables.readOnlyQuery(
            "with c as (select text from chunks) select * from c", limit: 2)
        #expect(result.rows.count == 2 && result.truncated)
        #expect(try !workspace.agentTables.readOnlyQuery("SELECT text FROM chunks", limit: 6).truncated)
    }

    @Test(arguments: [
        "DELETE FROM chunks", "UPDATE documents SET title = 'x'", "DROP TABLE chunks", "PRAGMA writable_schema = 1",
        "SELECT 1; DELETE FROM chunks", "  insert into settings values ('a', 'b', 'c')",
    ])
    func anythingButOneSelectIsRefusedAndWritesNothing(_ sql: String) throws {
        let workspace = try Self.workspace()
        let error = #expect(throws: WorkspaceError.self) { try workspace.agentTables.readOnlyQuery(sql, limit: 10) }
        #expect(error?.message.isEmpty == false)
        #expect(try workspace.corpus.corpusCounts().chunks == 6)
        #expect(try workspace.corpus.document(externalID: "d1")?.title == "Title of d1")
        #expect(try workspace.settings.setting("a") == nil)
    }

    @Test func aChunkIsReadByItsIDWithItsDocument() throws {
        let workspace = try Self.workspace()
        let first = try #require(try workspace.corpus.chunks().first)
        let chunk = try #require(try workspace.agentTables.chunk(id: first.id))
        #expect(chunk.documentID == "d1" && chunk.title == "Title of d1" && chunk.text == "lift of")
        #expect(try workspace.agentTables.chunk(id: -1) == nil)
    }
}

/// The agent's tools on a PostgreSQL workspace: the same tables listed, one SELECT read back as
/// text, and every write refused, by the check before the server and by the server's read-only
/// transaction for a write the check cannot see.
@Suite struct AgentTablesOnPostgreSQLTests {
    private func tables() throws -> AgentTables {
        let database = try StoreBackend.postgres.database("agent")
        try CorpusTablesTests.ingest(CorpusTables(database))
        return AgentTables(database)
    }

    @Test func theToolsReadAsOnAFileAndNothingWrites() throws {
        let agent = try tables()
        let names = try agent.tableNames()
        #expect(names == (try TemporaryWorkspace.make("agent").agentTables.tableNames()))
        #expect(!names.contains("loupe_migrations"))

        let result = try agent.readOnlyQuery(
            "SELECT external_id, length(body) AS n, NULL AS absent, 0.5 AS half FROM documents ORDER BY id;", limit: 10)
        #expect(result.columns == ["external_id", "n", "absent", "half"])
        #expect(result.rows == [["d1", "30", "NULL", "0.5"], ["d2", "22", "NULL", "0.5"]])
        #expect(!result.truncated)
        let cut = try agent.readOnlyQuery("with c as (select text from chunks) select * from c", limit: 2)
        #expect(cut.rows.count == 2 && cut.truncated)

        let chunk = try #require(try agent.chunk(id: 2))
        #expect(chunk.documentID == "d1" && chunk.text == "a wing")
        #expect(try agent.chunk(id: -1) == nil)

        for write in [
            "DELETE FROM chunks", "SELECT 1; DELETE FROM chunks",
            "WITH gone AS (DELETE FROM chunks RETURNING id) SELECT * FROM gone",
            "SELECT nextval(pg_get_serial_sequence('chunks', 'id'))",
        ] {
            #expect(throws: WorkspaceError.self, "\(write)") { try agent.readOnlyQuery(write, limit: 10) }
        }
        #expect(try CorpusTables(agent.database).corpusCounts().chunks == 6)
    }
}
