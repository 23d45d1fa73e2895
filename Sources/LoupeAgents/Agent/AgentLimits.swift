import Foundation
import LoupeBase

/// What bounds a run: model calls, tokens (input + output, summed over calls), wall time, and
/// how often a failed model call is retried (with exponential backoff).
package struct AgentLimits: Hashable, Sendable {
    package var maxSteps = 8
    package var maxTokens: Int?
    package var maxSeconds: Double = 300
    package var retries = 3
    package var backoffSeconds = 0.5

    package init() {}
}
