import Foundation
import LoupeBase
import LoupeKit
import LoupeModels
import LoupePostgres
import LoupeStore
import LoupeTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Two eval workers on a PostgreSQL workspace while the server goes away (`pg_ctl -m immediate
/// stop`, as a crash) and comes back a few seconds later: a workspace error is never an answer.
@Suite(.serialized) struct EvalWorkerOutageTests {
    static let items = 60

    /// Waits (bounded) until `condition` holds; a condition that throws (the server away) is false.
    private func wait(seconds: Double, _ condition: () throws -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if (try? condition()) == true { return true }
            usleep(20_000)
        }
        return (try? condition()) == true
    }

    /// The items in flight while the server is down are answered once the server is back, by
    /// the model, once each: none is stored as an errored answer carrying the connection error,
    /// and the run is complete with the score the model earns (0.5).
    @Test func workersWaitOutAServerOutageAndStoreNoWorkspaceErrorAsAnAnswer() throws {
        let cluster = try PostgresCluster.dedicated(durable: true)
        defer { cluster.shutdown() }
        let directory = TestEnvironment.temporaryDirectory()
        // One answer at a time, each about 100 ms (four network writes 25 ms apart): the run
        // takes several seconds, so the outage lands with items in flight.
        let server = try LocalChatServer(
            replies: (0..<(Self.items * 3)).map { id in
                var reply = EvalCommandTests.completion("Paris", id: id)
                reply.pauseMicroseconds = 25_000
                return reply
            })
        defer { server.stop() }
        // Half the items expect Paris, which the server answers to everything.
        let suitePath = try EvalWorkerBinaryTests.suite(directory, server: server, items: Self.items)
        let url = try PostgresURL(cluster.url(try cluster.database("outage")), environment: [:])
        let models = ModelLibrary(root: directory + "/no-models")

        let observer = try PostgresStore.open(url)
        defer { observer.close() }
        let queuer = EvalService(evals: EvalTables(observer), models: models)
        let queued = try queuer.queue(try queuer.load(suitePath))
        #expect(queued.queued == Self.items)

        let said = Mutex<[String]>([])
        let failures = Mutex<[String]>([])
        let outcomes = Mutex<[EvalService.WorkOutcome]>([])
        let finished = Atomic<Int>(0)
        var threads: [Thread] = []
        for name in ["w1", "w2"] {
            // Each worker with its own connections, as two processes have.
            let store = try PostgresStore.open(url)
            let service = EvalService(evals: EvalTables(store), models: models)
            var options = EvalService.WorkOptions()
            options.run = queued.runID
            options.concurrency = 4
            options.worker = name
            options.leaseSeconds = 8
            options.reconnectSeconds = 40
            options.waiting = { message in said.withLock { $0.append(message) } }
            let fixed = options
            let thread = Thread {
                defer {
                    store.close()
                    finished.add(1, ordering: .relaxed)
                }
                do {
                    let outcome = try service.work(fixed)
                    outcomes.withLock { $0.append(outcome) }
                } catch {
                    failures.withLock { $0.append("\(name): \(error)") }
                }
            }
            thread.start()
            threads.append(thread)
        }

        func stored() throws -> Int64 {
            try observer.execute("SELECT count(*) AS n FROM eval_results").first?.integer("n") ?? 0
        }
        #expect(wait(seconds: 60) { try stored() >= 8 }, "the workers stored nothing")
        let before = try stored()
        try cluster.stopImmediately()
        sleep(3)
        try cluster.start()
        #expect(before < Int64(Self.items), "the run was over before the server stopped")

        #expect(wait(seconds: 120) { finished.load(ordering: .relaxed) == 2 }, "the workers never stopped")
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")

        let results = try EvalTables(observer).evalResults(run: queued.runID)
        let errored = results.filter { $0.error != nil }
        #expect(errored.isEmpty, "errored answers: \(errored.map { "\($0.itemID): \($0.error ?? "")" })")
        #expect(results.count == Self.items)
        #expect(Set(results.map(\.itemID)).count == Self.items, "an item answered twice or not at all")
        #expect(try EvalTables(observer).evalRun(queued.runID)?.status == "complete")
        let exact = try EvalTables(observer).evalScores(run: queued.runID).filter { $0.scorer == "exact" }
        #expect(exact.count == Self.items)
        #expect(exact.filter { $0.passed == true }.count == Self.items / 2, "the score is not 0.500")
        // Answered by the model: at most the items in flight were asked twice.
        #expect(server.requests.count >= Self.items && server.requests.count <= Self.items + 8)
        let outcome = outcomes.withLock { $0 }
        // What each worker counts may differ from the rows by an answer or two: an answer stored
        // again when its commit was lost in transit is not counted. The server is durable
        // (synchronous_commit=on): with it off, a crash can lose a trace whose commit was
        // acknowledged, and the answer that names it then fails its foreign key.
        #expect(outcome.count == 2, "\(failures.withLock { $0 })")
        #expect(outcome.allSatisfy { $0.errors == 0 }, "\(outcome)")
        // The workers said why they waited, naming the workspace, without its password.
        let messages = said.withLock { $0 }
        #expect(!messages.isEmpty, "no worker said it was waiting for the workspace")
        #expect(messages.allSatisfy { !$0.contains(PostgresCluster.password) })
        #expect(messages.contains { $0.contains(url.description) }, "\(messages)")
    }
}
