import Foundation
import GRDB

/// What `loupe workspace check` found.
package struct WorkspaceCheck: Codable, Hashable, Sendable {
    /// `PRAGMA integrity_check` lines; `["ok"]` when the file is sound.
    package var integrity: [String]
    /// Rows whose foreign key points at nothing, as `table rowid → parent`.
    package var foreignKeyViolations: [String]

    package var isHealthy: Bool { integrity == ["ok"] && foreignKeyViolations.isEmpty }
}
