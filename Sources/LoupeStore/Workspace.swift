import Foundation
import GRDB
import Synchronization

/// A Loupe workspace: one SQLite file holding everything a user does, readable with `sqlite3`.
///
/// A process opens a workspace once and shares it: the GRDB `DatabasePool` (WAL mode) serves
/// concurrent reads and one writer at a time. A second process on the same file waits up to
/// the busy timeout for the write lock and then gets ``WorkspaceError/Code/busy`` instead of
/// corrupting anything. Every multi-row write is one transaction.
///
/// Opened for ``WorkspaceAccess/read``, it holds read-only connections and takes no lock until
/// its first write, which opens the writer. A file is inspected read-only before anything is
/// written to it: a database that is not a workspace, or one written by a newer Loupe, is
/// refused byte for byte untouched.
///
/// Thread-safety: all methods may be called from any thread.
package final class Workspace: Sendable {
    /// Marks the file as a Loupe workspace (`PRAGMA application_id`, "LOUP").
    package static let applicationID: Int32 = 0x4C4F_5550

    /// The path the workspace was opened with, as given.
    package let path: String
    private let busyTimeout: Double
    /// Serves reads: the writer's pool once there is one, read-only connections before.
    private let readers: DatabasePool
    private let writerPool: Mutex<DatabasePool?>

    /// Opens (and creates, when missing) the workspace at `path`.
    ///
    /// Pending migrations are applied at once, even for a reader, since this binary's queries
    /// need its schema; a reader that cannot write says so.
    ///
    /// - Parameters:
    ///   - access: ``WorkspaceAccess/read`` opens read-only connections and defers the writer to
    ///     the first write.
    ///   - busyTimeout: how long to wait for another process's write lock, in seconds.
    /// - Throws: ``WorkspaceError`` when the file is not a workspace, its schema is newer than
    ///   this binary, it is locked past the timeout, or it cannot be created.
    package init(path: String, access: WorkspaceAccess = .write, busyTimeout: Double = 5) throws(WorkspaceError) {
        self.path = path
        self.busyTimeout = busyTimeout
        try Workspace.checkFileLooksLikeSQLite(path)
        if access == .read, Workspace.fileSize(path) > 0 {
            let reader = try Workspace.openReader(path: path, busyTimeout: busyTimeout)
            let inspection = try Workspace.inspect(reader, path: path)
            if inspection.isCurrent {
                readers = reader
                writerPool = Mutex(nil)
                return
            }
            // This binary's queries need its schema, so even a reader brings an old file forward.
            do {
                let writer = try Workspace.openWriter(path: path, busyTimeout: busyTimeout)
                readers = writer
                writerPool = Mutex(writer)
                return
            } catch  where error.code != .busy {
                throw WorkspaceError(
                    error.code, path: path,
                    message: "has the schema of an older Loupe (v\(inspection.schemaVersion); this loupe needs "
                        + "v\(Workspace.migrationIdentifiers.count)) and could not be brought forward: "
                        + error.message.replacingOccurrences(of: Workspace.readersStillWork, with: "")
                        + " Run any loupe command as a user who may write it (or on a copy) first.")
            }
        }
        let writer = try Workspace.openWriter(path: path, busyTimeout: busyTimeout)
        readers = writer
        writerPool = Mutex(writer)
    }

    private static func configuration(busyTimeout: Double, readonly: Bool) -> Configuration {
        var configuration = Configuration()
        configuration.readonly = readonly
        configuration.busyMode = .timeout(busyTimeout)
        configuration.foreignKeysEnabled = true
        configuration.label = "loupe-workspace"
        configuration.prepareDatabase { db in
            // WAL with synchronous=NORMAL is safe against application crashes and kills;
            // only a power loss can drop the last transactions, never corrupt the file.
            if !db.configuration.readonly {
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
                try db.execute(sql: "PRAGMA journal_size_limit = \(Workspace.logLimit)")
            }
        }
        return configuration
    }

    /// Read-only connections: no lock is taken, nothing is written (not even the journal mode).
    private static func openReader(path: String, busyTimeout: Double) throws(WorkspaceError) -> DatabasePool {
        do {
            return try rawReader(path: path, busyTimeout: busyTimeout)
        } catch {
            throw Workspace.translate(error, path: path)
        }
    }

    /// ``openReader(path:busyTimeout:)`` with SQLite's own errors, for `workspace check`.
    ///
    /// In a directory this user cannot write, or on a full disk, SQLite cannot create or size the
    /// WAL's shared-memory file; with no WAL left to replay, the file is then read as immutable
    /// (nobody can write it there, or anywhere on that disk, either).
    static func rawReader(path: String, busyTimeout: Double) throws -> DatabasePool {
        let configuration = configuration(busyTimeout: busyTimeout, readonly: true)
        do {
            let pool = try DatabasePool(path: path, configuration: configuration)
            // SQLite opens lazily: the shared-memory file is only needed by the first read.
            _ = try pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master") }
            return pool
        } catch let error as DatabaseError
            where [.SQLITE_CANTOPEN, .SQLITE_READONLY, .SQLITE_IOERR, .SQLITE_FULL].contains(error.resultCode)
            && fileSize(path + "-wal") == 0
        {
            let immutable = "file:" + (path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path)
            if let pool = try? DatabasePool(path: immutable + "?immutable=1", configuration: configuration) {
                return pool
            }
            throw error
        }
    }

    /// The writer: inspects the file read-only first, then switches it to WAL, marks it as a
    /// workspace and applies pending migrations.
    private static func openWriter(path: String, busyTimeout: Double) throws(WorkspaceError) -> DatabasePool {
        if fileSize(path) > 0 {
            // Refuse before touching: opening a writable pool already switches the file to WAL.
            let reader = try openReader(path: path, busyTimeout: busyTimeout)
            _ = try inspect(reader, path: path)
            try? reader.close()
        }
        let pool: DatabasePool
        do {
            pool = try DatabasePool(path: path, configuration: configuration(busyTimeout: busyTimeout, readonly: false))
        } catch {
            throw Workspace.translate(error, path: path, writing: true)
        }
        do {
            try migrate(pool, path: path)
        } catch let error as WorkspaceError {
            throw error
        } catch {
            throw Workspace.translate(error, path: path, writing: true)
        }
        return pool
    }

    static func checkFileLooksLikeSQLite(_ path: String) throws(WorkspaceError) {
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

    /// Opens the writer now (bringing the schema forward if needed), so that a file this user
    /// cannot write is reported before a long command does its work.
    package func prepareToWrite() throws(WorkspaceError) {
        _ = try writer()
    }

    /// The pool that writes, opened (and the schema brought forward) on first use.
    func writer() throws(WorkspaceError) -> DatabasePool {
        let path = self.path
        let busyTimeout = self.busyTimeout
        return try writerPool.withLock { (slot: inout DatabasePool?) throws(WorkspaceError) -> DatabasePool in
            if let slot { return slot }
            let pool = try Workspace.openWriter(path: path, busyTimeout: busyTimeout)
            slot = pool
            return pool
        }
    }

    /// Runs `body` in one write transaction; a throw rolls everything back.
    ///
    /// - Parameter deferringCheckpoint: commit without SQLite's automatic checkpoint, which
    ///   (copying the log into the database once it passes 1,000 pages) runs inside the commit
    ///   that crosses the mark and delays whoever waits for that commit. A caller that answers
    ///   someone once its data is committed (the OTLP receiver) writes this way, answers, then
    ///   calls ``checkpoint()``.
    package func write<T: Sendable>(
        deferringCheckpoint: Bool = false, _ body: @Sendable (Database) throws -> T
    ) throws(WorkspaceError) -> T {
        let writer = try writer()
        guard deferringCheckpoint else { return try translatingErrors(writing: true) { try writer.write(body) } }
        return try translatingErrors(writing: true) {
            try writer.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
                defer { try? db.execute(sql: "PRAGMA wal_autocheckpoint = 1000") }
                var result: T?
                try db.inTransaction {
                    result = try body(db)
                    return .commit
                }
                return result!
            }
        }
    }

    /// Copies what the log holds into the database, as far as no reader still needs it
    /// (SQLite's passive checkpoint: it waits for nobody).
    package func checkpoint() throws(WorkspaceError) {
        let writer = try writer()
        try translatingErrors(writing: true) {
            try writer.writeWithoutTransaction { db in _ = try Row.fetchAll(db, sql: "PRAGMA wal_checkpoint(PASSIVE)") }
        }
    }

    /// The size past which SQLite cuts the log back once a checkpoint has copied it all
    /// (`journal_size_limit`): a burst of large spans leaves no gigabyte of log behind.
    package static let logLimit: Int64 = 16 << 20

    /// Folds the write-ahead log into the file, so that the file alone (a copy of it) holds
    /// everything committed. With `bytes` nil, all of it, emptying the log (SQLite's TRUNCATE
    /// checkpoint, which waits up to the busy timeout for readers of the log): what a process
    /// that wrote does when it stops. Otherwise only once the log passes `bytes`, without
    /// waiting for anyone (a passive checkpoint; the log then starts over and is cut back to
    /// ``logLimit``): what a writer that defers SQLite's own checkpoint does after each commit.
    /// Nothing when this workspace never opened its writer.
    ///
    /// - Throws: ``WorkspaceError/Code/busy`` when a whole fold was asked for and another
    ///   connection still read the log after the busy timeout: SQLite answers such a checkpoint
    ///   with a row saying it was blocked, not with an error, so without this check the file would
    ///   silently lack what the log holds. Nothing is lost; the log stays beside the file. A
    ///   passive fold does what no reader prevents and never reports one.
    package func foldLog(past bytes: Int64?) throws(WorkspaceError) {
        guard let writer = writerPool.withLock({ $0 }) else { return }
        if let bytes, Workspace.fileSize(path + "-wal") <= bytes { return }
        let mode = bytes == nil ? "TRUNCATE" : "PASSIVE"
        // (blocked 0 or 1, frames in the log, frames copied into the file), as SQLite documents.
        let answer = try translatingErrors(writing: true) {
            try writer.writeWithoutTransaction { db in
                try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(\(mode))").map { row -> (Int, Int, Int) in
                    (row[0], row[1], row[2])
                }
            }
        }
        guard bytes == nil, let (blocked, frames, copied) = answer, blocked != 0 else { return }
        throw WorkspaceError(
            .busy, path: path,
            message:
                "the write-ahead log was not folded into the file: another connection still reads it "
                + "(SQLite's TRUNCATE checkpoint was blocked after the busy timeout; \(copied) of \(frames) log "
                + "frames copied). Nothing is lost: the rest stays in \((path as NSString).lastPathComponent)-wal "
                + "beside the file, and the next fold copies it.")
    }

    /// Runs `body` on a read-only snapshot of the workspace.
    package func read<T: Sendable>(_ body: @Sendable (Database) throws -> T) throws(WorkspaceError) -> T {
        try translatingErrors { try readers.read(body) }
    }

    /// Runs `body`, turning SQLite's errors into ``WorkspaceError``s (which pass through).
    func translatingErrors<T>(writing: Bool = false, _ body: () throws -> T) throws(WorkspaceError) -> T {
        do {
            return try body()
        } catch let error as WorkspaceError {
            throw error
        } catch {
            throw Workspace.translate(error, path: path, writing: writing)
        }
    }

    /// Said of a file that cannot be written, except where reading it needs a write too.
    private static let readersStillWork = " Commands that only read it (trace list, workspace check, …) still work."

    /// The bytes free to this user on the disk that holds `path`, nil when it cannot be told.
    package static func freeBytes(besides path: String) -> Int64? {
        let directory = (path as NSString).deletingLastPathComponent
        let attributes = try? FileManager.default.attributesOfFileSystem(forPath: directory.isEmpty ? "." : directory)
        return (attributes?[.systemFreeSize] as? NSNumber)?.int64Value
    }

    /// True when the disk holding `path` has (almost) no space left: SQLite reports a full disk
    /// as an I/O error when it is its shared-memory file that cannot grow.
    private static func isDiskFull(besides path: String) -> Bool {
        (freeBytes(besides: path) ?? .max) < 64 * 1024
    }

    /// Maps SQLite's errors onto the few a user can act on.
    static func translate(_ error: any Error, path: String, writing: Bool = false) -> WorkspaceError {
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
            let reason = error.message ?? "\(error.resultCode)"
            if writing {
                return WorkspaceError(
                    .inaccessible, path: path,
                    message: "cannot be written (\(reason)): this user may not write the file or its directory."
                        + readersStillWork)
            }
            return WorkspaceError(
                .inaccessible, path: path, message: "cannot be opened (\(reason)); check the file's permissions")
        case .SQLITE_FULL,
            .SQLITE_IOERR where isDiskFull(besides: path):
            return WorkspaceError(
                .database, path: path,
                message: "cannot be written: the disk is full. Free some space and run the command again."
                    + readersStillWork)
        case .SQLITE_CORRUPT:
            return WorkspaceError(
                .database, path: path,
                message: "is corrupt (\(error.message ?? "")); `loupe workspace check` says what is damaged and how to "
                    + "recover it")
        default:
            return WorkspaceError(.database, path: path, message: error.message ?? "\(error)")
        }
    }
}
