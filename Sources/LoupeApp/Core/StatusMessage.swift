import LoupeKit
import LoupeTUI

/// The line at the right of the status bar: the last thing that happened.
///
/// A message belongs to what made it: one a panel's action said ("✓ copied", "run 2 is the
/// baseline") goes at that panel's next action, which either says its own or moves on; any
/// message goes when another panel is shown (what was said about the panel left behind would be
/// read as about this one; errors stay in the log, `o`); and every one expires.
package struct StatusMessage: Hashable, Sendable {
    package var text: String
    package var level: StatusLevel
    /// The panel whose action said it; nil for the shell's own (a command, a job, the workspace).
    package var origin: PanelID?

    package init(text: String, level: StatusLevel, origin: PanelID? = nil) {
        self.text = text
        self.level = level
        self.origin = origin
    }

    /// Seconds on screen: errors longer (they are also kept in the log, `o`).
    package var lifetime: Double { level == .error ? 20 : 8 }
}
