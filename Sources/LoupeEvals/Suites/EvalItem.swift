import LoupeAgents
import LoupeBase

/// One item of a dataset.
package struct EvalItem: Hashable, Sendable {
    package var id: String
    package var input: String
    /// Accepted answers (empty when the dataset has none, as for retrieval).
    package var targets: [String]
    /// The target's stated confidence, when the dataset gives one.
    package var confidence: Double?
    /// Every other field, for filtering and for scorers that need them.
    package var metadata: JSONObject
    /// The JSONL line it came from.
    package var line: Int

    package init(
        id: String, input: String, targets: [String] = [], confidence: Double? = nil,
        metadata: JSONObject = [:], line: Int = 0
    ) {
        self.id = id
        self.input = input
        self.targets = targets
        self.confidence = confidence
        self.metadata = metadata
        self.line = line
    }
}
