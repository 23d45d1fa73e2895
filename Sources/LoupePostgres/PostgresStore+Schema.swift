import Foundation
import LoupeStore

extension PostgresStore {
    /// The workspace's tables as this binary's migrations define them, read once.
    static let tables: Result<[StoreTable], WorkspaceError> = {
        do {
            return .success(try StoreTable.current())
        } catch {
            return .failure(
                WorkspaceError(.database, path: "schema", message: "the migrations did not apply: \(error)"))
        }
    }()

    /// Creates the workspace's tables in an empty database, or adds what an older Loupe's lacks,
    /// in one transaction under an advisory lock: two processes opening the same database at
    /// once do not collide, and a kill leaves the schema as it was.
    ///
    /// A database holding other tables but no Loupe schema is refused untouched, and so is one
    /// brought forward by a newer Loupe.
    func migrate() throws(WorkspaceError) {
        let known = StoreTable.migrationIdentifiers
        let tables = try Self.tables.get()
        let shown = url.description
        try transaction { session in
            try session.execute("SELECT pg_advisory_xact_lock(?)", [.integer(Self.migrationLock)])
            let present = try session.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
            ).compactMap { $0.text("table_name") }
            if !present.isEmpty, !present.contains(Self.migrationsTable) {
                throw WorkspaceError(
                    .notAWorkspace, path: shown,
                    message: "holds \(present.count) tables but no Loupe workspace (no \(Self.migrationsTable) "
                        + "table); give an empty database. Nothing was changed.")
            }
            try session.execute(
                "CREATE TABLE IF NOT EXISTS \(Self.migrationsTable) (identifier TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
            )
            let applied = Set(
                try session.execute("SELECT identifier FROM \(Self.migrationsTable)").compactMap {
                    $0.text("identifier")
                })
            let unknown = applied.subtracting(known)
            if !unknown.isEmpty {
                throw WorkspaceError(
                    .schemaTooNew, path: shown,
                    message: "was written by a newer Loupe (schema v\(applied.count); this loupe knows up to "
                        + "v\(known.count)). Upgrade loupe to open it; nothing was changed.")
            }
            if applied.count < known.count {
                for table in tables {
                    for statement in table.postgresStatements { try session.execute(statement) }
                }
                // Data a migration derives from rows already there, as SQLite's migration does.
                if !applied.contains(TraceTables.usageMigration) { try session.execute(TraceTables.usageBackfill) }
                if !applied.contains(SettingsTables.mcpSourceMigration) {
                    try session.execute(SettingsTables.mcpSourceBackfill)
                }
                if !applied.contains(TraceTables.recountMigration) {
                    try TraceTables.recountNestedModelCalls(into: session)
                }
                let now = Self.timestamp(Date())
                for identifier in known where !applied.contains(identifier) {
                    try session.execute(
                        "INSERT INTO \(Self.migrationsTable) (identifier, applied_at) VALUES (?, ?)",
                        [.text(identifier), .text(now)])
                }
            }
            // Databases made before the tables announced their changes get their triggers too, and
            // those made before some tables announced row by row (``rowAnnounced``) get them again.
            // Databases made before traces were numbered as they change get that trigger too.
            let (announce, revise) = (SQLValue.text(Self.changesChannel), SQLValue.text(Self.revisionTrigger))
            let triggers = try session.execute(
                """
                SELECT COUNT(*) FILTER (WHERE t.tgname = ?) AS n,
                  COUNT(*) FILTER (WHERE t.tgname = ? AND (t.tgtype & 1) = 1) AS by_row,
                  COUNT(*) FILTER (WHERE t.tgname = ?) AS revised
                FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
                JOIN pg_namespace s ON s.oid = c.relnamespace
                WHERE t.tgname IN (?, ?) AND s.nspname = current_schema()
                """, [announce, announce, revise, announce, revise]
            ).first
            if triggers?.integer("n") != Int64(tables.count)
                || triggers?.integer("by_row") != Int64(Self.rowAnnounced.count)
            {
                for statement in Self.announcingStatements(tables) { try session.execute(statement) }
            }
            if triggers?.integer("revised") != 1 {
                for statement in Self.revisionStatements { try session.execute(statement) }
            }
        }
    }

    /// The trigger that numbers each trace row as it is inserted or changed.
    static let revisionTrigger = "loupe_revision"

    /// Each trace row inserted or updated takes its transaction's id as its revision
    /// (``TraceTables/revisionColumn``): ids are handed out as transactions first write, and a
    /// reader's snapshot names the next id and those still running, which is what makes a
    /// watermark that misses nothing committed out of order (``TraceTables/traceChanges(since:)``).
    /// SQLite's migration (v25) keeps a counter instead.
    static let revisionStatements = [
        """
        CREATE OR REPLACE FUNCTION loupe_revise() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN NEW.\(TraceTables.revisionColumn) := CAST(CAST(pg_current_xact_id() AS TEXT) AS BIGINT); RETURN NEW; END $$
        """,
        "DROP TRIGGER IF EXISTS \(revisionTrigger) ON traces",
        "CREATE TRIGGER \(revisionTrigger) BEFORE INSERT OR UPDATE ON traces FOR EACH ROW EXECUTE FUNCTION loupe_revise()",
    ]

    /// The channel each commit that changes a workspace table is announced on, with the table's
    /// name (``PostgresWatcher`` listens to it); also the name of the triggers that announce it.
    package static let changesChannel = "loupe_changes"

    /// Tables whose triggers announce row by row: eval workers' leases, a statement each worker
    /// thread runs before each answer, finding nothing once the run is all leased.
    static let rowAnnounced: Set<String> = ["eval_work_items"]

    /// A statement-level trigger on every table calling `pg_notify`: PostgreSQL delivers the
    /// notices when the transaction commits (none for one rolled back) and sends one per table
    /// and transaction however many statements it ran, so a receiver's import of a thousand
    /// spans costs one notice.
    ///
    /// The tables in ``rowAnnounced`` announce row by row instead (and on TRUNCATE by statement):
    /// a statement that changes no row of them announces nothing, and PostgreSQL still delivers
    /// one notice a transaction, as it folds identical notices.
    static func announcingStatements(_ tables: [StoreTable]) -> [String] {
        let function = "loupe_announce_change"
        var statements = [
            """
            CREATE OR REPLACE FUNCTION \(function)() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN PERFORM pg_notify('\(changesChannel)', TG_TABLE_NAME); RETURN NULL; END $$
            """
        ]
        for table in tables {
            let name = StoreTable.quote(table.name)
            statements.append("DROP TRIGGER IF EXISTS \(changesChannel) ON \(name)")
            statements.append("DROP TRIGGER IF EXISTS \(changesChannel)_truncate ON \(name)")
            if rowAnnounced.contains(table.name) {
                statements.append(
                    "CREATE TRIGGER \(changesChannel) AFTER INSERT OR UPDATE OR DELETE ON \(name) "
                        + "FOR EACH ROW EXECUTE FUNCTION \(function)()")
                statements.append(
                    "CREATE TRIGGER \(changesChannel)_truncate AFTER TRUNCATE ON \(name) "
                        + "FOR EACH STATEMENT EXECUTE FUNCTION \(function)()")
            } else {
                statements.append(
                    "CREATE TRIGGER \(changesChannel) AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON \(name) "
                        + "FOR EACH STATEMENT EXECUTE FUNCTION \(function)()")
            }
        }
        return statements
    }

    /// How many migrations the database has applied.
    package func schemaVersion() throws(WorkspaceError) -> Int {
        let rows = try execute("SELECT COUNT(*) AS n FROM \(Self.migrationsTable)")
        if case .integer(let count) = rows.first?["n"] { return Int(count) }
        return 0
    }

    /// A date as GRDB writes it into SQLite (UTC, milliseconds), so both backends hold the same
    /// text.
    package static func timestamp(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss.SSS"
        return formatter.string(from: date)
    }
}

