import Foundation

/// The roofline's tables of a SQLite workspace: ``RooflineTables`` over this file.
extension Workspace {
    package var roofline: RooflineTables { RooflineTables(self) }
}
