import GRDB

extension Workspace {
    /// What a read-only look at a file found: whether it already has this binary's schema.
    struct Inspection {
        /// Every migration this binary knows is applied and the file is marked as a workspace.
        var isCurrent: Bool
        /// How many migrations the file has applied.
        var schemaVersion: Int
    }

    /// Looks at a file through read-only connections and refuses what must not be written to:
    /// a SQLite database of another application, or a workspace of a newer Loupe.
    static func inspect(_ reader: DatabasePool, path: String) throws(WorkspaceError) -> Inspection {
        let migrator = Workspace.migrator
        let known = Set(Workspace.migrationIdentifiers)
        do {
            return try reader.read { db -> Inspection in
                let applicationID = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
                let userTables =
                    try Int.fetchOne(
                        db, sql: "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
                    ?? 0
                if applicationID != Workspace.applicationID, applicationID != 0 || userTables > 0 {
                    throw WorkspaceError(
                        .notAWorkspace, path: path,
                        message: "is a SQLite database but not a Loupe workspace (application_id \(applicationID)); "
                            + "give a new path to create a workspace. Nothing was changed.")
                }
                let userVersion = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
                let applied = try migrator.appliedIdentifiers(db)
                if try migrator.hasBeenSuperseded(db) || userVersion > known.count {
                    throw WorkspaceError(
                        .schemaTooNew, path: path,
                        message: "was written by a newer Loupe (schema v\(max(applied.count, userVersion)); this loupe "
                            + "knows up to v\(known.count)). Upgrade loupe to open it; nothing was changed.")
                }
                return Inspection(
                    isCurrent: applicationID == Workspace.applicationID && known.isSubset(of: applied),
                    schemaVersion: applied.count)
            }
        } catch let error as WorkspaceError {
            throw error
        } catch {
            throw Workspace.translate(error, path: path)
        }
    }

    /// Marks the file as a workspace and applies pending migrations, writing nothing to a file
    /// that is already current.
    ///
    /// Two processes may bring the same old file forward at once. GRDB reads the applied
    /// migrations before it takes the write lock, so the slower process can run a migration the
    /// other has just committed; that migration fails (at the latest on `grdb_migrations`'
    /// primary key) and rolls back whole. The slower process then carries on from the schema it
    /// finds, as long as each failure coincides with another process's progress.
    static func migrate(_ pool: DatabasePool, path: String) throws {
        let migrator = Workspace.migrator
        let known = Set(Workspace.migrationIdentifiers)
        let applicationID = try pool.read { db in try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0 }
        if applicationID != Workspace.applicationID {
            // Its own transaction, first: a kill during the migrations leaves a workspace to finish,
            // not a file that looks foreign.
            try pool.write { db in try db.execute(sql: "PRAGMA application_id = \(Workspace.applicationID)") }
        }
        while true {
            let before = try pool.read { db in try migrator.appliedIdentifiers(db) }
            if known.isSubset(of: before) { break }
            do {
                try migrator.migrate(pool)
                break
            } catch {
                let after = try pool.read { db in try migrator.appliedIdentifiers(db) }
                if try pool.read({ db in try migrator.hasBeenSuperseded(db) }) {
                    throw WorkspaceError(
                        .schemaTooNew, path: path,
                        message: "was brought to a newer schema by another loupe while this one opened it. "
                            + "Upgrade loupe to open it.")
                }
                guard after.count > before.count else { throw error }
            }
        }
        let userVersion = try pool.read { db in try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0 }
        if userVersion != known.count {
            try pool.write { db in try db.execute(sql: "PRAGMA user_version = \(known.count)") }
        }
    }
}

extension Workspace {
    /// Creates a workspace at `path` with only its first `schemaVersion` migrations, as an older
    /// Loupe left it: where tests of bringing files forward start.
    package static func createOlder(path: String, schemaVersion: Int) throws {
        let pool = try DatabasePool(path: path)
        try pool.write { db in try db.execute(sql: "PRAGMA application_id = \(Workspace.applicationID)") }
        try migrator.migrate(pool, upTo: migrationIdentifiers[schemaVersion - 1])
        try pool.write { db in try db.execute(sql: "PRAGMA user_version = \(schemaVersion)") }
        try pool.close()
    }
}