/// What `loupe workspace info` reports of a PostgreSQL workspace.
package struct PostgresWorkspaceInfo: Codable, Hashable, Sendable {
    /// The URL without its password.
    package var url: String
    package var server: String
    package var schemaVersion: Int
    package var knownSchemaVersion: Int
    package var databaseBytes: Int64
    package var tables: [WorkspaceInfo.TableCount]
}

extension PostgresStore {
    /// The server, the schema, the database's size and the rows of every table.
    package func info() throws(WorkspaceError) -> PostgresWorkspaceInfo {
        func integer(_ sql: String) throws(WorkspaceError) -> Int64 {
            if case .integer(let value) = try execute(sql).first?.values.first { return value }
            return 0
        }
        var server = ""
        if case .text(let version) = try execute("SHOW server_version").first?.values.first { server = version }
        var tables: [WorkspaceInfo.TableCount] = []
        for table in try Self.tables.get().sorted(by: { $0.name < $1.name }) {
            let rows = try integer("SELECT COUNT(*) FROM \(StoreTable.quote(table.name))")
            tables.append(WorkspaceInfo.TableCount(name: table.name, rows: Int(rows)))
        }
        return PostgresWorkspaceInfo(
            url: url.description, server: "PostgreSQL \(server)", schemaVersion: try schemaVersion(),
            knownSchemaVersion: StoreTable.migrationIdentifiers.count,
            databaseBytes: try integer("SELECT pg_database_size(current_database())"), tables: tables)
    }
}
