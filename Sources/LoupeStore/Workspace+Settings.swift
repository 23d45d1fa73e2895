import Foundation

/// The settings of a SQLite workspace: ``SettingsTables`` over this file.
extension Workspace {
    package var settings: SettingsTables { SettingsTables(self) }

    /// The stored value of a setting, or nil when it was never set.
    package func setting(_ key: String) throws(WorkspaceError) -> String? { try settings.setting(key) }

    /// Stores a setting, replacing any earlier value.
    package func setSetting(_ key: String, to value: String, now: Date = Date()) throws(WorkspaceError) {
        try settings.setSetting(key, to: value, now: now)
    }
}
