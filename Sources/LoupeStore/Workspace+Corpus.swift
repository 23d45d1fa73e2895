import Foundation

/// The corpus tables of a SQLite workspace: ``CorpusTables`` over this file.
extension Workspace {
    package var corpus: CorpusTables { CorpusTables(self) }
}
