import Foundation
import LoupeBase
import Synchronization

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
