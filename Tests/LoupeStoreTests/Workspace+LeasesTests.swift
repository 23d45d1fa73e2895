import Foundation
import GRDB
import Glibc
import LoupeStore
import Testing

/// Leases on running jobs: who holds one, when it counts as gone, and what a killed job leaves.
@Suite struct WorkspaceLeasesTests {
    /// The pid of a process that has exited (and been reaped), so it names no process now.
    private func deadPID() throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        return process.processIdentifier
    }

    @Test func aLiveLeaseIsRefusedAndAStaleOneIsTakenOver() throws {
        let workspace = try TemporaryWorkspace.make("leases")
        #expect(try workspace.leaseTables.claimLease(kind: JobLease.Kind.evalRun, targetID: 1) == nil)
        // Ours again: claiming it twice in one process is fine.
        #expect(try workspace.leaseTables.claimLease(kind: JobLease.Kind.evalRun, targetID: 1) == nil)

        // Another live process on this host (the parent of this one) holds run 2.
        let now = Date()
        let other = JobLease(
            kind: JobLease.Kind.evalRun, targetID: 2, pid: getppid(), host: JobLease.currentHost, startedAt: now,
            heartbeatAt: now)
        try workspace.write { db in try other.insert(db) }
        let held = try #require(try workspace.leaseTables.claimLease(kind: JobLease.Kind.evalRun, targetID: 2))
        #expect(held.pid == getppid() && held.holderDescription.contains("process \(getppid()) on "))

        // Its heartbeat a minute and more behind: gone, whatever its pid.
        #expect(
            try workspace.leaseTables.claimLease(
                kind: JobLease.Kind.evalRun, targetID: 2, now: now.addingTimeInterval(61)) == nil)
        #expect(try workspace.leaseTables.leases(kind: JobLease.Kind.evalRun)[2]?.isMine == true)

        // A dead pid on this host: gone at once.
        let dead = JobLease(
            kind: JobLease.Kind.evalRun, targetID: 3, pid: try deadPID(), host: JobLease.currentHost, startedAt: now,
            heartbeatAt: now)
        #expect(!dead.isLive(now: now))
        // On another host only the heartbeat can tell.
        var remote = dead
        remote.host = "elsewhere.example"
        #expect(remote.isLive(now: now) && !remote.isLive(now: now.addingTimeInterval(120)))

        try workspace.leaseTables.releaseLease(kind: JobLease.Kind.evalRun, targetID: 1)
        #expect(try workspace.leaseTables.leases(kind: JobLease.Kind.evalRun)[1] == nil)
    }

    @Test func theTraceOfAKilledAgentRunIsMarkedInterrupted() throws {
        let workspace = try TemporaryWorkspace.make("leases")
        let now = Date()
        try workspace.write { db in
            try db.execute(
                sql: """
                    INSERT INTO traces (id, external_id, format, name, started_ns, ended_ns, timed, span_count,
                        step_count, error_count, metadata_json, content_hash, imported_at)
                    VALUES (1, 'agent-1', 'loupe', 'q', 0, 0, 1, 1, 0, 0, '{}', 'h', ?),
                           (2, 'agent-2', 'loupe', 'q', 0, 0, 1, 1, 0, 0, '{}', 'h', ?)
                    """, arguments: [now, now])
            try db.execute(
                sql: """
                    INSERT INTO spans (trace_id, ordinal, span_id, kind, name, start_ns, status, payload_json)
                    VALUES (1, 0, 'agent', 'agent', 'q', 0, 'unset', '{}'), (2, 0, 'agent', 'agent', 'q', 0, 'unset', '{}')
                    """)
        }
        let dead = JobLease(
            kind: JobLease.Kind.agentTrace, targetID: 1, pid: try deadPID(), host: JobLease.currentHost,
            startedAt: now, heartbeatAt: now)
        let live = JobLease.mine(kind: JobLease.Kind.agentTrace, targetID: 2)
        try workspace.write { db in
            try dead.insert(db)
            try live.insert(db)
        }
        #expect(try workspace.leaseTables.markInterruptedAgentTraces() == [1])
        let statuses = try workspace.read { db in
            try String.fetchAll(
                db, sql: "SELECT status || ':' || COALESCE(status_message, '') FROM spans ORDER BY trace_id")
        }
        #expect(statuses == ["error:" + JobLease.interruptedMessage, "unset:"])
        #expect(try workspace.leaseTables.leases(kind: JobLease.Kind.agentTrace).keys.sorted() == [2])
    }

    @Test func anActivationSetIsCompleteOnlyWithItsLastRows() throws {
        let workspace = try TemporaryWorkspace.make("leases")
        let set = try workspace.saeTables.createActivationSet(model: "m", layer: 1, dimensions: 4, plannedRows: 5)
        try workspace.saeTables.appendActivationShard(
            set: set, shard: 0, firstRow: 0, data: Data(count: 24), tokens: SAETablesTests.tokens(first: 0, count: 3)
        )
        var stored = try #require(try workspace.saeTables.activationSets().first)
        #expect(!stored.complete && stored.plannedRows == 5 && stored.rows == 3)
        try workspace.saeTables.appendActivationShard(
            set: set, shard: 1, firstRow: 3, data: Data(count: 16),
            tokens: SAETablesTests.tokens(first: 3, count: 2),
            completing: true)
        stored = try #require(try workspace.saeTables.activationSets().first)
        #expect(stored.complete && stored.rows == 5)
    }
}
