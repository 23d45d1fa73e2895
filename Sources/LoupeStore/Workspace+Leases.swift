import Foundation
import GRDB
import Glibc

extension Workspace {
    /// Claims `kind`/`targetID` for this process in one transaction: returns nil when the lease
    /// is now ours (there was none, it was ours already, or its holder is gone), else the live
    /// lease another process holds, which is left alone.
    package func claimLease(kind: String, targetID: Int64, now: Date = Date()) throws(WorkspaceError) -> JobLease? {
        try write { db in
            if let held = try JobLease.fetchOne(
                db, sql: "SELECT * FROM job_leases WHERE kind = ? AND target_id = ?", arguments: [kind, targetID]),
                !held.isMine, held.isLive(now: now)
            {
                return held
            }
            try JobLease.mine(kind: kind, targetID: targetID, now: now).save(db)
            return nil
        }
    }

    /// Says this process still holds `kind`/`targetID` (a no-op when another took it over).
    package func refreshLease(kind: String, targetID: Int64, now: Date = Date()) throws(WorkspaceError) {
        try write { db in
            try db.execute(
                sql: "UPDATE job_leases SET heartbeat_at = ? WHERE kind = ? AND target_id = ? AND pid = ? AND host = ?",
                arguments: [now, kind, targetID, getpid(), JobLease.currentHost])
        }
    }

    /// Gives up this process's lease on `kind`/`targetID`.
    package func releaseLease(kind: String, targetID: Int64) throws(WorkspaceError) {
        try write { db in
            try db.execute(
                sql: "DELETE FROM job_leases WHERE kind = ? AND target_id = ? AND pid = ? AND host = ?",
                arguments: [kind, targetID, getpid(), JobLease.currentHost])
        }
    }

    /// The leases of `kind` by the leased row's id, live or not (``JobLease/isLive(now:)`` tells).
    package func leases(kind: String) throws(WorkspaceError) -> [Int64: JobLease] {
        try read { db in
            let all = try JobLease.fetchAll(db, sql: "SELECT * FROM job_leases WHERE kind = ?", arguments: [kind])
            return Dictionary(all.map { ($0.targetID, $0) }, uniquingKeysWith: { a, _ in a })
        }
    }
}

extension Workspace {
    /// Marks the agent traces whose recording process died mid-run (their lease is left and not
    /// live): the root span becomes an error "interrupted: …" so the Traces panel and `trace list`
    /// show what happened, and the lease goes. Returns the traces marked.
    @discardableResult
    package func markInterruptedAgentTraces(now: Date = Date()) throws(WorkspaceError) -> [Int64] {
        try write { db in
            let dead = try JobLease.fetchAll(
                db, sql: "SELECT * FROM job_leases WHERE kind = ?", arguments: [JobLease.Kind.agentTrace]
            ).filter { !$0.isLive(now: now) }.map(\.targetID)
            var marked: [Int64] = []
            for id in dead {
                try db.execute(
                    sql: """
                        UPDATE spans SET status = 'error', status_message = ?
                        WHERE trace_id = ? AND ordinal = 0 AND status = 'unset'
                        """,
                    arguments: [JobLease.interruptedMessage, id])
                if db.changesCount > 0 {
                    try db.execute(sql: "UPDATE traces SET error_count = error_count + 1 WHERE id = ?", arguments: [id])
                    marked.append(id)
                }
                try db.execute(
                    sql: "DELETE FROM job_leases WHERE kind = ? AND target_id = ?",
                    arguments: [JobLease.Kind.agentTrace, id])
            }
            return marked
        }
    }
}
