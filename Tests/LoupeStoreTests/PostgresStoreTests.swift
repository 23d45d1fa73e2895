import Foundation
import LoupePostgres
import LoupeStore
import LoupeTestSupport
import Synchronization
import Testing

/// The workspace on a real PostgreSQL server (initdb and pg_ctl in a temporary directory): its
/// schema, its errors, and `workspace copy` both ways.
@Suite struct PostgresStoreTests {
    let cluster: PostgresCluster

    init() throws { cluster = try PostgresCluster.shared }

    private func open(_ name: String) throws -> PostgresStore {
        try PostgresStore.open(PostgresURL(cluster.url(try cluster.database(name)), environment: [:]))
    }

    /// Every table a SQLite workspace has, on PostgreSQL, with the same migrations counted.
    @Test func anEmptyDatabaseGetsTheWorkspacesTablesAndCountsTheSameMigrations() throws {
        let store = try open("schema")
        defer { store.close() }
        let info = try store.info()
        #expect(info.schemaVersion == StoreTable.migrationIdentifiers.count)
        #expect(info.knownSchemaVersion == info.schemaVersion)
        #expect(info.server.hasPrefix("PostgreSQL "))
        let sqlite = try TemporaryWorkspace.make("schema").info()
        #expect(
            Set(info.tables.map(\.name))
                == Set(sqlite.tables.map(\.name)).subtracting(["grdb_migrations", TraceTables.revisionClock]))
        #expect(info.tables.allSatisfy { $0.rows == 0 })
        // Opening it again changes nothing.
        let again = try PostgresStore.open(store.url)
        #expect(try again.schemaVersion() == info.schemaVersion)
        again.close()
    }

    /// Every cell reads back as the value it holds, as SQLite gives it: an OID (which postgres-nio
    /// decodes as no integer, and was read as NULL) is its number, a NUMERIC its double, text its
    /// text, a NULL a NULL.
    @Test func cellsReadBackAsTheirValuesAnOIDAsItsNumber() throws {
        let store = try open("cells")
        defer { store.close() }
        let rows = try store.execute(
            "SELECT 'pg_class'::regclass::oid AS relation, 0.5::numeric AS half, 'x'::text AS text, "
                + "NULL::int8 AS nothing, 'a'::bytea AS bytes")
        #expect(rows.first?.values == [.integer(1259), .real(0.5), .text("x"), .null, .blob([0x61])])
    }

    /// Calls that overlap each get a connection of their own, up to the store's most: four
    /// transactions held open at once run on four server processes; with room for two, six calls
    /// share two. A single caller keeps using one.
    @Test func overlappingCallsTakeConnectionsOfTheirOwnUpToTheMost() throws {
        let url = try PostgresURL(cluster.url(try cluster.database("pool")), environment: [:])
        let wide = try PostgresStore.open(url, maxConnections: 4)
        defer { wide.close() }
        let pids = Mutex<[Int64]>([])
        let inside = DispatchGroup()
        let done = DispatchGroup()
        for _ in 0..<4 {
            inside.enter()
            done.enter()
            // Threads of their own: concurrentPerform runs as many at once as there are cores.
            Thread {
                _ = try? wide.transaction { sql in
                    let pid = try sql.execute("SELECT pg_backend_pid() AS pid", []).first?.integer("pid") ?? 0
                    pids.withLock { $0.append(pid) }
                    // Held until all four are inside a transaction at once.
                    inside.leave()
                    _ = inside.wait(timeout: .now() + 30)
                }
                done.leave()
            }.start()
        }
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(Set(pids.withLock { $0 }).count == 4 && wide.idleConnections == 4)

        let narrow = try PostgresStore.open(url, maxConnections: 2)
        defer { narrow.close() }
        let seen = Mutex<Set<Int64>>([])
        DispatchQueue.concurrentPerform(iterations: 6) { _ in
            let pid = try? narrow.execute("SELECT pg_backend_pid() AS pid, pg_sleep(0.05)").first?.integer("pid")
            seen.withLock { _ = $0.insert(pid ?? 0) }
        }
        #expect(seen.withLock { $0.count } <= 2 && !seen.withLock { $0.contains(0) })
        #expect(narrow.idleConnections <= 2)

        let single = try PostgresStore.open(url)
        defer { single.close() }
        for _ in 0..<5 { _ = try single.execute("SELECT 1") }
        #expect(single.idleConnections == 1)
    }

    /// Two processes bringing one database forward at once: the advisory lock makes one wait.
    @Test func twoOpeningAtOnceDoNotCollide() throws {
        let url = try PostgresURL(cluster.url(try cluster.database("race")), environment: [:])
        let results = Mutex<[Result<Int, WorkspaceError>]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let result = Result { () throws(WorkspaceError) -> Int in
                let store = try PostgresStore.open(url)
                defer { store.close() }
                return try store.schemaVersion()
            }
            results.withLock { $0.append(result) }
        }
        let versions = try results.withLock { all in try all.map { try $0.get() } }
        #expect(versions == Array(repeating: StoreTable.migrationIdentifiers.count, count: 4))
    }

    @Test func aDatabaseOfSomethingElseIsRefusedUntouched() throws {
        let database = try cluster.database("foreign")
        try cluster.psql("CREATE TABLE invoices (id int)", database: database)
        let error = try #require(throws: WorkspaceError.self) {
            try PostgresStore.open(PostgresURL(cluster.url(database), environment: [:]))
        }
        #expect(error.code == .notAWorkspace && error.message.contains("no Loupe workspace"))
        let store = try PostgresStore.connect(PostgresURL(cluster.url(database), environment: [:]))
        defer { store.close() }
        let tables = try store.execute(
            "SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = current_schema()")
        #expect(tables.first?["n"] == .integer(1))
    }

    @Test func aNewerLoupesDatabaseIsRefused() throws {
        let store = try open("newer")
        try store.execute(
            "INSERT INTO loupe_migrations (identifier, applied_at) VALUES ('v999: from the future', '2027-01-01')")
        store.close()
        let error = try #require(throws: WorkspaceError.self) { try PostgresStore.open(store.url) }
        #expect(error.code == .schemaTooNew && error.message.contains("newer Loupe"))
    }

    /// Wrong password, no password, no such database, nobody listening: each said plainly, and
    /// the password never in the message.
    @Test func connectionFailuresAreSaidPlainlyWithoutThePassword() throws {
        let database = try cluster.database("failures")
        let wrong = try #require(throws: WorkspaceError.self) {
            try PostgresStore.open(PostgresURL(cluster.url(database, password: "hunter2"), environment: [:]))
        }
        #expect(wrong.code == .inaccessible && wrong.message.contains("refused loupe's credentials"), "\(wrong)")
        #expect(!wrong.description.contains("hunter2"))

        let none = try #require(throws: WorkspaceError.self) {
            try PostgresStore.open(
                PostgresURL(cluster.url(database, password: nil), environment: [:], home: "/nonexistent"))
        }
        #expect(none.code == .inaccessible && none.message.contains("asks loupe for a password"), "\(none)")

        let missing = try #require(throws: WorkspaceError.self) {
            try PostgresStore.open(PostgresURL(cluster.url("no_such_database"), environment: [:]))
        }
        #expect(missing.message.contains("database no_such_database does not exist"), "\(missing)")

        let port = cluster.port == 65535 ? 65534 : cluster.port + 1
        let refused = try #require(throws: WorkspaceError.self) {
            try PostgresStore.open(
                PostgresURL("postgres://loupe:hunter2@127.0.0.1:\(port)/x?sslmode=disable", environment: [:]))
        }
        #expect(refused.code == .unreachable && refused.message.contains("cannot connect to 127.0.0.1"), "\(refused)")
        #expect(!refused.description.contains("hunter2"))
    }

    /// `sslmode` decides: require encrypts (the certificate unchecked, as libpq), disable does not,
    /// verify-full refuses a certificate nobody vouches for.
    @Test func theSSLModeDecidesWhetherTheConnectionIsEncrypted() throws {
        let database = try cluster.database("tls")
        func encrypted(_ mode: String) throws -> SQLValue? {
            let store = try PostgresStore.open(
                PostgresURL(cluster.url(database) + "?sslmode=\(mode)", environment: [:]))
            defer { store.close() }
            return try store.execute("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").first?["ssl"]
        }
        #expect(try encrypted("require") == .integer(1))
        #expect(try encrypted("prefer") == .integer(1))
        #expect(try encrypted("disable") == .integer(0))
        let untrusted = try #require(throws: WorkspaceError.self) { try encrypted("verify-full") }
        #expect(untrusted.code == .unreachable || untrusted.code == .inaccessible, "\(untrusted)")
        #expect(untrusted.message.lowercased().contains("certificate"), "\(untrusted)")
    }

    /// A workspace with traces (spans, keyless scores, a blob), settings and history, copied into
    /// PostgreSQL and back into a new file: every row of every table the same.
    @Test func aWorkspaceCopiedToPostgresAndBackIsTheSameRowForRow() throws {
        let original = try TemporaryWorkspace.make("copy-source")
        var traced = WorkspaceTracesTests.trace("run-1", hash: "h1")
        traced.spans[1].rawZstd = Data([0x28, 0xB5, 0x2F, 0xFD, 0, 1, 2, 255])
        _ = try original.traces.importTraces([traced, WorkspaceTracesTests.trace("run-2", hash: "h2", answer: "7")])
        try original.settings.setSetting("theme", to: "dark")
        try original.settings.recordHistory("trace list", source: .repl)
        let store = try open("copy")
        defer { store.close() }

        let first = try WorkspaceCopy.copy(from: .sqlite(original), to: .postgres(store))
        #expect(first.differing == 0 && first.copied > 0)
        #expect(first.tables.first { $0.table == "spans" }?.copied == 8)
        #expect(first.tables.first { $0.table == "trace_scores" }?.copied == 2)
        #expect(!first.tables.contains { $0.table == "job_leases" })

        // A second copy changes nothing.
        let second = try WorkspaceCopy.copy(from: .sqlite(original), to: .postgres(store))
        #expect(second.copied == 0 && second.differing == 0)
        #expect(second.tables.reduce(0) { $0 + $1.present } == first.copied)

        // New rows after the copy get new ids on PostgreSQL too (the identities went on).
        let next = try store.execute(
            "INSERT INTO command_history (line, source, ran_at) VALUES ('x', 'tui', '2026-01-01') RETURNING id")
        #expect(next.first?["id"] == .integer(2))
        try store.execute("DELETE FROM command_history WHERE id = 2")

        let back = try TemporaryWorkspace.make("copy-back")
        let returned = try WorkspaceCopy.copy(from: .postgres(store), to: .sqlite(back))
        #expect(returned.copied == first.copied && returned.differing == 0)
        for table in try StoreTable.current() where !WorkspaceCopy.machineLocal.contains(table.name) {
            let order = StoreTable.list(table.primaryKey.isEmpty ? ["rowid"] : table.primaryKey)
            // A trace's revision is the database's own (a copy leaves it out).
            let columns = StoreTable.list(table.copiedColumns.map(\.name))
            let sql = "SELECT \(columns) FROM \(StoreTable.quote(table.name)) ORDER BY \(order)"
            #expect(
                try WorkspaceEndpoint.sqlite(back).rows(sql, []) == WorkspaceEndpoint.sqlite(original).rows(sql, []),
                "\(table.name)")
        }
        #expect(try back.traces.traceSummaries().map(\.externalID).sorted() == ["run-1", "run-2"])
    }

    /// Rows held under the same ids with other values are left alone and counted, not overwritten.
    @Test func rowsTheDestinationHoldsOtherwiseAreCountedNotOverwritten() throws {
        let workspace = try TemporaryWorkspace.make("copy-differ")
        _ = try workspace.traces.importTraces([WorkspaceTracesTests.trace()])
        let store = try open("differ")
        defer { store.close() }
        _ = try WorkspaceCopy.copy(from: .sqlite(workspace), to: .postgres(store), only: ["traces"])
        try store.execute("UPDATE traces SET name = 'someone else''s' WHERE id = 1")
        let report = try WorkspaceCopy.copy(from: .sqlite(workspace), to: .postgres(store), only: ["traces"])
        let traces = try #require(report.tables.first { $0.table == "traces" })
        #expect(traces.differing == 1 && traces.firstDifference == "id 1")
        #expect(try store.execute("SELECT name FROM traces WHERE id = 1").first?["name"] == .text("someone else's"))
        let unknown = try #require(throws: WorkspaceError.self) {
            try WorkspaceCopy.copy(from: .sqlite(workspace), to: .postgres(store), only: ["tracez"])
        }
        #expect(unknown.message.contains("tracez is not a group"))
    }

    /// A copy brings a trace's row before its model usage (tables go one at a time). A list kept
    /// between reads that read the destination in between reads the trace again, with its usage,
    /// once the usage is in.
    @Test func aTracesUsageCopiedAfterAReadMakesTheTraceReadAgain() throws {
        let workspace = try TemporaryWorkspace.make("copy-usage")
        _ = try workspace.traces.importTraces([WorkspaceTracesTests.trace()])
        let store = try open("usage")
        defer { store.close() }
        let destination = TraceTables(store)
        var between: TraceChanges?
        _ = try WorkspaceCopy.copy(from: .sqlite(workspace), to: .postgres(store), only: ["traces"]) { table, _ in
            if table == "spans", between == nil { between = try? destination.traceChanges(since: nil) }
        }
        let read = try #require(between)
        #expect(read.traces.map(\.externalID) == ["run-1"] && read.usage.isEmpty)
        let after = try destination.traceChanges(since: read.watermark)
        #expect(after.traces.map(\.externalID) == ["run-1"])
        #expect(!after.usage.isEmpty)
        #expect(try after.usage == destination.modelUsage())
    }

    /// `--only evals` brings the traces and retrieval records its rows refer to.
    @Test func aGroupBringsTheGroupsItsRowsReferTo() throws {
        let (tables, added) = try WorkspaceCopy.plan(only: ["evals"])
        #expect(Set(added) == ["traces", "retrieval"])
        let names = tables.map(\.name)
        #expect(names.firstIndex(of: "traces")! < names.firstIndex(of: "eval_results")!)
        // Every table of the schema is in a group, or deliberately machine-local.
        let grouped = Set(WorkspaceCopy.groups.flatMap(\.tables)).union(WorkspaceCopy.machineLocal)
        #expect(Set(try StoreTable.current().map(\.name)) == grouped)
    }

    /// The server stopped under an open connection: a statement says the connection is lost
    /// (nothing half-written); once it is back, the next transaction runs on a new connection.
    @Test func aStoppedServerIsSaidToHaveDroppedTheConnectionAndARestartedOneIsReconnected() throws {
        // A server of its own: the shared one serves the other tests meanwhile.
        let own = try PostgresCluster.dedicated()
        defer { own.shutdown() }
        let store = try PostgresStore.open(PostgresURL(own.url(try own.database("restart")), environment: [:]))
        defer { store.close() }
        try own.stopServer()
        let error = try #require(throws: WorkspaceError.self) {
            try store.transaction { session in
                try session.execute("INSERT INTO settings (key, value, updated_at) VALUES ('a', 'b', 'c')")
            }
        }
        #expect(error.code == .unreachable, "\(error)")
        try own.start()
        try store.transaction { session in
            try session.execute("INSERT INTO settings (key, value, updated_at) VALUES ('a', 'b', 'c')")
        }
        try own.restart()
        // The first statement after a restart may find the old connection dropped mid-way; the
        // next one reconnects.
        _ = try? store.execute("SELECT 1 AS one")
        #expect(try store.execute("SELECT COUNT(*) AS n FROM settings").first?["n"] == .integer(1))
    }

    /// A commit is announced to a watcher on another connection; a rolled-back one is not.
    @Test func aCommitIsAnnouncedToAWatcherAndARolledBackOneIsNot() throws {
        let store = try open("notices")
        defer { store.close() }
        let watcher = PostgresWatcher(url: store.url)
        defer { watcher.stop() }
        try Self.waitUntil("the watcher listens") { watcher.isListening }
        // Listening, it asks for one read: what committed before LISTEN took effect was not
        // announced. Nothing more until the next commit.
        #expect(watcher.changed())
        #expect(!watcher.changed())
        try store.transaction { session in
            try session.execute("INSERT INTO settings (key, value, updated_at) VALUES ('theme', 'x', 'now')")
        }
        try Self.waitUntil("the commit is announced") { watcher.changed() }
        let seen = watcher.notices
        _ = try? store.transaction { session in
            try session.execute("INSERT INTO settings (key, value, updated_at) VALUES ('other', 'y', 'now')")
            throw WorkspaceError(.database, path: "test", message: "roll it back")
        }
        // Notices arrive in commit order: once the next commit's is here, a notice of the
        // rolled-back transaction would have come before it.
        try store.execute("INSERT INTO command_history (line, source, ran_at) VALUES ('x', 'tui', 'now')")
        try Self.waitUntil("the next commit is announced") { watcher.changed() }
        #expect(watcher.notices == seen + 1)
        #expect(try store.execute("SELECT COUNT(*) AS n FROM settings").first?["n"] == .integer(1))
    }

    /// Eval workers' leases announce row by row: a lease that finds nothing (every item taken)
    /// wakes no idle worker, one that takes an item announces once, and so does a statement
    /// changing many items in one transaction.
    @Test func aStatementChangingNoWorkItemAnnouncesNothing() throws {
        let store = try open("row-notices")
        defer { store.close() }
        let watcher = PostgresWatcher(url: store.url)
        defer { watcher.stop() }
        try Self.waitUntil("the watcher listens") { watcher.isListening }
        #expect(watcher.changed())
        try store.execute(
            "INSERT INTO eval_runs (suite, suite_hash, dataset_hash, target_kind, target_json, scorers_json, epochs, "
                + "planned, status, source, loupe_version, started_at) "
                + "VALUES ('s', 'h', 'd', 'model', '{}', '[]', 1, 3, 'running', 'loupe', '0', 'now')")
        try Self.waitUntil("the run is announced") { watcher.changed() }
        var seen = watcher.notices
        try store.execute("UPDATE eval_work_items SET worker = 'w' WHERE run_id = 99")
        // A change to another table follows: its notice would come after one of the no-op's.
        try store.execute("INSERT INTO command_history (line, source, ran_at) VALUES ('x', 'tui', 'now')")
        try Self.waitUntil("the next commit is announced") { watcher.changed() }
        #expect(watcher.notices == seen + 1)
        seen = watcher.notices
        try store.transaction { sql in
            for item in ["a", "b", "c"] {
                try sql.execute(
                    "INSERT INTO eval_work_items (run_id, item_id, epoch, position, item_json, attempts) "
                        + "VALUES (1, ?, 1, 0, '{}', 0)", [.text(item)])
            }
            try sql.execute("UPDATE eval_work_items SET worker = 'w'", [])
        }
        try store.execute("INSERT INTO command_history (line, source, ran_at) VALUES ('y', 'tui', 'now')")
        try Self.waitUntil("both commits are announced") { watcher.notices >= seen + 2 }
        #expect(watcher.notices == seen + 2)
    }

    /// A database made before the tables announced their changes gets its triggers when opened.
    @Test func everyTableAnnouncesItsChangesEvenInAnOlderDatabase() throws {
        let store = try open("triggers")
        defer { store.close() }
        let count = "SELECT COUNT(*) AS n FROM pg_trigger WHERE tgname = 'loupe_changes'"
        let tables = try store.info().tables.count
        #expect(try store.execute(count).first?["n"] == .integer(Int64(tables)))
        try store.execute("DROP TRIGGER loupe_changes ON traces")
        try store.execute("DROP TRIGGER loupe_changes ON review_labels")
        let reopened = try PostgresStore.open(store.url)
        defer { reopened.close() }
        #expect(try store.execute(count).first?["n"] == .integer(Int64(tables)))
    }

    /// The watcher says while the server is down, connects again once it is back and reports a
    /// change then (what happened meanwhile was not announced), and hears the next commit.
    @Test func aWatcherSaysTheServerIsDownAndComesBackWithIt() throws {
        let own = try PostgresCluster.dedicated()
        defer { own.shutdown() }
        let url = try PostgresURL(own.url(try own.database("watch")), environment: [:])
        let store = try PostgresStore.open(url)
        defer { store.close() }
        let watcher = PostgresWatcher(url: url)
        defer { watcher.stop() }
        try Self.waitUntil("the watcher listens") { watcher.isListening }
        #expect(watcher.trouble == nil)
        #expect(watcher.changed() && !watcher.changed())
        try own.stopServer()
        try Self.waitUntil("the watcher says the server is down") {
            watcher.trouble.map { $0.contains("retrying") } ?? false
        }
        #expect(!watcher.isListening)
        #expect(!(watcher.trouble ?? "").contains(PostgresCluster.password))
        try own.start()
        try Self.waitUntil("the watcher is back") { watcher.isListening }
        #expect(watcher.trouble == nil)
        #expect(watcher.changed())
        _ = try? store.execute("SELECT 1 AS one")
        try store.execute("INSERT INTO settings (key, value, updated_at) VALUES ('after', 'z', 'now')")
        try Self.waitUntil("the commit after the restart is announced") { watcher.changed() }
    }

    /// Polls `condition` every 50 ms for up to 20 s.
    private static func waitUntil(_ what: String, _ condition: () -> Bool) throws {
        for _ in 0..<400 {
            if condition() { return }
            usleep(50_000)
        }
        throw WorkspaceError(.database, path: "test", message: "timed out waiting until \(what)")
    }
}
