import LoupeKit
import LoupeTUI

/// The line at the right of the status bar: the last thing that happened.
package struct StatusMessage: Hashable, Sendable {
    package var text: String
    package var level: StatusLevel

    package init(text: String, level: StatusLevel) {
        self.text = text
        self.level = level
    }

    /// Seconds on screen: errors longer (they are also kept in the log, `o`).
    package var lifetime: Double { level == .error ? 20 : 8 }
}
