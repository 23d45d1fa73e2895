import Foundation
import GRDB

/// A Loupe workspace: one SQLite file holding everything a user does, readable with `sqlite3`.
///
/// A process opens a workspace once and shares it: the GRDB `DatabasePool` (WAL mode) serves
/// concurrent reads and one writer at a time. A second process on the same file waits up to
/// the busy timeout for the write lock and then gets ``WorkspaceError/Code/busy`` instead of
/// corrupting anything. Every multi-row write is one transaction.
///
/// Thread-safety: all methods may be called from any thread.
package final class Workspace: Sendable {
    /// Marks the file as a Loupe workspace (`PRAGMA application_id`, "LOUP").
    package static let applicationID: Int32 = 0x4C4F_5550

    /// The path the workspace was opened with, as given.
    package let path: String
    let pool: DatabasePool

    /// Opens (and creates, when missing) the workspace at `path`, applying pending migrations.
    ///
    /// - Parameters:
    ///   - busyTimeout: how long to wait for another process's write lock, in seconds.
    /// - Throws: ``WorkspaceError`` when the file is not a workspace, its schema is newer than
    ///   this binary, it is locked past the timeout, or it cannot be created.
    package init(path: String, busyTimeout: Double = 5) throws(WorkspaceError) {
        self.path = path
        try Workspace.checkFileLooksLikeSQLite(path)
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        configuration.foreignKeysEnabled = true
        configuration.label = "loupe-workspace"
        configuration.prepareDatabase { db in
            // WAL with synchronous=NORMAL is safe against application crashes and kills;
            // only a power loss can drop the last transactions, never corrupt the file.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
        } catch {
            throw Workspace.translate(error, path: path)
        }
        try prepareSchema()
    }

    private static func checkFileLooksLikeSQLite(_ path: String) throws(WorkspaceError) {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        if manager.fileExists(atPath: path, isDirectory: &isDirectory) {
            if isDirectory.boolValue {
                throw WorkspaceError(
                    .notAWorkspace, path: path, message: "is a directory; give the path of a .sqlite file")
            }
            guard let handle = FileHandle(forReadingAtPath: path) else {
                throw WorkspaceError(.inaccessible, path: path, message: "cannot be read (check its permissions)")
            }
            defer { try? handle.close() }
            let header = (try? handle.read(upToCount: 16)) ?? Data()
            if !header.isEmpty, header != Data("SQLite format 3\0".utf8) {
                throw WorkspaceError(
                    .notAWorkspace, path: path, message: "is not a SQLite database, so not a Loupe workspace")
            }
        } else {
            let directory = (path as NSString).deletingLastPathComponent
            if !directory.isEmpty, !manager.fileExists(atPath: directory) {
                throw WorkspaceError(.inaccessible, path: path, message: "its directory \(directory) does not exist")
            }
        }
    }

    private func prepareSchema() throws(WorkspaceError) {
        let migrator = Workspace.migrator
        let path = self.path
        try translatingErrors {
            try pool.write { db in
                let applicationID = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
                let userTables = try String.fetchAll(
                    db,
                    sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
                )
                if applicationID != Workspace.applicationID, applicationID != 0 || !userTables.isEmpty {
                    throw WorkspaceError(
                        .notAWorkspace, path: path,
                        message: "is a SQLite database but not a Loupe workspace (application_id \(applicationID)); "
                            + "give a new path to create a workspace"
                    )
                }
            }
            let tooNew = try pool.read { db in try migrator.hasBeenSuperseded(db) }
            if tooNew {
                let applied = try pool.read { db in try migrator.appliedIdentifiers(db) }
                let known = Workspace.migrationIdentifiers
                throw WorkspaceError(
                    .schemaTooNew, path: path,
                    message: "was written by a newer Loupe (schema v\(applied.count); this loupe knows up to "
                        + "v\(known.count)). Upgrade loupe to open it; nothing was changed."
                )
            }
            try migrator.migrate(pool)
            try pool.write { db in
                try db.execute(sql: "PRAGMA application_id = \(Workspace.applicationID)")
                try db.execute(sql: "PRAGMA user_version = \(Workspace.migrationIdentifiers.count)")
            }
        }
    }

    /// Runs `body` in one write transaction; a throw rolls everything back.
    package func write<T: Sendable>(_ body: @Sendable (Database) throws -> T) throws(WorkspaceError) -> T {
        try translatingErrors { try pool.write(body) }
    }

    /// Runs `body` on a read-only snapshot of the workspace.
    package func read<T: Sendable>(_ body: @Sendable (Database) throws -> T) throws(WorkspaceError) -> T {
        try translatingErrors { try pool.read(body) }
    }

    /// Runs `body`, turning SQLite's errors into ``WorkspaceError``s (which pass through).
    func translatingErrors<T>(_ body: () throws -> T) throws(WorkspaceError) -> T {
        do {
            return try body()
        } catch let error as WorkspaceError {
            throw error
        } catch {
            throw Workspace.translate(error, path: path)
        }
    }

    /// Maps SQLite's errors onto the few a user can act on.
    static func translate(_ error: any Error, path: String) -> WorkspaceError {
        guard let error = error as? DatabaseError else {
            return WorkspaceError(.database, path: path, message: "\(error)")
        }
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return WorkspaceError(
                .busy, path: path,
                message: "workspace is busy: another loupe process is writing to it. Try again when it has finished."
            )
        case .SQLITE_NOTADB:
            return WorkspaceError(
                .notAWorkspace, path: path, message: "is not a SQLite database, so not a Loupe workspace")
        case .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_READONLY:
            return WorkspaceError(
                .inaccessible, path: path,
                message: "cannot be opened for writing (\(error.message ?? "\(error.resultCode)"))")
        case .SQLITE_CORRUPT:
            return WorkspaceError(
                .database, path: path, message: "is corrupt (\(error.message ?? "")); run `loupe workspace check`")
        default:
            return WorkspaceError(.database, path: path, message: error.message ?? "\(error)")
        }
    }
}
