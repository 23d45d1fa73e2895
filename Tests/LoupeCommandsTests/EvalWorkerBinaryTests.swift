import Foundation
import LoupeBase
import LoupeKit
import LoupePostgres
import LoupeStore
import LoupeTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `eval run --workers` and `eval worker` with the real binary, a real PostgreSQL server and a
/// local chat-completions server: workers killed at a random moment, the server restarted under a
/// running worker, and the run's statistics against the same suite run on one machine.
@Suite(.serialized) struct EvalWorkerBinaryTests {
    static let items = 16

    /// A model target answering "Paris" to everything, after about 40 ms; half the items expect
    /// Paris, so `exact` passes half.
    static func suite(_ directory: String, server: LocalChatServer, items: Int = Self.items) throws -> String {
        try (0..<items).map { n in
            "{\"id\": \"q\(String(format: "%02d", n))\", \"input\": \"City number \(n)?\", "
                + "\"target\": \"\(n % 2 == 0 ? "Paris" : "Lyon")\"}"
        }.joined(separator: "\n").write(toFile: directory + "/cities.jsonl", atomically: true, encoding: .utf8)
        let path = directory + "/cities.yaml"
        try """
        name: cities
        dataset: cities.jsonl
        target:
          model: {provider: openai, base_url: "\(server.baseURL)", model: gpt-4o-mini, stream: false}
        scorers:
          - exact
          - contains
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    private static func server(answers: Int, pauseMicroseconds: UInt32 = 40_000) throws -> LocalChatServer {
        try LocalChatServer(
            replies: (0..<answers).map { id in
                var reply = EvalCommandTests.completion("Paris", id: id)
                reply.pauseMicroseconds = pauseMicroseconds
                return reply
            })
    }

    /// Starts `loupe eval worker` in the background, its messages going to `log`; on one of a
    /// test's network hosts when `host` is given.
    private func worker(
        _ url: String, _ arguments: [String], log: String, on host: (NetworkHosts, NetworkHosts.Host)? = nil
    ) throws -> Process {
        let command = ["eval", "worker", "--workspace", url] + arguments
        let (executable, all) =
            host.map { $0.0.command(on: $0.1, [TestEnvironment.binary] + command) } ?? (TestEnvironment.binary, command)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = all
        FileManager.default.createFile(atPath: log, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        return process
    }

    private func said(_ log: String) -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    private func shown(_ url: String, _ run: Int) throws -> JSONValue {
        let show = try TestEnvironment.run(["eval", "show", String(run), "--json", "--workspace", url])
        #expect(show.status == 0, "\(show.error)")
        return try JSONValue.parse(Data(show.output.utf8))
    }

    /// Waits (bounded) until `condition` holds.
    private func wait(seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return true }
            usleep(50_000)
        }
        return try condition()
    }

    /// An idle worker on PostgreSQL waits for the workspace to announce a change instead of
    /// asking for work four times a second on each of its threads, and a run queued while it
    /// waits is answered.
    @Test func anIdleWorkerWaitsForAnnouncedWorkInsteadOfPolling() throws {
        let cluster = try PostgresCluster.shared
        let directory = TestEnvironment.temporaryDirectory()
        let server = try Self.server(answers: Self.items)
        defer { server.stop() }
        let suite = try Self.suite(directory, server: server)
        let url = cluster.url(try cluster.database("idle"))
        let store = try PostgresStore.open(try PostgresURL(url, environment: [:]))
        defer { store.close() }
        /// Transactions committed in the worker's database (PostgreSQL's statistics; each lease
        /// attempt is one).
        func commits() throws -> Int64 {
            try store.execute("SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()")
                .first?.integer("n") ?? 0
        }
        let log = directory + "/idle.log"
        let idle = try worker(url, ["--follow", "--concurrency", "8"], log: log)
        defer {
            if idle.isRunning { idle.interrupt() }
            idle.waitUntilExit()
        }
        #expect(
            try wait(seconds: 30) {
                try store.execute(
                    // The watcher's last statement, once its LISTEN has taken effect.
                    "SELECT 1 AS one FROM pg_stat_activity WHERE datname = current_database() "
                        + "AND query LIKE '%pg_listening_channels()%' AND pid <> pg_backend_pid()"
                ).count > 0
            },
            "the worker never listened: \(said(log))")
        sleep(1)
        let before = try commits()
        sleep(4)
        let during = try commits() - before
        // Polling every 250 ms, its 8 threads would commit about 128 lease attempts in 4 s.
        #expect(during < 48, "\(during) transactions while idle for 4 s")

        let queued = try TestEnvironment.run(["eval", "run", suite, "--workers", "--workspace", url])
        #expect(queued.status == 0, "\(queued.error)")
        #expect(
            try wait(seconds: 60) { (try shown(url, 1)["results"]?.array?.count ?? 0) == Self.items }, "\(said(log))")
        #expect(idle.isRunning, "a following worker stops only when told: \(said(log))")
    }

    /// The suite asking `server`, queued for workers (`eval run --workers`) in a workspace file
    /// in `directory`, opened.
    private func queuedOnAFile(_ directory: String, server: LocalChatServer) throws -> Workspace {
        let suite = try Self.suite(directory, server: server)
        let path = directory + "/queued.sqlite"
        let queued = try TestEnvironment.run(["eval", "run", suite, "--workers", "--workspace", path])
        #expect(queued.status == 0, "\(queued.error)")
        return try Workspace(path: path)
    }

    /// A worker whose runs are done stops, though its other threads wait for an announcement that
    /// the commit ending the runs was the last of: they used to sleep out their idle wait (5 s).
    /// Here nothing is ever announced and the wait is an hour: a thread left waiting keeps the
    /// worker until a watchdog cancels it a minute later.
    @Test func idleThreadsStopWithTheirWorkerWhenNothingMoreIsAnnounced() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let server = try Self.server(answers: Self.items)
        defer { server.stop() }
        let workspace = try queuedOnAFile(directory, server: server)
        var options = EvalService.WorkOptions()
        options.concurrency = 8
        options.announced = { 0 }
        options.idleSeconds = 3600
        // A model target needs no model files; the service only needs a library to be given one.
        let models = ModelLibrary(root: directory + "/no-models")
        let reporter = JobReporter.detached()
        let finished = Atomic<Bool>(false)
        let watchdog = Thread {
            let deadline = Date().addingTimeInterval(60)
            while !finished.load(ordering: .relaxed), Date() < deadline { usleep(50_000) }
            if !finished.load(ordering: .relaxed) { reporter.cancel() }
        }
        watchdog.start()
        defer { finished.store(true, ordering: .relaxed) }
        let outcome = try EvalService(workspace: workspace, models: models).work(options, reporter: reporter)
        finished.store(true, ordering: .relaxed)
        #expect(!reporter.isCancelled, "the worker's idle threads outlived its runs")
        #expect(outcome.answered == Self.items && outcome.completed == [1])
    }

    /// A worker stopped between storing a run's last answer and marking the run complete leaves
    /// the run running with nothing left to lease: the next worker marks it, though it answers
    /// nothing (CI once killed a worker in that window, and the run stayed running).
    @Test func theNextWorkerCompletesARunWhoseLastAnswererStoppedBeforeMarkingIt() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let server = try Self.server(answers: Self.items)
        defer { server.stop() }
        let workspace = try queuedOnAFile(directory, server: server)
        let service = EvalService(workspace: workspace, models: ModelLibrary(root: directory + "/no-models"))
        // One thread; it is told to stop as its last answer is stored, before it looks for more.
        var options = EvalService.WorkOptions()
        options.concurrency = 1
        let box = Mutex<JobReporter?>(nil)
        let stopper = JobReporter(id: JobID(1)) { _, progress in
            if progress.completed >= Double(Self.items) { box.withLock { $0?.cancel() } }
        }
        box.withLock { $0 = stopper }
        let first = try service.work(options, reporter: stopper)
        #expect(first.answered == Self.items && first.completed.isEmpty, "\(first)")
        #expect(try workspace.evals.evalRun(1)?.status == "running")

        let second = try service.work(EvalService.WorkOptions())
        #expect(second.answered == 0 && second.completed == [1], "\(second)")
        #expect(try workspace.evals.evalRun(1)?.status == "complete")
    }

    @Test func aWorkerKilledAtAnyMomentLosesNothingAndTheStatisticsEqualOneMachines() throws {
        let cluster = try PostgresCluster.shared
        let directory = TestEnvironment.temporaryDirectory()
        let server = try Self.server(answers: Self.items * 3, pauseMicroseconds: 150_000)
        defer { server.stop() }
        let suite = try Self.suite(directory, server: server)
        let url = cluster.url(try cluster.database("workers"))

        let queued = try TestEnvironment.run(["eval", "run", suite, "--workers", "--workspace", url])
        #expect(queued.status == 0, "\(queued.error)")
        #expect(queued.output.contains("run 1 queued: 16 answers for workers"), "\(queued.output)")
        #expect(!queued.output.contains(PostgresCluster.password))
        #expect(queued.output.contains("loupe eval worker 1 --workspace "), "\(queued.output)")
        // A run that is not there is said to be missing, not taken for "any run".
        let missing = try TestEnvironment.run(["eval", "worker", "2", "--workspace", url])
        #expect(missing.status != 0 && missing.error.contains("there is no eval run 2"), "\(missing.error)")
        // Without --workers a PostgreSQL run says how it is answered.
        let refused = try TestEnvironment.run(["eval", "run", suite, "--workspace", url])
        #expect(refused.status != 0 && refused.error.contains("answered by workers: add --workers"))

        // Worker A dies at a random moment (SIGKILL: no clean-up), after it has stored something.
        let killer = try worker(url, ["--name", "a", "--concurrency", "2", "--lease", "2"], log: directory + "/a.log")
        // Its 16 answers take at least 8 × 150 ms: it is killed with some of them still to come.
        let killAfter = Double.random(in: 0.05...0.6)
        #expect(try wait(seconds: 60) { (try shown(url, 1)["results"]?.array?.count ?? 0) >= 2 })
        usleep(UInt32(killAfter * 1e6))
        kill(killer.processIdentifier, SIGKILL)
        killer.waitUntilExit()
        let before = try shown(url, 1)["results"]?.array?.count ?? 0
        #expect(before < Self.items, "worker a finished before it was killed (\(killAfter) s)")

        // Two more take over; A's leased items come back once its lease runs out.
        let b = try worker(url, ["--name", "b", "--concurrency", "3", "--lease", "2"], log: directory + "/b.log")
        let c = try worker(url, ["--name", "c", "--concurrency", "1", "--lease", "2"], log: directory + "/c.log")
        #expect(try wait(seconds: 90) { !b.isRunning && !c.isRunning }, "workers b and c never stopped")
        #expect(b.terminationStatus == 0, "\(said(directory + "/b.log"))")
        #expect(c.terminationStatus == 0, "\(said(directory + "/c.log"))")

        let run = try shown(url, 1)
        #expect(run["run"]?["status"] == "complete", "\(run["run"] ?? .null)")
        let results = try #require(run["results"]?.array)
        #expect(results.count == Self.items, "killed after \(killAfter) s")
        #expect(Set(results.compactMap { $0["item_id"]?.string }).count == Self.items)
        #expect(results.allSatisfy { $0["scores"]?.object?.count == 2 && $0["error"] == .null })
        // Every worker that stored something is listed with what it stored.
        let text = try TestEnvironment.run(["eval", "show", "1", "--workspace", url])
        #expect(text.output.contains("workers: ") && text.output.contains("16/16 answered"), "\(text.output)")
        #expect(!text.output.contains(PostgresCluster.password))
        // Each answer's model call is recorded as a trace in the same database, and reads back.
        let traceIDs = results.compactMap { $0["trace_id"]?.number.map { Int64($0) } }
        #expect(traceIDs.count == Self.items && Set(traceIDs).count == Self.items)
        let listed = try TestEnvironment.run(["trace", "list", "--json", "--workspace", url])
        #expect(listed.status == 0, "\(listed.error)")
        let traces = try #require(try JSONValue.parse(Data(listed.output.utf8)).array)
        #expect(Set(traceIDs).isSubset(of: Set(traces.compactMap { $0["id"]?.number.map { Int64($0) } })))
        // And no other: an item answered again after A died replaced the trace A had stored for it.
        #expect(traces.count == Self.items, "\(traces.count) traces for \(Self.items) answers")
        let trace = try TestEnvironment.run(["trace", "show", String(traceIDs[0]), "--workspace", url])
        #expect(trace.status == 0 && trace.output.contains("chat gpt-4o-mini"), "\(trace.output)\(trace.error)")

        // The same suite on one machine, on a SQLite file: the same statistics.
        let file = directory + "/one.sqlite"
        let single = try TestEnvironment.run(["eval", "run", suite, "--workspace", file])
        #expect(single.status == 0, "\(single.error)")
        let local = try shown(file, 1)
        #expect(local["summary"]?["scorers"] == run["summary"]?["scorers"])
        #expect(run["summary"]?["scorers"]?.array?.first?["interval"]?["estimate"] == .number(0.5))
    }

    /// A retrieval suite (Cranfield's 225 judged queries, BM25) is answered by two workers from
    /// the corpus ingested into the PostgreSQL workspace, and its statistics equal the same suite
    /// run on one machine on a file that ingested the same corpus.
    @Test func workersAnswerARetrievalSuiteFromTheCorpusInTheDatabase() throws {
        let cluster = try PostgresCluster.shared
        let directory = TestEnvironment.temporaryDirectory()
        let url = cluster.url(try cluster.database("retrieval-workers"))
        let file = directory + "/one.sqlite"
        let samples = TestEnvironment.repositoryRoot.appendingPathComponent("sample-data").path
        let suite = samples + "/evals/cranfield-bm25.yaml"
        for workspace in [url, file] {
            let ingested = try TestEnvironment.run([
                "ingest", samples + "/cranfield/corpus.jsonl", "--no-embed", "--workspace", workspace,
            ])
            #expect(ingested.status == 0, "\(ingested.error)")
        }
        let queued = try TestEnvironment.run(["eval", "run", suite, "--workers", "--workspace", url])
        #expect(queued.output.contains("run 1 queued: 225 answers for workers"), "\(queued.output)\(queued.error)")
        let a = try worker(url, ["--name", "a", "--concurrency", "2"], log: directory + "/a.log")
        let b = try worker(url, ["--name", "b", "--concurrency", "2"], log: directory + "/b.log")
        #expect(try wait(seconds: 120) { !a.isRunning && !b.isRunning }, "the workers never stopped")
        #expect(a.terminationStatus == 0, "\(said(directory + "/a.log"))")
        #expect(b.terminationStatus == 0, "\(said(directory + "/b.log"))")

        let single = try TestEnvironment.run(["eval", "run", suite, "--workspace", file])
        #expect(single.status == 0, "\(single.error)")
        let (shared, local) = (try shown(url, 1), try shown(file, 1))
        #expect(shared["run"]?["status"] == "complete")
        #expect(shared["results"]?.array?.count == 225)
        #expect(shared["summary"]?["scorers"] == local["summary"]?["scorers"])
        let ndcg = shared["summary"]?["scorers"]?.array?.first { $0["scorer"] == "ndcg@10" }
        #expect(ndcg?["interval"]?["estimate"]?.number.map { $0 > 0.3 } == true, "\(ndcg ?? .null)")
        // Both workers answered, and the run names the corpus it searched, as on a file.
        let text = try TestEnvironment.run(["eval", "show", "1", "--workspace", url])
        #expect(text.output.contains("1400 documents · 1398 chunks"), "\(text.output)")
        for name in ["a", "b"] {
            #expect(text.output.contains("\n  \(name) "), "\(text.output)")
        }
    }

    /// Workers on two hosts of their own (network namespaces, each reaching the database host
    /// only over its link) answer one run; one host's worker is killed at a random moment and the
    /// items it held go to the other. The server sees each worker connect from its host's address.
    /// Network namespaces need root and a machine that allows them (CI runs as root); elsewhere
    /// the test says it was skipped, as the tmux tests do without tmux.
    @Test(.enabled(if: NetworkHosts.canMakeHosts, "making network namespaces (ip netns, as root) is not allowed here"))
    func workersOnTwoHostsAnswerOneRunOverTheNetworkAndAKilledHostsItemsGoBack() throws {
        let network = try NetworkHosts(count: 2)
        defer { network.remove() }
        let (a, b) = (network.hosts[0], network.hosts[1])
        // The database and the model live here, at host a's gateway; host b reaches that address
        // over its own link (this namespace takes packets for any address it holds).
        let databaseHost = a.gateway
        let cluster = try PostgresCluster.dedicated(alsoListeningOn: [databaseHost], clients: "10.231.0.0/16")
        defer { cluster.shutdown() }
        let directory = TestEnvironment.temporaryDirectory()
        let items = 40
        let server = try LocalChatServer(
            replies: (0..<(items * 3)).map { id in
                var reply = EvalCommandTests.completion("Paris", id: id)
                reply.pauseMicroseconds = 20_000
                return reply
            }, host: databaseHost)
        defer { server.stop() }
        let suite = try Self.suite(directory, server: server, items: items)
        let database = try cluster.database("hosts")
        let here = cluster.url(database)
        let queued = try TestEnvironment.run(["eval", "run", suite, "--workers", "--workspace", here])
        #expect(queued.status == 0, "\(queued.error)")

        let url = cluster.url(database, host: databaseHost)
        let options = ["--concurrency", "2", "--lease", "2"]
        let (logA, logB) = (directory + "/a.log", directory + "/b.log")
        let first = try worker(url, ["--name", "host-a"] + options, log: logA, on: (network, a))
        let second = try worker(url, ["--name", "host-b"] + options, log: logB, on: (network, b))
        defer {
            for process in [first, second] where process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        let store = try PostgresStore.open(try PostgresURL(here, environment: [:]))
        defer { store.close() }
        let addresses = Set([a.address, b.address])
        #expect(
            try wait(seconds: 60) {
                let connected = try store.execute(
                    "SELECT DISTINCT host(client_addr) AS address FROM pg_stat_activity "
                        + "WHERE datname = current_database() AND client_addr IS NOT NULL")
                return addresses.isSubset(of: Set(connected.compactMap { $0.text("address") }))
            }, "the workers never connected from their hosts: \(said(logA)) \(said(logB))")

        // Host b's worker dies at a random moment (SIGKILL) after it stored an answer.
        func answered(by worker: String) throws -> Int64 {
            try store.execute(
                "SELECT count(*) AS n FROM eval_work_items WHERE worker = ? AND done_at IS NOT NULL",
                [.text(worker)]
            ).first?.integer("n") ?? 0
        }
        #expect(try wait(seconds: 60) { try answered(by: "host-b") >= 1 }, "\(said(logB))")
        let killAfter = Double.random(in: 0...0.5)
        usleep(UInt32(killAfter * 1e6))
        kill(second.processIdentifier, SIGKILL)
        second.waitUntilExit()
        #expect(second.terminationReason == .uncaughtSignal)

        // Host a's worker takes what b held once b's lease runs out, and finishes the run.
        #expect(try wait(seconds: 120) { !first.isRunning }, "host a's worker never stopped: \(said(logA))")
        #expect(first.terminationStatus == 0, "\(said(logA))")
        let run = try shown(here, 1)
        #expect(run["run"]?["status"] == "complete", "\(run["run"] ?? .null)")
        let results = try #require(run["results"]?.array)
        #expect(results.count == items, "b killed \(killAfter) s after its first answer")
        #expect(Set(results.compactMap { $0["item_id"]?.string }).count == items)
        #expect(results.allSatisfy { $0["error"] == .null })
        #expect(run["summary"]?["scorers"]?.array?.first?["interval"]?["estimate"] == .number(0.5))
        #expect(try answered(by: "host-a") + answered(by: "host-b") == Int64(items))
        #expect(try answered(by: "host-a") > 0)
    }

    /// Ctrl-C while answers are still being made: the worker ends after its grace second, and
    /// the items it held go back to the others at once instead of when their lease runs out.
    @Test func anInterruptedWorkerGivesBackWhatItHolds() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let server = try LocalChatServer(
            replies: (0..<Self.items).map { id in
                var reply = EvalCommandTests.completion("Paris", id: id)
                reply.pauseMicroseconds = 2_000_000
                return reply
            })
        defer { server.stop() }
        let suite = try Self.suite(directory, server: server)
        let file = directory + "/w.sqlite"
        let queued = try TestEnvironment.run(["eval", "run", suite, "--workers", "--workspace", file])
        #expect(queued.status == 0, "\(queued.error)")
        let log = directory + "/slow.log"
        let slow = try worker(file, ["--name", "slow", "--concurrency", "3", "--lease", "600"], log: log)
        let leased = try wait(seconds: 30) {
            try (shown(file, 1)["run"] != nil)
                && TestEnvironment.run(["eval", "show", "1", "--workspace", file]).output.contains("3 in flight")
        }
        #expect(leased)
        kill(slow.processIdentifier, SIGINT)
        slow.waitUntilExit()
        #expect(slow.terminationStatus == 128 + SIGINT, "\(said(log))")
        #expect(said(log).contains("stopped by SIGINT"))
        let after = try TestEnvironment.run(["eval", "show", "1", "--workspace", file])
        #expect(after.output.contains("0 in flight"), "\(after.output)")
    }

    /// A worker started while the server is down (a fleet started before its database) waits for
    /// it with the running workers' back-off, says so once on stderr without the password, and
    /// answers the run once the server is up.
    @Test func aWorkerStartedWhileTheServerIsDownWaitsForIt() throws {
        let cluster = try PostgresCluster.dedicated(durable: true)
        defer { cluster.shutdown() }
        let directory = TestEnvironment.temporaryDirectory()
        let server = try Self.server(answers: Self.items * 2)
        defer { server.stop() }
        let suite = try Self.suite(directory, server: server)
        let url = cluster.url(try cluster.database("late"))
        let queued = try TestEnvironment.run(["eval", "run", suite, "--workers", "--workspace", url])
        #expect(queued.status == 0, "\(queued.error)")
        try cluster.stopServer()
        let log = directory + "/late.log"
        let late = try worker(url, ["1", "--name", "late", "--concurrency", "2"], log: log)
        defer { if late.isRunning { late.terminate() } }
        #expect(wait(seconds: 60) { said(log).contains("Waiting up to") }, "the worker did not wait: \(said(log))")
        #expect(late.isRunning, "the worker stopped while the server was down: \(said(log))")
        try cluster.start()
        late.waitUntilExit()
        let text = said(log)
        #expect(late.terminationStatus == 0, "\(text)")
        #expect(text.components(separatedBy: "Waiting up to").count == 2, "not said once: \(text)")
        #expect(text.contains("the workspace is back; carrying on"), "\(text)")
        #expect(!text.contains(PostgresCluster.password))
        let run = try shown(url, 1)
        #expect(run["run"]?["status"] == "complete")
        #expect(run["results"]?.array?.count == Self.items)
    }

    /// The server restarts under a running worker: it reconnects and finishes, nothing is lost.
    @Test func aWorkerRidesOutAServerRestart() throws {
        let cluster = try PostgresCluster.dedicated()
        defer { cluster.shutdown() }
        let directory = TestEnvironment.temporaryDirectory()
        let server = try Self.server(answers: Self.items * 2)
        defer { server.stop() }
        let suite = try Self.suite(directory, server: server)
        let url = cluster.url(try cluster.database("restart"))
        let queued = try TestEnvironment.run(["eval", "run", suite, "--workers", "--workspace", url])
        #expect(queued.status == 0, "\(queued.error)")
        let log = directory + "/steady.log"
        let running = try worker(url, ["--name", "steady", "--concurrency", "2"], log: log)
        #expect(try wait(seconds: 60) { (try shown(url, 1)["results"]?.array?.count ?? 0) >= 2 })
        try cluster.restart()
        running.waitUntilExit()
        #expect(running.terminationStatus == 0, "\(said(log))")
        let run = try shown(url, 1)
        #expect(run["run"]?["status"] == "complete")
        #expect(run["results"]?.array?.count == Self.items)
    }
}
