import Foundation
import Glibc

/// Processes' leases on long jobs (``JobLease``): refreshed while the job runs, given up when it
/// ends, and the agent traces whose recording process died marked interrupted. Written once, in
/// SQL both backends run, over a ``SQLDatabase``.
///
/// Thread-safety: any thread; each method is one read or one transaction.
package struct LeaseTables: Sendable {
    package let database: any SQLDatabase

    package init(_ database: any SQLDatabase) {
        self.database = database
    }

    /// Claims `kind`/`targetID` for this process in one transaction: returns nil when the lease
    /// is now ours (there was none, it was ours already, or its holder is gone), else the live
    /// lease another process holds, which is left alone. Two processes claiming at once on
    /// PostgreSQL: the second's insert finds the first's row, and it is told who holds it.
    package func claimLease(kind: String, targetID: Int64, now: Date = Date()) throws(WorkspaceError) -> JobLease? {
        try database.writeStatements { sql in
            let key: [SQLValue] = [.text(kind), .integer(targetID)]
            func holder() throws -> JobLease? {
                try sql.fetch(JobLease.self, "SELECT * FROM job_leases WHERE kind = ? AND target_id = ?", key).first
            }
            if let held = try holder() {
                if !held.isMine, held.isLive(now: now) { return held }
                // The row judged gone (or ours), and only it: one a racing claimer just wrote stays.
                try sql.execute(
                    "DELETE FROM job_leases WHERE kind = ? AND target_id = ? AND pid = ? AND host = ?",
                    key + [.integer(Int64(held.pid)), .text(held.host)])
            }
            if try sql.insert(JobLease.mine(kind: kind, targetID: targetID, now: now), ignoringConflicts: true)
                .inserted == 0
            {
                return try holder()
            }
            return nil
        }
    }

    /// Says this process still holds `kind`/`targetID` (a no-op when another took it over).
    package func refreshLease(kind: String, targetID: Int64, now: Date = Date()) throws(WorkspaceError) {
        try database.writeStatements { sql in
            try sql.execute(
                "UPDATE job_leases SET heartbeat_at = ? WHERE kind = ? AND target_id = ? AND pid = ? AND host = ?",
                [
                    SQLValue(date: now), .text(kind), .integer(targetID), .integer(Int64(getpid())),
                    .text(JobLease.currentHost),
                ])
        }
    }

    /// Gives up this process's lease on `kind`/`targetID`.
    package func releaseLease(kind: String, targetID: Int64) throws(WorkspaceError) {
        try database.writeStatements { sql in
            try sql.execute(
                "DELETE FROM job_leases WHERE kind = ? AND target_id = ? AND pid = ? AND host = ?",
                [.text(kind), .integer(targetID), .integer(Int64(getpid())), .text(JobLease.currentHost)])
        }
    }

    /// The leases of `kind` by the leased row's id, live or not (``JobLease/isLive(now:)`` tells).
    package func leases(kind: String) throws(WorkspaceError) -> [Int64: JobLease] {
        try database.readStatements { sql in
            let all = try sql.fetch(JobLease.self, "SELECT * FROM job_leases WHERE kind = ?", [.text(kind)])
            return Dictionary(all.map { ($0.targetID, $0) }, uniquingKeysWith: { a, _ in a })
        }
    }

    /// Marks the agent traces whose recording process died mid-run (their lease is left and not
    /// live): the root span becomes an error "interrupted: …" so the Traces panel and `trace list`
    /// show what happened, and the lease goes. Returns the traces marked.
    @discardableResult
    package func markInterruptedAgentTraces(now: Date = Date()) throws(WorkspaceError) -> [Int64] {
        try database.writeStatements { sql in
            let dead = try sql.fetch(
                JobLease.self, "SELECT * FROM job_leases WHERE kind = ?", [.text(JobLease.Kind.agentTrace)]
            ).filter { !$0.isLive(now: now) }.map(\.targetID)
            var marked: [Int64] = []
            for id in dead {
                let changed = try sql.changes(
                    "UPDATE spans SET status = 'error', status_message = ? WHERE trace_id = ? AND ordinal = 0 "
                        + "AND status = 'unset'", [.text(JobLease.interruptedMessage), .integer(id)])
                if changed > 0 {
                    try sql.execute("UPDATE traces SET error_count = error_count + 1 WHERE id = ?", [.integer(id)])
                    marked.append(id)
                }
                try sql.execute(
                    "DELETE FROM job_leases WHERE kind = ? AND target_id = ?",
                    [.text(JobLease.Kind.agentTrace), .integer(id)])
            }
            return marked
        }
    }
}
