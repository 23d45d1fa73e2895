import Foundation

/// The review tables of a SQLite workspace: ``ReviewTables`` over this file.
extension Workspace {
    package var reviews: ReviewTables { ReviewTables(self) }
}
