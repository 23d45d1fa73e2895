import Foundation
import GRDB

/// What `loupe workspace check` found.
package struct WorkspaceCheck: Codable, Hashable, Sendable {
    /// `PRAGMA integrity_check` lines; `["ok"]` when the file is sound.
    package var integrity: [String]
    /// Rows whose foreign key points at nothing, as `table rowid → parent`.
    package var foreignKeyViolations: [String]
    /// False when SQLite could not even read the file's schema (a truncated or overwritten file).
    package var isReadable = true

    /// True when every problem is in an index, which `REINDEX` rebuilds from the intact tables.
    package var onlyIndexesDamaged: Bool {
        !isHealthy && isReadable && foreignKeyViolations.isEmpty
            && integrity.allSatisfy { $0 == "ok" || $0.contains("index ") }
    }

    package var isHealthy: Bool { integrity == ["ok"] && foreignKeyViolations.isEmpty }
}
