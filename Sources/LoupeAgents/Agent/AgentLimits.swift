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

    /// The root span attributes a run records its limits in, so that a fork of it runs under the
    /// same ones (a fork of a run stopped at its step limit stops there too).
    package enum Attribute {
        package static let maxSteps = "agent.limits.max_steps"
        package static let maxTokens = "agent.limits.max_tokens"
        package static let maxSeconds = "agent.limits.max_seconds"
        package static let retries = "agent.limits.retries"
    }

    /// The limits recorded on a run's root span (``record(on:)``); nil for a run recorded before
    /// runs recorded them. A value that is not a count keeps the default.
    package init?(recordedOn root: TraceSpan) {
        let a = root.attributes
        guard a[Attribute.maxSteps] != nil else { return nil }
        if let steps = a[Attribute.maxSteps]?.int, steps >= 0 { maxSteps = Int(steps) }
        if let tokens = a[Attribute.maxTokens]?.int, tokens >= 0 { maxTokens = Int(tokens) }
        if let seconds = a[Attribute.maxSeconds]?.number, seconds >= 0, seconds.isFinite { maxSeconds = seconds }
        if let retries = a[Attribute.retries]?.int, retries >= 0 { self.retries = Int(retries) }
    }

    /// Records the limits on `root`, as ``init(recordedOn:)`` reads them.
    package func record(on root: inout TraceSpan) {
        root.attributes[Attribute.maxSteps] = .number(Double(maxSteps))
        root.attributes[Attribute.maxTokens] = maxTokens.map { .number(Double($0)) }
        root.attributes[Attribute.maxSeconds] = .number(maxSeconds)
        root.attributes[Attribute.retries] = .number(Double(retries))
    }

    /// Limits given on a command line, each nil where it was not: a run fills the rest with the
    /// defaults, a fork with its parent's (`trace fork` inherits what `agent run` was given).
    package struct Overrides: Hashable, Sendable {
        package var maxSteps: Int?
        package var maxTokens: Int?
        package var maxSeconds: Double?
        package var retries: Int?

        package init(maxSteps: Int? = nil, maxTokens: Int? = nil, maxSeconds: Double? = nil, retries: Int? = nil) {
            self.maxSteps = maxSteps
            self.maxTokens = maxTokens
            self.maxSeconds = maxSeconds
            self.retries = retries
        }

        /// `base` with each limit given here in its place.
        package func applied(to base: AgentLimits) -> AgentLimits {
            var limits = base
            if let maxSteps { limits.maxSteps = maxSteps }
            if let maxTokens { limits.maxTokens = maxTokens }
            if let maxSeconds { limits.maxSeconds = maxSeconds }
            if let retries { limits.retries = retries }
            return limits
        }
    }
}
