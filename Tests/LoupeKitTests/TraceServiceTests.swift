import Foundation
import GRDB
import LoupeAgents
import LoupeBase
import LoupeKit
import LoupeStore
import Testing

@Suite struct TraceServiceTests {
    @Test func sourcesAreStoredCompressedAndOlderRowsStillRead() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-ts-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let workspace = try Workspace(path: directory + "/w.sqlite")
        let service = TraceService(workspace: workspace)
        let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../sample-data/traces/otlp-genai.jsonl").standardized.path
        _ = try service.importFiles([sample])
        let stored = try #require(try workspace.spanPayload(trace: 1, ordinal: 1))
        #expect(stored.rawJSON == nil && (stored.rawZstd?.count ?? 0) > 100)
        let raw = try #require(try service.payload(trace: 1, ordinal: 1).raw)
        #expect(raw["name"] == "chat gpt-4o-mini")
        // A workspace written before v9 kept the source as JSON text.
        try workspace.write { db in
            try db.execute(sql: "UPDATE spans SET raw_json = '{\"name\":\"old\"}', raw_zstd = NULL WHERE ordinal = 1")
        }
        #expect(try service.payload(trace: 1, ordinal: 1).raw?["name"] == "old")
        // Whole traces come back for export with the same content.
        let back = try service.trace(1)
        #expect(back.spans.count == 6 && back.spans[4].tool?.error == "division by zero")
    }

    /// Sessions from the sample traces: an Inspect sample's two epochs are one session, the OTLP
    /// run with `gen_ai.conversation.id` is one; traces that name none are in no session. A
    /// workspace from before v18 gains the same session ids when it is opened.
    @Test func sessionsGroupTurnsAndAnOlderWorkspaceGainsThem() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-ts-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/w.sqlite"
        let service = TraceService(workspace: try Workspace(path: path))
        let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../sample-data/traces").standardized.path
        _ = try service.importFiles(["otlp-genai.jsonl", "inspect-arith.json"].map { samples + "/" + $0 })
        let sessions = try service.sessions()
        #expect(sessions.map(\.turns.count).sorted() == [1, 2, 2, 2])
        let conversation = try #require(sessions.first { $0.id == "conv-0001" })
        #expect(conversation.turns.map(\.name) == ["invoke_agent cranfield-qa"])
        #expect(conversation.inputTokens == 1485 && conversation.errorCount == 1)
        let sample = try #require(sessions.first { $0.id.hasSuffix("/q1") })
        #expect(sample.turns.map(\.name) == ["arith · q1 · epoch 1", "arith · q1 · epoch 2"])
        #expect(sample.steps == sample.turns[0].stepCount + sample.turns[1].stepCount)
        let before = try service.list().map(\.sessionID)

        // Back to v17: the columns gone and the migration not applied; opening migrates again.
        try service.workspace.write { db in
            try db.execute(sql: "DROP INDEX traces_session")
            try db.execute(sql: "ALTER TABLE traces DROP COLUMN session_id")
            try db.execute(sql: "ALTER TABLE traces DROP COLUMN awaiting_parents")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier LIKE 'v18:%'")
        }
        let reopened = TraceService(workspace: try Workspace(path: path))
        #expect(try reopened.workspace.schemaVersion() == Workspace.migrationIdentifiers.count)
        #expect(try reopened.list().map(\.sessionID) == before)
    }
}
