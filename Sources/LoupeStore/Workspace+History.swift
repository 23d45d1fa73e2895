import Foundation

/// The command history of a SQLite workspace: ``SettingsTables`` over this file.
extension Workspace {
    /// The most recent `limit` command lines from `source`, oldest first.
    package func history(source: HistorySource, limit: Int = 1000) throws(WorkspaceError) -> [String] {
        try settings.history(source: source, limit: limit)
    }

    /// Appends a command line to the history, with credential-shaped parts redacted.
    package func recordHistory(_ line: String, source: HistorySource, now: Date = Date()) throws(WorkspaceError) {
        try settings.recordHistory(line, source: source, now: now)
    }
}
