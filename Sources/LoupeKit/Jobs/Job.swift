import Foundation
import LoupeBase
import Synchronization

/// Identifies a running job within one process.
package struct JobID: Hashable, Sendable, Comparable, CustomStringConvertible {
    package var rawValue: Int

    package init(_ rawValue: Int) { self.rawValue = rawValue }

    package static func < (lhs: JobID, rhs: JobID) -> Bool { lhs.rawValue < rhs.rawValue }
    package var description: String { "#\(rawValue)" }
}

/// How far a job has come: `completed` of `total` units (total nil when unknown) and a line
/// saying what it is doing.
package struct JobProgress: Hashable, Sendable {
    package var completed: Double
    package var total: Double?
    package var detail: String
    /// Named figures a panel can plot live (an SAE's loss and L0 as it trains).
    package var values: [String: Double]

    package init(completed: Double, total: Double?, detail: String = "", values: [String: Double] = [:]) {
        self.completed = completed
        self.total = total
        self.detail = detail
        self.values = values
    }

    /// Completed share in 0...1, or nil when the total is unknown.
    package var fraction: Double? {
        guard let total, total > 0 else { return nil }
        return min(1, max(0, completed / total))
    }

    /// Seconds left, extrapolated linearly from `elapsed` seconds; nil before any progress.
    package func estimatedSecondsRemaining(elapsed: Double) -> Double? {
        guard let fraction, fraction > 0, elapsed > 0 else { return nil }
        return elapsed * (1 - fraction) / fraction
    }
}

/// Thrown by work that noticed its job was cancelled.
package struct JobCancelled: UserFacingError, Hashable, Sendable, CustomStringConvertible {
    package init() {}
    package var description: String { "cancelled" }
}

/// What running work holds: where to report progress and whether it should stop.
///
/// Work calls ``report(_:)`` as often as it likes (the receiver coalesces) and
/// ``checkCancellation()`` between units. Thread-safety: any thread.
package final class JobReporter: Sendable {
    package let id: JobID
    private let cancelled = Atomic<Bool>(false)
    private let sink: @Sendable (JobID, JobProgress) -> Void

    package init(id: JobID, sink: @escaping @Sendable (JobID, JobProgress) -> Void) {
        self.id = id
        self.sink = sink
    }

    /// A reporter that goes nowhere, for work run outside any UI.
    package static func detached() -> JobReporter { JobReporter(id: JobID(0)) { _, _ in } }

    package func report(_ progress: JobProgress) { sink(id, progress) }

    /// Asks the work to stop at its next check.
    package func cancel() { cancelled.store(true, ordering: .relaxed) }

    package var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    /// Throws ``JobCancelled`` once ``cancel()`` was called.
    package func checkCancellation() throws(JobCancelled) {
        if isCancelled { throw JobCancelled() }
    }
}
