import Foundation
import LoupeBase
import Synchronization

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
