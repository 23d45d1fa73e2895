import Foundation
import LoupeStore
import Synchronization

/// Keeps this process's lease on a running job fresh: a thread refreshes its heartbeat every
/// ``JobLease/heartbeatSeconds`` until ``stop()``, which also gives the lease up. A process that
/// is killed stops refreshing, so another one can take the job over (its pid is gone, or the
/// heartbeat grows older than ``JobLease/staleAfterSeconds``).
///
/// Thread-safety: `stop()` may be called from any thread, once or more.
package final class LeaseHeartbeat: Sendable {
    private let leases: LeaseTables
    private let kind: String
    private let targetID: Int64
    private let stopped = Atomic<Bool>(false)

    private init(database: any SQLDatabase, kind: String, targetID: Int64) {
        leases = LeaseTables(database)
        self.kind = kind
        self.targetID = targetID
    }

    /// Starts refreshing a lease this process already holds (``Workspace/claimLease(kind:targetID:now:)``,
    /// or one an import took).
    package static func start(database: any SQLDatabase, kind: String, targetID: Int64) -> LeaseHeartbeat {
        let heartbeat = LeaseHeartbeat(database: database, kind: kind, targetID: targetID)
        Thread { heartbeat.beat() }.start()
        return heartbeat
    }

    private func beat() {
        var last = Date()
        while !stopped.load(ordering: .relaxed) {
            usleep(200_000)
            guard Date().timeIntervalSince(last) >= JobLease.heartbeatSeconds else { continue }
            last = Date()
            // A refresh that fails (the workspace busy for a moment) is tried again at the next beat.
            try? leases.refreshLease(kind: kind, targetID: targetID)
        }
    }

    /// Stops refreshing and gives the lease up.
    package func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        try? leases.releaseLease(kind: kind, targetID: targetID)
    }
}
