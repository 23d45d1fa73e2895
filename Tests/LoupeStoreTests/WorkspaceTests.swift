import Foundation
import GRDB
import LoupeStore
import Testing

/// Workspace tests run on real files in a temporary directory: WAL, locking and the file
/// header are what they test.
@Suite struct WorkspaceTests {
    let directory: String

    init() throws {
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent("loupe-store-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    private func path(_ name: String = "w.sqlite") -> String { directory + "/" + name }

    @Test func createsAWorkspaceInWALModeWithTheCurrentSchema() throws {
        let workspace = try Workspace(path: path())
        let info = try workspace.info()
        #expect(info.journalMode == "wal")
        #expect(info.schemaVersion == Workspace.migrationIdentifiers.count)
        #expect(
            info.tables.map(\.name) == [
                "ann_sweeps", "ceilings", "chunks", "command_history", "documents", "eval_results", "eval_runs",
                "eval_scores", "eval_work_items",
                "job_leases", "kernel_runs", "machine_profiles", "model_prices",
                "models", "profiler_events", "profiler_lanes", "profiler_names", "profiler_traces", "qrels",
                "qrels_queries",
                "retrieval_evals", "retrieval_indexes", "retrieval_records",
                "review_assignments", "review_items", "review_labels", "review_queues", "review_skips",
                "sae_activation_sets",
                "sae_activation_shards", "sae_feature_indexes", "sae_feature_labels", "sae_models", "sae_tokens",
                "sae_training_log",
                "settings", "sources", "spans", "trace_model_usage", "trace_revision_clock", "trace_scores", "traces",
            ])
        let header = try DatabaseQueue(path: path()).read { db in try Int32.fetchOne(db, sql: "PRAGMA application_id") }
        #expect(header == Workspace.applicationID)
    }

    @Test func settingsAndHistoryPersistAcrossOpens() throws {
        do {
            let workspace = try Workspace(path: path())
            try workspace.settings.setSetting("theme", to: "light")
            try workspace.settings.setSetting("theme", to: "mono")
            try workspace.settings.recordHistory("workspace info", source: .tui)
            try workspace.settings.recordHistory("theme mono", source: .tui)
            try workspace.settings.recordHistory("from the repl", source: .repl)
        }
        let reopened = try Workspace(path: path())
        #expect(try reopened.settings.setting("theme") == "mono")
        #expect(try reopened.settings.setting("missing") == nil)
        #expect(try reopened.settings.history(source: .tui) == ["workspace info", "theme mono"])
        #expect(try reopened.settings.history(source: .tui, limit: 1) == ["theme mono"])
    }

    @Test func aCredentialTypedOnTheCommandLineIsNotKeptInHistory() throws {
        let secret = "sk-history-\(UUID().uuidString)"
        let line = "agent run \"q\" --provider openai --base-url http://user:\(secret)@127.0.0.1:9/ --retries 0"
        do {
            let workspace = try Workspace(path: path())
            try workspace.settings.recordHistory(line, source: .tui)
            try workspace.settings.recordHistory("agent run q --api-key \(secret)", source: .tui)
            #expect(
                try workspace.settings.history(source: .tui) == [
                    "agent run \"q\" --provider openai --base-url http://user:[redacted]@127.0.0.1:9/ --retries 0",
                    "agent run q --api-key [redacted]",
                ])
        }
        for file in [path(), path() + "-wal"] where FileManager.default.fileExists(atPath: file) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
            #expect(bytes.range(of: Data(secret.utf8)) == nil)
        }
    }

    @Test func aSecondWriterGetsBusyInsteadOfCorruptingTheFile() async throws {
        let first = try Workspace(path: path())
        let second = try Workspace(path: path(), busyTimeout: 0.2)
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let writer = Task.detached {
            try first.write { db in
                try db.execute(sql: "INSERT INTO settings (key, value, updated_at) VALUES ('held', 'x', '2026-01-01')")
                holding.signal()
                release.wait()
            }
        }
        holding.wait()
        let error = #expect(throws: WorkspaceError.self) {
            try second.settings.setSetting("theme", to: "light")
        }
        #expect(error?.code == .busy)
        #expect(error?.description.contains("workspace is busy") == true)
        release.signal()
        try await writer.value
        #expect(try second.settings.setting("held") == "x")
        #expect(try second.check().isHealthy)
    }

    @Test func aNewerSchemaIsRefusedAndLeftUntouched() throws {
        _ = try Workspace(path: path())
        let queue = try DatabaseQueue(path: path())
        let snapshot = { (queue: DatabaseQueue) throws -> [String] in
            try queue.read { db in
                try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier")
                    + String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name")
            }
        }
        try queue.write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99: from the future')")
        }
        let before = try snapshot(queue)
        let error = #expect(throws: WorkspaceError.self) { try Workspace(path: path()) }
        #expect(error?.code == .schemaTooNew)
        #expect(error?.description.contains("newer Loupe") == true)
        // GRDB touches the file header when it opens a pool in WAL mode; what must not change is
        // the schema and the recorded migrations.
        #expect(try snapshot(queue) == before)
    }

    @Test func filesThatAreNotWorkspacesAreRefused() throws {
        try "hello, not sqlite".write(toFile: path("text.sqlite"), atomically: true, encoding: .utf8)
        let text = #expect(throws: WorkspaceError.self) { try Workspace(path: path("text.sqlite")) }
        #expect(text?.code == .notAWorkspace)

        let other = try DatabaseQueue(path: path("other.sqlite"))
        try other.write { db in try db.execute(sql: "CREATE TABLE customers (id INTEGER PRIMARY KEY)") }
        try other.close()
        let foreign = #expect(throws: WorkspaceError.self) { try Workspace(path: path("other.sqlite")) }
        #expect(foreign?.code == .notAWorkspace)

        let missingDirectory = #expect(throws: WorkspaceError.self) { try Workspace(path: path("nope/w.sqlite")) }
        #expect(missingDirectory?.code == .inaccessible)
        let isDirectory = #expect(throws: WorkspaceError.self) { try Workspace(path: directory) }
        #expect(isDirectory?.code == .notAWorkspace)
    }

    @Test func checkReportsCorruption() throws {
        do {
            let workspace = try Workspace(path: path())
            try workspace.write { db in
                for index in 0..<2000 {
                    try db.execute(
                        sql: "INSERT INTO command_history (line, source, ran_at) VALUES (?, 'tui', '2026-01-01')",
                        arguments: [String(repeating: "x", count: 200) + "\(index)"])
                }
            }
            try workspace.vacuum()
        }
        // Overwrite a page in the middle of the history's b-tree (the table fills most of the file).
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path())[.size] as? Int)
        let handle = try #require(FileHandle(forUpdatingAtPath: path()))
        try handle.seek(toOffset: UInt64(size / 2 / 4096 * 4096 + 100))
        handle.write(Data(repeating: 0xAB, count: 2000))
        try handle.close()
        let result = try? Workspace(path: path()).check()
        #expect(result?.isHealthy != true)
    }

    @Test func vacuumFoldsTheWALAndKeepsTheData() throws {
        let workspace = try Workspace(path: path())
        try workspace.settings.setSetting("theme", to: "light")
        try workspace.vacuum()
        let info = try workspace.info()
        #expect(info.walBytes == 0)
        #expect(try workspace.settings.setting("theme") == "light")
        #expect(try workspace.check().isHealthy)
    }

    @Test func aFailedWriteRollsBackEverything() throws {
        let workspace = try Workspace(path: path())
        struct Boom: Error {}
        #expect(throws: WorkspaceError.self) {
            try workspace.write { db in
                try db.execute(sql: "INSERT INTO settings (key, value, updated_at) VALUES ('a', '1', '2026-01-01')")
                throw Boom()
            }
        }
        #expect(try workspace.settings.setting("a") == nil)
    }
}

