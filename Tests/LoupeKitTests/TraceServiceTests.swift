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
}
