import Foundation
import GRDB

extension Workspace {
    /// Sizes, schema version and row counts per table.
    package func info() throws(WorkspaceError) -> WorkspaceInfo {
        let path = self.path
        let migrator = Workspace.migrator
        let snapshot = try read { db -> WorkspaceInfo in
            let tables = try String.fetchAll(
                db,
                sql: """
                    SELECT name FROM sqlite_master
                    WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'grdb_migrations'
                    ORDER BY name
                    """
            )
            let counts = try tables.map { name in
                WorkspaceInfo.TableCount(
                    name: name,
                    rows: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(name.quotedDatabaseIdentifier)") ?? 0)
            }
            return WorkspaceInfo(
                path: path,
                schemaVersion: try migrator.appliedIdentifiers(db).count,
                knownSchemaVersion: migrator.migrations.count,
                fileBytes: 0,
                walBytes: 0,
                pageSize: try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0,
                pageCount: try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0,
                freePages: try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0,
                journalMode: try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "",
                tables: counts
            )
        }
        var info = snapshot
        info.fileBytes = Workspace.fileSize(path)
        info.walBytes = Workspace.fileSize(path + "-wal")
        return info
    }

    /// Runs SQLite's integrity check and the foreign-key check.
    package func check() throws(WorkspaceError) -> WorkspaceCheck {
        try read { db in
            let integrity = try String.fetchAll(db, sql: "PRAGMA integrity_check")
            let violations = try Row.fetchAll(db, sql: "PRAGMA foreign_key_check").map { row -> String in
                let table: String = row[0]
                let rowid: Int64? = row[1]
                let parent: String = row[2]
                return "\(table) row \(rowid.map(String.init) ?? "?") → \(parent)"
            }
            return WorkspaceCheck(integrity: integrity, foreignKeyViolations: violations)
        }
    }

    /// Checks the file at `path` through one read-only connection, without refusing, migrating
    /// or writing anything, so that a file too damaged to open as a workspace can be diagnosed.
    ///
    /// A missing file is created as a workspace and checked, as any command would.
    package static func check(path: String, busyTimeout: Double = 5) throws(WorkspaceError) -> WorkspaceCheck {
        try checkFileLooksLikeSQLite(path)
        guard fileSize(path) > 0 else { return try Workspace(path: path, busyTimeout: busyTimeout).check() }
        do {
            let reader = try rawReader(path: path, busyTimeout: busyTimeout)
            return try reader.read { db in
                let integrity = try String.fetchAll(db, sql: "PRAGMA integrity_check")
                // On a damaged file the foreign-key check can fail too; integrity already says so.
                let violations =
                    (try? Row.fetchAll(db, sql: "PRAGMA foreign_key_check").map { row -> String in
                        let table: String = row[0]
                        let rowid: Int64? = row[1]
                        let parent: String = row[2]
                        return "\(table) row \(rowid.map(String.init) ?? "?") → \(parent)"
                    }) ?? []
                return WorkspaceCheck(integrity: integrity, foreignKeyViolations: violations)
            }
        } catch let error as DatabaseError where [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode) {
            return WorkspaceCheck(
                integrity: ["the file cannot be read as a database: \(error.message ?? "\(error.resultCode)")"],
                foreignKeyViolations: [], isReadable: false)
        } catch {
            throw translate(error, path: path)
        }
    }

    /// Rebuilds the file without free pages and folds the WAL back into it; returns the bytes
    /// saved.
    @discardableResult
    package func vacuum() throws(WorkspaceError) -> Int64 {
        let before = Workspace.fileSize(path) + Workspace.fileSize(path + "-wal")
        let writer = try writer()
        try translatingErrors(writing: true) {
            try writer.vacuum()
            try writer.writeWithoutTransaction { db in
                _ = try Row.fetchAll(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            }
        }
        return before - (Workspace.fileSize(path) + Workspace.fileSize(path + "-wal"))
    }

    static func fileSize(_ path: String) -> Int64 {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        return (attributes?[.size] as? NSNumber)?.int64Value ?? 0
    }
}
