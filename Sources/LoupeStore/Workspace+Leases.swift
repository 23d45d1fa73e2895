import Foundation
import GRDB

extension Workspace {
    /// Claims `kind`/`targetID` for this process in one transaction: returns nil when the lease
    /// is now ours (there was none, it was ours already, or its holder is gone), else the live
    /// lease another process holds, which is left alone.
    package func claimLease(kind: String, targetID: Int64, now: Date = Date()) throws(WorkspaceError) -> JobLease? {
        try leaseTables.claimLease(kind: kind, targetID: targetID, now: now)
    }

    package var leaseTables: LeaseTables { LeaseTables(self) }

    package func releaseLease(kind: String, targetID: Int64) throws(WorkspaceError) {
        try leaseTables.releaseLease(kind: kind, targetID: targetID)
    }

    package func leases(kind: String) throws(WorkspaceError) -> [Int64: JobLease] {
        try leaseTables.leases(kind: kind)
    }

    @discardableResult
    package func markInterruptedAgentTraces(now: Date = Date()) throws(WorkspaceError) -> [Int64] {
        try leaseTables.markInterruptedAgentTraces(now: now)
    }
}
