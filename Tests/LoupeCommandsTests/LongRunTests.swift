import Foundation
import GRDB
import Glibc
import Testing

/// Long jobs through the real binary when more than one process, a signal or a kill meets them:
/// two `eval run` of one suite, SIGTERM during a run, kill -9 during `sae collect`, and the exit
/// statuses scripts rely on.
@Suite(.serialized) struct LongRunTests {
    /// A suite of offline-agent items whose questions are `words` words long: each answer takes a
    /// while (the agent reads the whole question), long enough to be stopped in the middle.
    private func longSuite(items: Int, words: Int) throws -> (file: String, suite: String) {
        let directory = TestEnvironment.temporaryDirectory()
        let question = "what is " + String(repeating: "lorem ipsum dolor sit amet ", count: words / 5) + " 2 + 3?"
        let lines = (0..<items).map { #"{"id": "q\#($0)", "input": "\#(question)", "target": "5"}"# }
        try (lines.joined(separator: "\n") + "\n").write(
            toFile: directory + "/items.jsonl", atomically: true, encoding: .utf8)
        try """
        name: long-questions
        dataset: items.jsonl
        target:
          agent: {provider: offline, max_steps: 8}
        scorers: [contains]
        """.write(toFile: directory + "/suite.yaml", atomically: true, encoding: .utf8)
        return (directory + "/w.sqlite", directory + "/suite.yaml")
    }

    /// Starts the binary without waiting for it.
    private func start(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestEnvironment.binary)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["LANG"] = "C.UTF-8"
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Polls `file` until `condition` holds (the job reached the point the test needs); fails the
    /// test after two minutes rather than hanging.
    private func wait(for file: String, _ condition: (Database) throws -> Bool) throws {
        for _ in 0..<2400 {
            if FileManager.default.fileExists(atPath: file),
                let queue = try? DatabaseQueue(path: file),
                (try? queue.read(condition)) == true
            {
                return
            }
            usleep(50_000)
        }
        Issue.record("the job never reached the state the test waits for")
    }

    @Test func aSecondRunOfASuiteInProgressSaysWhoRunsItAndScoresNothing() throws {
        let (file, suite) = try longSuite(items: 2, words: 10)
        // A run of 2 answers with one made, as a live process (this test's) leaves it mid-way.
        let done = try TestEnvironment.run(["--workspace", file, "eval", "run", suite])
        #expect(done.status == 0, "\(done.error)")
        let queue = try DatabaseQueue(path: file)
        try queue.write { db in
            try db.execute(sql: "DELETE FROM eval_results WHERE run_id = 1 AND item_id = 'q1'")
            try db.execute(sql: "UPDATE eval_runs SET status = 'running', ended_at = NULL WHERE id = 1")
            try db.execute(
                sql: """
                    INSERT INTO job_leases (kind, target_id, pid, host, started_at, heartbeat_at)
                    VALUES ('eval_run', 1, ?, ?, ?, ?)
                    """, arguments: [getpid(), ProcessInfo.processInfo.hostName, Date(), Date()])
        }
        let second = try TestEnvironment.run(["--workspace", file, "eval", "run", suite])
        #expect(second.status == 1)
        #expect(second.error.contains("run 1 is in progress in process \(getpid()) on "))
        #expect(second.error.contains("--new") && !second.error.contains("UNIQUE"))
        #expect(try TestEnvironment.run(["--workspace", file, "eval", "list"]).output.contains("running"))
        // The holder's heartbeat stops (it was killed elsewhere): the run is shown interrupted and
        // the next run takes it over and makes only the missing answer.
        try queue.write { db in
            try db.execute(sql: "UPDATE job_leases SET heartbeat_at = ?", arguments: [Date(timeIntervalSinceNow: -120)])
        }
        #expect(try TestEnvironment.run(["--workspace", file, "eval", "list"]).output.contains("interrupted"))
        let resumed = try TestEnvironment.run(["--workspace", file, "eval", "run", suite])
        #expect(resumed.output.contains("run 1 complete (resumed: 1 answer"), "\(resumed.output)\(resumed.error)")
        let rows = try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM eval_results")! }
        #expect(rows == 2)
        let leases = try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM job_leases")! }
        #expect(leases == 0)
    }

    @Test func twoProcessesRunningOneSuiteNeverJoinOneRun() throws {
        let (file, suite) = try longSuite(items: 12, words: 40_000)
        let first = try start(["--workspace", file, "eval", "run", suite])
        try wait(for: file) { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM job_leases")! > 0 }
        let second = try TestEnvironment.run(["--workspace", file, "eval", "run", suite])
        first.terminate()
        first.waitUntilExit()
        if second.status == 0 {
            // The first finished before the second planned: then the second made a new run.
            #expect(second.output.contains("run 2 complete"))
        } else {
            #expect(second.error.contains("run 1 is in progress in process \(first.processIdentifier)"))
        }
        let duplicates = try DatabaseQueue(path: file).read { db in
            try Int.fetchOne(
                db,
                sql:
                    "SELECT COUNT(*) FROM (SELECT 1 FROM eval_results GROUP BY run_id, item_id, epoch HAVING COUNT(*) > 1)"
            )!
        }
        #expect(duplicates == 0)
    }

    @Test func sigtermStopsARunningEvalWith143AndTheRunResumes() throws {
        let (file, suite) = try longSuite(items: 3, words: 120_000)
        let process = try start(["--workspace", file, "eval", "run", suite])
        // An answer is being made once its agent trace holds a lease.
        try wait(for: file) { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM job_leases WHERE kind = 'agent_trace'")! > 0
        }
        process.terminate()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 143)
        let list = try TestEnvironment.run(["--workspace", file, "eval", "list"])
        #expect(list.output.contains("interrupted") || list.output.contains("cancelled"), "\(list.output)")
        let resumed = try TestEnvironment.run(["--workspace", file, "eval", "run", suite])
        #expect(resumed.status == 0, "\(resumed.error)")
        #expect(resumed.output.contains("run 1 complete (resumed"), "\(resumed.output)")
        // The trace the stopped answer was recording says it was interrupted.
        let marked = try DatabaseQueue(path: file).read { db in
            try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM spans WHERE ordinal = 0 AND status_message LIKE 'interrupted:%'")!
        }
        let unset = try DatabaseQueue(path: file).read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM spans WHERE ordinal = 0 AND status = 'unset'")!
        }
        #expect(unset == 0)
        #expect(marked <= 1)
    }

