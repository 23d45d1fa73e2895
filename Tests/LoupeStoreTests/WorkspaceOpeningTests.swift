import Foundation
import GRDB
import LoupeStore
import LoupeTestSupport
import Testing

/// How a file is opened: readers take no lock, refused files stay byte for byte as they were,
/// and concurrent openers of an old file all end on the current schema.
@Suite struct WorkspaceOpeningTests {
    let directory: String

    init() throws {
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent("loupe-open-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    private func path(_ name: String = "w.sqlite") -> String { directory + "/" + name }

    private func bytes(_ name: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path(name))) }

    @Test func aReaderIsNotRefusedWhileAnotherConnectionHoldsTheWriteLock() throws {
        try Workspace(path: path()).settings.setSetting("theme", to: "mono")
        let lock = try WriteLockHolder(file: path())
        defer { lock.release() }
        let reader = try Workspace(path: path(), access: .read, busyTimeout: 0.2)
        #expect(try reader.settings.setting("theme") == "mono")
        #expect(try reader.check().isHealthy)
        // Its first write waits for the lock like any writer, and says why it gave up.
        let error = #expect(throws: WorkspaceError.self) { try reader.settings.setSetting("theme", to: "light") }
        #expect(error?.code == .busy)
    }

    @Test func aForeignDatabaseIsRefusedByteForByteUntouched() throws {
        let other = try DatabaseQueue(path: path("other.sqlite"))
        try other.write { db in try db.execute(sql: "CREATE TABLE customers (id INTEGER PRIMARY KEY)") }
        try other.close()
        let before = try bytes("other.sqlite")
        for access in [WorkspaceAccess.read, .write] {
            let error = #expect(throws: WorkspaceError.self) {
                try Workspace(path: path("other.sqlite"), access: access)
            }
            #expect(error?.code == .notAWorkspace)
            #expect(error?.description.contains("Nothing was changed") == true)
        }
        #expect(try bytes("other.sqlite") == before)
        #expect(!FileManager.default.fileExists(atPath: path("other.sqlite-wal")))
    }

    @Test func aNewerUserVersionIsRefusedAndNotReset() throws {
        _ = try Workspace(path: path())
        let queue = try DatabaseQueue(path: path())
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA user_version = 999")
            _ = try Row.fetchAll(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
        try queue.close()
        let before = try bytes("w.sqlite")
        for access in [WorkspaceAccess.read, .write] {
            let error = #expect(throws: WorkspaceError.self) { try Workspace(path: path(), access: access) }
            #expect(error?.code == .schemaTooNew)
            #expect(error?.description.contains("schema v999") == true)
        }
        #expect(try bytes("w.sqlite") == before)
    }

    @Test func aReaderOfAnOlderWorkspaceBringsItForward() throws {
        try Workspace.createOlder(path: path(), schemaVersion: 9)
        let reader = try Workspace(path: path(), access: .read)
        #expect(try reader.schemaVersion() == Workspace.migrationIdentifiers.count)
        #expect(try reader.traces.traceSummaries().isEmpty)
    }

    /// v17 keeps a trace's models with it: a trace stored before then gets them from its spans.
    @Test func upgradingKeepsEachTracesModels() throws {
        try Workspace.createOlder(path: path(), schemaVersion: 16)
        let queue = try DatabaseQueue(path: path())
        try queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO traces (id, external_id, format, name, started_ns, ended_ns, timed, span_count,
                      step_count, error_count, metadata_json, content_hash, imported_at)
                    VALUES (1, 'x', 'otlp', 'agent', 0, 1, 1, 3, 2, 0, '{}', 'h', '2026-11-24 00:00:00')
                    """)
            for (ordinal, model) in [(0, nil), (1, "gpt-4o-mini"), (2, "claude-sonnet-4"), (3, "gpt-4o-mini")] {
                try db.execute(
                    sql: """
                        INSERT INTO spans (trace_id, ordinal, span_id, kind, name, start_ns, status, model, payload_json)
                        VALUES (1, ?, ?, 'llm', 'chat', 0, 'ok', ?, '{}')
                        """, arguments: [ordinal, "s\(ordinal)", model])
            }
        }
        try queue.close()
        let workspace = try Workspace(path: path())
        #expect(try workspace.traces.traceSummaries().map(\.models) == [["claude-sonnet-4", "gpt-4o-mini"]])
    }

    /// Four openers queue for the write lock a third connection holds; GRDB reads the applied
    /// migrations before it takes the lock, so a later opener can find its migration applied.
    @Test func concurrentOpenersOfAnOlderWorkspaceAllEndOnTheCurrentSchema() throws {
        for round in 0..<5 {
            let file = path("old\(round).sqlite")
            try Workspace.createOlder(path: file, schemaVersion: 9)
            // The holder writes, so the WAL is not empty and the openers need no lock before migrating.
            let lock = try WriteLockHolder(file: file)
            let threads = ThreadGroup(4) {
                Result { () throws(WorkspaceError) -> Int in try Workspace(path: file, busyTimeout: 30).schemaVersion()
                }
            }
            Thread.sleep(forTimeInterval: 0.5)
            lock.release()
            for result in threads.join() {
                #expect(throws: Never.self) { try result.get() }
                #expect((try? result.get()) == Workspace.migrationIdentifiers.count)
            }
        }
    }

    @Test func checkReadsAFileTooDamagedToOpenAndTellsIndexDamageApart() throws {
        let workspace = try Workspace(path: path())
        try workspace.roofline.record([
            KernelRun(
                suite: "s", kernel: "gemm", workload: "w", calls: 1, nanoseconds: 1, flops: 1, bytes: 1, threads: 1,
                machine: "m", measuredAt: Date(timeIntervalSince1970: 1))
        ])
        try workspace.vacuum()
        // The index now claims another column than its entries hold: the table rows are intact.
        let queue = try DatabaseQueue(path: path())
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA writable_schema = ON")
            try db.execute(
                sql: "UPDATE sqlite_master SET sql = 'CREATE INDEX kernel_runs_by_suite ON kernel_runs(kernel, "
                    + "measured_at)' WHERE name = 'kernel_runs_by_suite'")
        }
        try queue.close()
        let indexes = try Workspace.check(path: path())
        #expect(!indexes.isHealthy && indexes.isReadable)
        #expect(indexes.onlyIndexesDamaged)

        let whole = try bytes("w.sqlite")
        try Data(whole.prefix(whole.count / 2)).write(to: URL(fileURLWithPath: path("half.sqlite")))
        try Data(repeating: 0xAB, count: 4096).write(to: URL(fileURLWithPath: path("page.bin")))
        var damaged = whole
        damaged.replaceSubrange(4096..<8192, with: try bytes("page.bin"))
        try damaged.write(to: URL(fileURLWithPath: path("damaged.sqlite")))
        for name in ["half.sqlite", "damaged.sqlite"] {
            let result = try Workspace.check(path: path(name))
            #expect(!result.isHealthy)
            #expect(!result.onlyIndexesDamaged)
        }
    }
}
