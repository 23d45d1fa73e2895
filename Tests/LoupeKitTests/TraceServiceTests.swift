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
        let stored = try #require(try workspace.traces.spanPayload(trace: 1, ordinal: 1))
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
        let workspace = try Workspace(path: path)
        let service = TraceService(workspace: workspace)
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
        try workspace.write { db in
            try db.execute(sql: "DROP INDEX traces_session")
            try db.execute(sql: "ALTER TABLE traces DROP COLUMN session_id")
            try db.execute(sql: "ALTER TABLE traces DROP COLUMN awaiting_parents")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier LIKE 'v18:%'")
        }
        let reopenedWorkspace = try Workspace(path: path)
        let reopened = TraceService(workspace: reopenedWorkspace)
        #expect(try reopenedWorkspace.schemaVersion() == Workspace.migrationIdentifiers.count)
        #expect(try reopened.list().map(\.sessionID) == before)
    }
}

/// An OTLP JSON Lines file is read a block of lines at a time, each span put in its stored form
/// as its line is parsed: what it stores must be what reading the whole file stores.
@Suite struct OTLPLinesImportTests {
    private static let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../sample-data/traces/otlp-genai.jsonl").standardized.path

    private static func write(_ lines: [String]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-lines-\(UUID()).jsonl").path
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The sample's traces interleaved line by line, a blank line, and one span sent twice: the
    /// retry has another name and an earlier start, so the tree keeps the retry, not the first.
    @Test func blocksOfLinesStoreWhatTheWholeFileStores() throws {
        let lines = try TextFile.read(Self.sample).split(separator: "\n").map(String.init)
        let start = try #require(lines[0].range(of: #""startTimeUnixNano":"\d+""#, options: .regularExpression))
        let retry = lines[0].replacingCharacters(in: start, with: #""startTimeUnixNano":"1000""#)
            .replacingOccurrences(of: "chat gpt-4o-mini", with: "chat retried")
        let order = [0, 6, 1, 8, 2, 7, 3, 9, 4, 10, 5]
        let path = try Self.write(order.map { lines[$0] } + ["", "  ", retry])
        defer { try? FileManager.default.removeItem(atPath: path) }

        let whole = try TraceImport.traces(Data(try TextFile.bytes(path)), file: path).map {
            TraceService.record($0, sourceFile: path)
        }
        // Blocks smaller than a line: every line is a block of its own.
        for blockBytes in [100, 4_000, 1 << 20] {
            var fractions: [Double] = []
            let read = try #require(try TraceService.otlpLines(path, blockBytes: blockBytes) { fractions.append($0) })
            let records = read.map { TraceService.record($0.trace, sourceFile: $0.file, encoded: $0.encoded) }
            #expect(records.map(\.summary.externalID) == whole.map(\.summary.externalID))
            #expect(records.map(\.contentHash) == whole.map(\.contentHash))
            #expect(records.map { $0.spans.map(\.payloadJSON) } == whole.map { $0.spans.map(\.payloadJSON) })
            #expect(records.map { $0.spans.map(\.rawZstd) } == whole.map { $0.spans.map(\.rawZstd) })
            #expect(records.map { $0.spans.map(\.row) } == whole.map { $0.spans.map(\.row) })
            #expect(fractions == fractions.sorted() && fractions.allSatisfy { $0 <= 1 })
        }
        let first = try #require(whole.first { $0.spans.contains { $0.row.name == "chat retried" } })
        #expect(first.spans.filter { $0.row.spanID == "d23f0824128b2f33" }.map(\.row.name) == ["chat retried"])
    }

    /// A request too large to parse whole (here: larger than the block), on a line of its own or
    /// spread over lines as a pretty-printed document, is walked and its spans parsed one by one:
    /// it stores what reading the whole file stores.
    @Test func aLargeRequestIsReadSpanBySpan() throws {
        let lines = try TextFile.read(Self.sample).split(separator: "\n").map(String.init)
        let requests = try lines.map { try JSONValue.parse($0) }
        let merged = JSONValue.object(["resourceSpans": .array(requests.flatMap { $0["resourceSpans"]?.array ?? [] })])
        let oneLine = try Self.write([lines[9], merged.compactJSON, lines[10]])
        let pretty = try Self.write([merged.prettyJSON])
        defer { for path in [oneLine, pretty] { try? FileManager.default.removeItem(atPath: path) } }
        for path in [oneLine, pretty] {
            let whole = try TraceImport.traces(Data(try TextFile.bytes(path)), file: path).map {
                TraceService.record($0, sourceFile: path)
            }
            let read = try #require(try TraceService.otlpLines(path, blockBytes: 4_000))
            let records = read.map { TraceService.record($0.trace, sourceFile: $0.file, encoded: $0.encoded) }
            #expect(records.map(\.contentHash) == whole.map(\.contentHash) && records.count == 3)
            #expect(records.map { $0.spans.map(\.row) } == whole.map { $0.spans.map(\.row) })
        }

        // A span that cannot be read is named by its line and path; so is a request cut short.
        var broken = requests[2]["resourceSpans"]!.array!
        broken[0] = try JSONValue.parse(
            #"{"scopeSpans":[{"spans":[{"spanId":"00f067aa0ba902b7","startTimeUnixNano":"1"}]}]}"#)
        let bad = JSONValue.object(["resourceSpans": .array(requests[0]["resourceSpans"]!.array! + broken)])
        let badPath = try Self.write([lines[0], bad.compactJSON])
        let cutPath = try Self.write([lines[0], String(merged.compactJSON.dropLast(40))])
        defer { for path in [badPath, cutPath] { try? FileManager.default.removeItem(atPath: path) } }
        let error = #expect(throws: TraceImportError.self) { try TraceService.otlpLines(badPath, blockBytes: 1_000) }
        #expect(error?.location.line == 2 && error?.field == "resourceSpans[1].scopeSpans[0].spans[0].traceId")
        let cut = #expect(throws: TraceImportError.self) { try TraceService.otlpLines(cutPath, blockBytes: 1_000) }
        #expect(cut?.location.line == 2 && cut?.description.contains("not JSON") == true)
    }

    @Test func aBadLineInALaterBlockIsNamedByItsNumber() throws {
        let lines = try TextFile.read(Self.sample).split(separator: "\n").map(String.init)
        let bad = #"{"resourceSpans":[{"scopeSpans":[{"spans":[{"spanId":"00f067aa0ba902b7"}]}]}]}"#
        let path = try Self.write(Array(lines[0..<3]) + ["", bad] + Array(lines[3...]))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let error = #expect(throws: TraceImportError.self) { try TraceService.otlpLines(path, blockBytes: 2_000) }
        #expect(error?.location.line == 5 && error?.field == "resourceSpans[0].scopeSpans[0].spans[0].traceId")
        let notJSON = try Self.write(Array(lines[0..<2]) + ["{\"resourceSpans\": ["])
        defer { try? FileManager.default.removeItem(atPath: notJSON) }
        let cut = #expect(throws: TraceImportError.self) { try TraceService.otlpLines(notJSON, blockBytes: 2_000) }
        #expect(cut?.location.line == 3 && cut?.description.contains("not JSON") == true)
    }

    /// Other formats, and an OTLP document spread over lines, are read whole.
    @Test func otherFilesAreLeftToTheWholeFileReader() throws {
        let samples = URL(fileURLWithPath: Self.sample).deletingLastPathComponent().path
        #expect(try TraceService.otlpLines(samples + "/inspect-arith.json") == nil)
        let pretty = try JSONValue.parse(String(try TextFile.read(Self.sample).split(separator: "\n")[0])).prettyJSON
        let path = try Self.write([pretty])
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try TraceService.otlpLines(path) == nil)
        let service = TraceService(workspace: try Workspace(path: path + ".sqlite"))
        #expect(try service.importFiles([path]).spans == 1)
    }

    /// Each span one below its parent, a span whose parent is not in the trace at 0, an id given
    /// twice taking its last depth: over 5,000 spans, so the id table probes past collisions. The
    /// reference is the dictionary the open used before.
    @Test func openingATraceGivesEachSpanItsDepth() throws {
        let workspace = try KitFixtures.workspace("depths")
        var spans = [TraceSpan(spanID: "root", parentID: nil, kind: .agent, name: "agent", startNs: 0, endNs: 10)]
        for i in 0..<5_000 {
            // Chains of five under the root, each link's parent the one before.
            let parent = i % 5 == 0 ? "root" : "s\(i - 1)"
            spans.append(
                TraceSpan(spanID: "s\(i)", parentID: parent, kind: .llm, name: "call", startNs: Int64(i), endNs: nil))
        }
        spans.append(TraceSpan(spanID: "orphan", parentID: "gone", kind: .tool, name: "t", startNs: 1, endNs: 2))
        spans.append(TraceSpan(spanID: "s3", parentID: "orphan", kind: .tool, name: "again", startNs: 3, endNs: 4))
        spans.append(TraceSpan(spanID: "after", parentID: "s3", kind: .tool, name: "t", startNs: 5, endNs: 6))
        let trace = Trace(externalID: "deep", format: .loupe, name: "deep", spans: spans)
        let id = try #require(
            try workspace.traces.importTraces([TraceService.record(trace, sourceFile: nil)]).ids.first)
        let loaded = try TraceService(workspace: workspace).load(id)
        var depthOf: [String: Int] = [:]
        let expected = loaded.spans.map { span -> Int in
            let depth = span.parentSpanID.flatMap { depthOf[$0] }.map { $0 + 1 } ?? 0
            depthOf[span.spanID] = depth
            return depth
        }
        #expect(loaded.depths == expected)
        #expect(expected.max() == 5 && expected.last == 2)
    }
}