@Suite struct WorkspaceModelsTests {
    @Test func modelsAreRegisteredOnceAndUpdated() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "loupe-models-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let workspace = try Workspace(path: directory + "/w.sqlite")
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        try workspace.settings.register(
            ModelRecord(
                name: "m", directory: "/a", weightsSHA256: "aa", parameters: 1, description: "d", registeredAt: date))
        try workspace.settings.register(
            ModelRecord(
                name: "m", directory: "/b", weightsSHA256: "bb", parameters: 2, description: "d", registeredAt: date))
        #expect(try workspace.settings.models().map(\.directory) == ["/b"])
        #expect(try workspace.settings.models().first?.weightsSHA256 == "bb")
    }
}

@Suite struct WorkspaceKernelRunTests {
    @Test func theLatestRunOfEachKernelAndShapeIsFound() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "loupe-kernels-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let workspace = try Workspace(path: directory + "/w.sqlite")
        func run(_ kernel: String, _ nanoseconds: Int64, at date: Date) -> KernelRun {
            KernelRun(
                suite: "s", kernel: kernel, workload: "w", calls: 1, nanoseconds: nanoseconds, flops: 10, bytes: 5,
                threads: 2, machine: "m", measuredAt: date)
        }
        try workspace.roofline.record([run("gemm", 1, at: Date(timeIntervalSince1970: 1_000))])
        try workspace.roofline.record([
            run("gemm", 5, at: Date(timeIntervalSince1970: 2_000)),
            run("gelu", 9, at: Date(timeIntervalSince1970: 2_000)),
        ])
        // The latest run of each kernel and shape, with the v5 columns read back.
        let latest = try workspace.roofline.latestKernelRunPerShape()
        #expect(latest.map(\.kernel) == ["gemm", "gelu"])
        #expect(latest.map(\.nanoseconds) == [5, 9])
        var gpu = run("sgemm", 7, at: Date(timeIntervalSince1970: 3_000))
        gpu.suite = "ncu:x"
        gpu.flopsByPrecision = ["FP32": 8, "FP16": 2]
        gpu.scratchBytes = 64
        gpu.footprintBytes = 4096
        try workspace.roofline.record([gpu])
        let read = try workspace.roofline.latestKernelRunPerShape().first { $0.suite == "ncu:x" }
        #expect(read?.flopsByPrecision == ["FP32": 8, "FP16": 2])
        #expect(read?.scratchBytes == 64 && read?.footprintBytes == 4096 && read?.profileID == nil)
    }
}

