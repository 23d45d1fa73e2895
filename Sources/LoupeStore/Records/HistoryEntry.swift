import Foundation

/// One command line of the workspace's history, as `loupe history` lists it.
package struct HistoryEntry: Codable, Hashable, Sendable {
    /// The line as recorded, credentials already redacted (``SettingsTables/recordHistory(_:source:now:)``).
    /// Untrusted: an agent or a person typed it.
    package var line: String
    package var source: HistorySource
    /// When the command ran.
    package var ranAt: Date

    package init(line: String, source: HistorySource, ranAt: Date) {
        self.line = line
        self.source = source
        self.ranAt = ranAt
    }
}