    @Test func aKilledCollectionIsListedAsPartialAndNotTrainedOn() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let file = directory + "/w.sqlite"
        let corpus = TestEnvironment.repositoryRoot.appendingPathComponent("sample-data/cranfield/corpus.jsonl").path
        let ingested = try TestEnvironment.run(["--workspace", file, "ingest", corpus, "--no-embed"])
        #expect(ingested.status == 0, "\(ingested.error)")
        let collect = try start(["--workspace", file, "sae", "collect", "--layer", "3", "--tokens", "200000"])
        try wait(for: file) { db in
            try Int.fetchOne(db, sql: "SELECT COALESCE(MAX(rows), 0) FROM sae_activation_sets")! > 0
        }
        kill(collect.processIdentifier, SIGKILL)
        collect.waitUntilExit()
        let list = try TestEnvironment.run(["--workspace", file, "sae", "list"])
        #expect(list.output.contains("partial:"), "\(list.output)")
        #expect(list.output.contains("of 200000 rows"))
        let train = try TestEnvironment.run([
            "--workspace", file, "sae", "train", "--layer", "3", "--width", "64", "--k", "4", "--steps", "2",
            "--batch", "256",
        ])
        #expect(train.status == 1)
        #expect(train.error.contains("no complete activations for layer 3"), "\(train.error)")
        let chosen = try TestEnvironment.run([
            "--workspace", file, "sae", "train", "--set", "1", "--width", "64", "--k", "4", "--steps", "2",
        ])
        #expect(chosen.status == 1 && chosen.error.contains("activation set 1 is partial"), "\(chosen.error)")
    }

    /// Two trainers of one SAE would both train it and write over each other's checkpoints (seen
    /// with two `sae train --resume` at once): the second is refused and names the first.
    @Test func aSecondTrainerOfOneSAEIsRefusedAndNamesTheFirst() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let file = directory + "/w.sqlite"
        let corpus = TestEnvironment.repositoryRoot.appendingPathComponent("sample-data/cranfield/corpus.jsonl").path
        let lines = try String(contentsOfFile: corpus, encoding: .utf8).split(separator: "\n").prefix(30)
        try (lines.joined(separator: "\n") + "\n").write(
            toFile: directory + "/small.jsonl", atomically: true, encoding: .utf8)
        #expect(
            try TestEnvironment.run(["--workspace", file, "ingest", directory + "/small.jsonl", "--no-embed"]).status
                == 0)
        let collected = try TestEnvironment.run([
            "--workspace", file, "sae", "collect", "--layer", "3", "--tokens", "1000",
        ])
        #expect(collected.status == 0, "\(collected.error)")
        let first = try start([
            "--workspace", file, "sae", "train", "--set", "1", "--width", "64", "--k", "4", "--batch", "64",
            "--steps", "10000000",
        ])
        try wait(for: file) { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM job_leases WHERE kind = 'sae_model' AND target_id = 1")! > 0
        }
        let second = try TestEnvironment.run(["--workspace", file, "sae", "train", "--resume", "1"])
        first.terminate()
        first.waitUntilExit()
        // SIGTERM stops the first at its next step, with a checkpoint there.
        #expect(first.terminationStatus == 143)
        #expect(second.status == 1)
        #expect(
            second.error.contains("SAE 1 is being trained in process \(first.processIdentifier) on "), "\(second.error)"
        )
        let leases = try DatabaseQueue(path: file).read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM job_leases")!
        }
        #expect(leases == 0)
    }

    @Test func ingestThatSkipsLinesExitsPartialAndStrictStoresNothing() throws {
        let directory = TestEnvironment.temporaryDirectory()
        try "{\"id\": \"a\", \"text\": \"first\"}\nnot json\n".write(
            toFile: directory + "/bad.jsonl", atomically: true, encoding: .utf8)
        try "{\"id\": \"b\", \"text\": \"second\"}\n".write(
            toFile: directory + "/good.jsonl", atomically: true, encoding: .utf8)
        let file = directory + "/w.sqlite"
        let strict = try TestEnvironment.run([
            "--workspace", file, "ingest", "--no-embed", "--strict", directory + "/good.jsonl",
            directory + "/bad.jsonl",
        ])
        #expect(strict.status == 1)
        #expect(strict.error.contains("bad.jsonl:2:") && strict.error.contains("nothing was stored"))
        let chunks = try DatabaseQueue(path: file).read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM chunks")!
        }
        #expect(chunks == 0)
        let partial = try TestEnvironment.run([
            "--workspace", file, "ingest", "--no-embed", directory + "/good.jsonl", directory + "/bad.jsonl",
        ])
        #expect(partial.status == 2)
        let lastLine = partial.error.split(separator: "\n").last.map(String.init) ?? ""
        #expect(lastLine.contains("skipped 1 malformed line"), "\(partial.error)")
    }

    @Test func agentRunJSONExitsNonZeroWhenTheAgentFails() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let result = try TestEnvironment.run(
            [
                "--workspace", directory + "/w.sqlite", "agent", "run", "q", "--provider", "openai", "--base-url",
                "http://127.0.0.1:9/", "--model", "m", "--retries", "0", "--json",
            ], environment: ["OPENAI_API_KEY": "x"])
        #expect(result.status == 1)
        #expect(result.output.contains("resourceSpans"))
        #expect(result.error.contains("the agent did not finish"))
    }
}
