import LoupeAgents
import LoupeBase

/// Where the items come from: a JSONL file and the fields that hold each part of an item.
package struct DatasetSpec: Hashable, Sendable {
    /// Absolute (or as resolved against the suite's directory).
    package var path: String
    package var idField = "id"
    package var inputField = "input"
    package var targetField = "target"
    /// A field holding the target's stated confidence in [0, 1], for calibration.
    package var confidenceField = "confidence"

    package init(path: String) { self.path = path }
}
