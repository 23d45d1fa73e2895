import Foundation

/// The settings of a SQLite workspace: ``SettingsTables`` over this file.
extension Workspace {
    package var settings: SettingsTables { SettingsTables(self) }
}
