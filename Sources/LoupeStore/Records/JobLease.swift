import Foundation
import GRDB
import Glibc

/// The claim of one process on a long job (an eval run, an activation collection) while it runs:
/// its pid and host, when it started and when it last said it was alive.
package struct JobLease: Codable, FetchableRecord, PersistableRecord, Hashable, Sendable {
    package static let databaseTableName = "job_leases"
    /// What is leased: ``Kind/evalRun`` or ``Kind/activationSet``.
    package var kind: String
    /// The leased row's id (`eval_runs.id`, `sae_activation_sets.id`).
    package var targetID: Int64
    package var pid: Int32
    package var host: String
    package var startedAt: Date
    package var heartbeatAt: Date

    /// The kinds of job that take a lease.
    package enum Kind {
        package static let evalRun = "eval_run"
        package static let activationSet = "activation_set"
        /// An agent run being recorded into a trace (its root span is unset until it ends).
        package static let agentTrace = "agent_trace"
        /// An SAE being trained (`sae_models.id`): two trainers of one SAE would both do the work
        /// and write over each other's checkpoints.
        package static let saeModel = "sae_model"
    }

    /// The root span's status message of an agent trace whose process was stopped mid-run.
    package static let interruptedMessage = "interrupted: the process recording this run was stopped before it finished"

    package init(kind: String, targetID: Int64, pid: Int32, host: String, startedAt: Date, heartbeatAt: Date) {
        self.kind = kind
        self.targetID = targetID
        self.pid = pid
        self.host = host
        self.startedAt = startedAt
        self.heartbeatAt = heartbeatAt
    }

    /// A heartbeat older than this (seconds) means the holder is gone, whatever its pid says.
    package static let staleAfterSeconds = 60.0
    /// How often (seconds) a holder refreshes its heartbeat.
    package static let heartbeatSeconds = 10.0

    /// This process's lease on `targetID`, starting now.
    package static func mine(kind: String, targetID: Int64, now: Date = Date()) -> JobLease {
        JobLease(
            kind: kind, targetID: targetID, pid: getpid(), host: currentHost, startedAt: now, heartbeatAt: now)
    }

    /// This machine's name as leases record it.
    package static let currentHost = ProcessInfo.processInfo.hostName

    /// True when this process holds the lease.
    package var isMine: Bool { pid == getpid() && host == Self.currentHost }

    /// True while the holder may still be running: its heartbeat is recent and, on this host, its
    /// pid still exists. A lease left by a killed process is not live and may be taken over.
    package func isLive(now: Date = Date()) -> Bool {
        guard now.timeIntervalSince(heartbeatAt) < Self.staleAfterSeconds else { return false }
        guard host == Self.currentHost else { return true }
        if pid == getpid() { return true }
        return kill(pid, 0) == 0 || errno == EPERM
    }

    /// "process 123 on host (started 2026-11-23 13:02:11 UTC)", for messages.
    package var holderDescription: String {
        let format = DateFormatter()
        format.locale = Locale(identifier: "en_US_POSIX")
        format.timeZone = TimeZone(identifier: "UTC")
        format.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
        return "process \(pid) on \(host) (started \(format.string(from: startedAt)))"
    }

    enum CodingKeys: String, CodingKey {
        case kind, pid, host
        case targetID = "target_id"
        case startedAt = "started_at"
        case heartbeatAt = "heartbeat_at"
    }
}