@Suite struct WorkspaceMachineProfileTests {
    @Test func aProfileAndItsCeilingsAreStoredTogether() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "loupe-profile-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let workspace = try Workspace(path: directory + "/w.sqlite")
        #expect(try workspace.roofline.latestMachineProfile() == nil)
        try workspace.roofline.record(
            MachineProfileRecord(machine: "cpu", cores: 2, measuredAt: Date(timeIntervalSince1970: 1), sweepJSON: "[]"),
            ceilings: [CeilingRecord(kind: "compute", name: "FP32", value: 200, provenance: "p")])
        let id = try workspace.roofline.record(
            MachineProfileRecord(machine: "cpu", cores: 2, measuredAt: Date(timeIntervalSince1970: 2), sweepJSON: "[]"),
            ceilings: [
                CeilingRecord(kind: "compute", name: "FP32", value: 204, provenance: "p"),
                CeilingRecord(kind: "memory", name: "DRAM", value: 33.5, provenance: "p"),
            ])
        let latest = try #require(try workspace.roofline.latestMachineProfile())
        #expect(latest.profile.id == id)
        #expect(latest.ceilings.map(\.value) == [204, 33.5])
        #expect(throws: WorkspaceError.self) {
            try workspace.roofline.record(
                MachineProfileRecord(machine: "cpu", cores: 2, sweepJSON: "[]"),
                ceilings: [CeilingRecord(kind: "teraflops", name: "x", value: 1, provenance: "p")])
        }
        #expect(try workspace.roofline.latestMachineProfile()?.profile.id == id)  // the bad profile rolled back whole
    }
}
