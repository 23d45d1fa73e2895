import Foundation
import GRDB
import LoupeAgents
import LoupeBase
import LoupeCommands
import LoupeKit
import LoupeStore
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The file is the workspace (reliability finding F-4): once a process that wrote stops, the
/// `.sqlite` file alone — copied without its `-wal` — holds everything it stored, and a receiver's
/// log stays bounded in bytes while it runs.
@Suite(.serialized) struct WorkspaceFileAloneTests {
    static func fileSize(_ path: String) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// Copies the workspace file alone (not its `-wal` or `-shm`) into a directory of its own.
    static func copyAlone(_ path: String) throws -> String {
        let copy = TestEnvironment.temporaryDirectory() + "/copy.sqlite"
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        return copy
    }

    @Test func aCopyOfTheFileAloneHoldsWhatServeStoredBeforeItStopped() async throws {
        let (server, workspacePath) = try OTLPPeerTests.serve()
        let endpoint = try server.otlpHTTP()
        let line = try String(
            contentsOf: TestEnvironment.repositoryRoot.appendingPathComponent("sample-data/traces/otlp-genai.jsonl"),
            encoding: .utf8
        ).split(separator: "\n")[0]
        var request = URLRequest(url: URL(string: "\(endpoint)/v1/traces")!)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(line.utf8)
        request.timeoutInterval = 900
        let (_, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        let stopped = server.stop()
        #expect(stopped.status == 0, "\(stopped.output)")
        #expect(Self.fileSize(workspacePath + "-wal") == 0)
        let copy = try Self.copyAlone(workspacePath)
        let list = try TestEnvironment.run(["trace", "list", "--workspace", copy])
        #expect(list.status == 0, "\(list.error)")
        #expect(list.output.contains("cranfield-qa-agent"), "\(list.output)")
    }

    /// While another process has the workspace open (a TUI watching it), SQLite's own fold at
    /// close cannot run: the command folds the log itself.
    @Test func aCommandThatWroteLeavesTheLogEmpty() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let path = directory + "/w.sqlite"
        let first = try TestEnvironment.run(["workspace", "init", "--workspace", path])
        #expect(first.status == 0, "\(first.error)")
        let watching = try Workspace(path: path, access: .read)
        #expect(try watching.traces.modelPrices().isEmpty)
        let set = try TestEnvironment.run(
            ["prices", "set", "model-f4", "--input", "1.5", "--output", "2", "--workspace", path])
        #expect(set.status == 0, "\(set.error)")
        #expect(Self.fileSize(path + "-wal") == 0)
        let copy = try Self.copyAlone(path)
        let list = try TestEnvironment.run(["prices", "list", "--workspace", copy])
        #expect(list.output.contains("model-f4"), "\(list.output)\(list.error)")
        withExtendedLifetime(watching) {}
    }

    /// A reader that holds the log past the busy timeout (another process in the middle of a read):
    /// the command's fold gives up after two tries and says so on standard error, naming the file,
    /// instead of leaving the file silently without what it stored; nothing is lost, and the next
    /// command that writes folds the log.
    @Test func aFoldAReaderBlocksIsAWarningNotASilence() throws {
        let path = TestEnvironment.temporaryDirectory() + "/w.sqlite"
        let first = try TestEnvironment.run(["workspace", "init", "--workspace", path])
        #expect(first.status == 0, "\(first.error)")
        let reader = try DatabaseQueue(path: path)
        try reader.inDatabase { db in
            try db.beginTransaction(.deferred)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM settings") != nil)
            let set = try TestEnvironment.run(
                ["prices", "set", "model-fold", "--input", "1", "--output", "2", "--workspace", path],
                environment: ["LOUPE_BUSY_TIMEOUT_MS": "200"])
            #expect(set.status == 0, "\(set.error)")
            #expect(set.error.contains("warning: \(path): the write-ahead log was not folded"), "\(set.error)")
            #expect(Self.fileSize(path + "-wal") > 0)
            try db.commit()
        }
        try reader.close()
        let again = try TestEnvironment.run(
            ["prices", "set", "model-fold-2", "--input", "1", "--output", "2", "--workspace", path])
        #expect(again.status == 0 && again.error.isEmpty, "\(again.error)")
        #expect(Self.fileSize(path + "-wal") == 0)
        let list = try TestEnvironment.run(["prices", "list", "--workspace", try Self.copyAlone(path)])
        #expect(list.output.contains("model-fold") && list.output.contains("model-fold-2"), "\(list.output)")
    }

    /// Large spans, one a request: the log is folded by its size in bytes, not after a count of
    /// spans, so 40 MB of spans leave no 40 MB log beside the file while the receiver runs.
    @Test func aReceiversLogStaysBoundedInBytes() async throws {
        let path = TestEnvironment.temporaryDirectory() + "/w.sqlite"
        let workspace = try Workspace(path: path)
        let ingest = TraceIngest(workspace: workspace)
        // A 4 MB attribute: the payload column keeps it as JSON text.
        let text = String(repeating: "abcdefghij", count: 400_000)
        for i in 0..<10 {
            let spans = try GrowingTraceTests.spans(1, traceID: String(format: "%032x", i + 1), payload: 0)
            var span = spans[0]
            span.span.attributes["big"] = .string(text)
            try await ingest.submit([span], source: "OTLP/HTTP")
        }
        let log = Self.fileSize(path + "-wal")
        #expect(log < Workspace.logLimit + 2 * TraceIngest.logBound, "a \(log)-byte log after 40 MB of spans")
        ingest.drain()
        #expect(Self.fileSize(path + "-wal") == 0)
        #expect(try workspace.traces.traceSummaries().count == 10)
    }

    /// A reader holding the log when the ingest drains: its last fold is tried twice, then the
    /// statistics say why the log stays beside the file, and so does the line `loupe serve`
    /// prints when it stops.
    @Test func aDrainAReaderBlocksIsInTheStatistics() async throws {
        let path = TestEnvironment.temporaryDirectory() + "/w.sqlite"
        let workspace = try Workspace(path: path, busyTimeout: 0.1)
        let ingest = TraceIngest(workspace: workspace)
        try await ingest.submit(
            try GrowingTraceTests.spans(3, traceID: String(format: "%032x", 7), payload: 0), source: "OTLP/HTTP")
        #expect(ingest.statistics.logNotFolded == nil)
        let reader = try DatabaseQueue(path: path)
        try reader.inDatabase { db in
            try db.beginTransaction(.deferred)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM spans") == 3)
            ingest.drain()
            try db.commit()
        }
        let why = try #require(ingest.statistics.logNotFolded)
        #expect(why.hasPrefix(path + ": the write-ahead log was not folded"), "\(why)")
        #expect(Listener.line(ingest.statistics).contains("was not folded"))
        #expect(Self.fileSize(path + "-wal") > 0)
        try reader.close()
        #expect(try workspace.traces.traceSummaries().count == 1)
    }
}
