import Foundation
import GRDB

/// A table of the workspace's schema, as the SQLite migrations leave it: what PostgreSQL's
/// schema is made from, and what `workspace copy` copies.
///
/// The migrations stay written once, for SQLite (``Workspace/migrator``). A PostgreSQL workspace
/// gets the tables they produce, translated column by column, so the two backends cannot drift
/// apart: a new migration is a new table, column or index on both.
package struct StoreTable: Sendable, Hashable {
    package struct Column: Sendable, Hashable {
        package var name: String
        /// SQLite's declared type: INTEGER, BOOLEAN, DOUBLE, TEXT, DATETIME or BLOB.
        package var declaredType: String
        package var notNull: Bool
        /// The default as SQL text (`0`, `'cpu'`), nil when none.
        package var defaultSQL: String?
    }

    package struct ForeignKey: Sendable, Hashable {
        package var columns: [String]
        package var table: String
        package var referenced: [String]
        /// `CASCADE`, `SET NULL`, … or `NO ACTION`.
        package var onDelete: String
    }

    package struct Index: Sendable, Hashable {
        package var name: String
        package var columns: [String]
        package var unique: Bool
    }

    package var name: String
    package var columns: [Column]
    /// The primary key's columns; empty for a table keyed only by SQLite's rowid.
    package var primaryKey: [String]
    /// An INTEGER PRIMARY KEY AUTOINCREMENT `id`: an identity column on PostgreSQL.
    package var autoIncrement: Bool
    package var foreignKeys: [ForeignKey]
    /// UNIQUE constraints other than the primary key.
    package var uniqueKeys: [[String]]
    /// Indexes created by the migrations (not those behind a constraint).
    package var indexes: [Index]

    /// A table with no primary key of its own carries SQLite's rowid under this name on
    /// PostgreSQL, so that copying it twice finds the rows already there.
    package static let rowidColumn = "rowid"

    /// The columns that identify a row: the primary key, else the rowid.
    package var keyColumns: [String] { primaryKey.isEmpty ? [Self.rowidColumn] : primaryKey }

    /// The tables a workspace of this binary's schema has, parents before the tables that refer
    /// to them.
    package static func current() throws -> [StoreTable] {
        let queue = try DatabaseQueue()
        try Workspace.migrator.migrate(queue)
        return try queue.read { db in try tables(in: db) }
    }

    /// The migrations this binary knows, by name, in order.
    package static var migrationIdentifiers: [String] { Workspace.migrationIdentifiers }

    /// Reads the tables of a SQLite database (the migrator's own table and the file's revision
    /// counter left out).
    static func tables(in db: Database) throws -> [StoreTable] {
        let names = try String.fetchAll(
            db,
            sql: """
                SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
                AND name != 'grdb_migrations' AND name != ? ORDER BY rowid
                """, arguments: [TraceTables.revisionClock])
        var tables: [StoreTable] = []
        for name in names {
            let sql =
                try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = ?", arguments: [name]) ?? ""
            var primaryKey: [(Int, String)] = []
            var columns: [Column] = []
            for row in try Row.fetchAll(db, sql: "SELECT * FROM pragma_table_info(?)", arguments: [name]) {
                let column: String = row["name"]
                columns.append(
                    Column(
                        name: column, declaredType: (row["type"] as String).uppercased(), notNull: row["notnull"],
                        defaultSQL: row["dflt_value"]))
                let pk: Int = row["pk"]
                if pk > 0 { primaryKey.append((pk, column)) }
            }
            var foreignKeys: [Int: ForeignKey] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT * FROM pragma_foreign_key_list(?) ORDER BY id, seq", arguments: [name])
            {
                let id: Int = row["id"]
                var key =
                    foreignKeys[id]
                    ?? ForeignKey(columns: [], table: row["table"], referenced: [], onDelete: row["on_delete"])
                key.columns.append(row["from"])
                key.referenced.append(row["to"])
                foreignKeys[id] = key
            }
            var uniqueKeys: [[String]] = []
            var indexes: [Index] = []
            for row in try Row.fetchAll(db, sql: "SELECT * FROM pragma_index_list(?) ORDER BY seq", arguments: [name]) {
                let index: String = row["name"]
                let origin: String = row["origin"]
                let indexColumns = try String.fetchAll(
                    db, sql: "SELECT name FROM pragma_index_info(?) ORDER BY seqno", arguments: [index])
                switch origin {
                case "u": uniqueKeys.append(indexColumns)
                case "c": indexes.append(Index(name: index, columns: indexColumns, unique: row["unique"]))
                default: continue
                }
            }
            tables.append(
                StoreTable(
                    name: name, columns: columns, primaryKey: primaryKey.sorted { $0.0 < $1.0 }.map(\.1),
                    autoIncrement: sql.uppercased().contains("AUTOINCREMENT"),
                    foreignKeys: foreignKeys.keys.sorted().compactMap { foreignKeys[$0] },
                    uniqueKeys: uniqueKeys.reversed(),
                    indexes: indexes.reversed()))
        }
        return ordered(tables)
    }

    /// Parents first: a table comes after every other table it refers to.
    private static func ordered(_ tables: [StoreTable]) -> [StoreTable] {
        var placed: Set<String> = []
        var result: [StoreTable] = []
        var pending = tables
        while !pending.isEmpty {
            let ready = pending.filter { table in
                table.foreignKeys.allSatisfy { $0.table == table.name || placed.contains($0.table) }
            }
            // A cycle (none today) would be created in the migrations' order.
            let next = ready.isEmpty ? [pending[0]] : ready
            for table in next {
                result.append(table)
                placed.insert(table.name)
            }
            pending.removeAll { placed.contains($0.name) }
        }
        return result
    }

    /// The PostgreSQL type of a column SQLite declared as `declaredType`: integers and booleans as
    /// BIGINT (GRDB writes a Bool as 0 or 1), dates as TEXT in GRDB's format (so they sort and
    /// compare alike on both backends and copy unchanged).
    package static func postgresType(_ declaredType: String) -> String {
        switch declaredType {
        case "INTEGER", "BOOLEAN": "BIGINT"
        case "DOUBLE", "REAL", "FLOAT": "DOUBLE PRECISION"
        case "BLOB": "BYTEA"
        default: "TEXT"
        }
    }

    /// The statements that create this table on PostgreSQL, or add what an older one lacks:
    /// every statement may run again.
    package var postgresStatements: [String] {
        var definitions: [String] = []
        for column in columns {
            var definition = "\(Self.quote(column.name)) \(Self.postgresType(column.declaredType))"
            if autoIncrement, primaryKey == [column.name] {
                definition += " GENERATED BY DEFAULT AS IDENTITY"
            }
            if column.notNull { definition += " NOT NULL" }
            if let value = column.defaultSQL { definition += " DEFAULT \(value)" }
            definitions.append(definition)
        }
        if primaryKey.isEmpty {
            definitions.append("\(Self.quote(Self.rowidColumn)) BIGINT GENERATED BY DEFAULT AS IDENTITY")
        }
        definitions.append("PRIMARY KEY (\(Self.list(keyColumns)))")
        for key in uniqueKeys { definitions.append("UNIQUE (\(Self.list(key)))") }
        for key in foreignKeys {
            definitions.append(
                "FOREIGN KEY (\(Self.list(key.columns))) REFERENCES \(Self.quote(key.table)) (\(Self.list(key.referenced)))"
                    + (key.onDelete == "NO ACTION" ? "" : " ON DELETE \(key.onDelete)"))
        }
        var statements = [
            "CREATE TABLE IF NOT EXISTS \(Self.quote(name)) (\n  " + definitions.joined(separator: ",\n  ") + "\n)"
        ]
        // A table an older Loupe created lacks the columns added since (a column added by a
        // migration has a default or may be null, as SQLite requires too).
        for column in columns where !primaryKey.contains(column.name) {
            var definition = "\(Self.quote(column.name)) \(Self.postgresType(column.declaredType))"
            if let value = column.defaultSQL { definition += " DEFAULT \(value)" }
            if column.notNull, column.defaultSQL != nil { definition += " NOT NULL" }
            statements.append("ALTER TABLE \(Self.quote(name)) ADD COLUMN IF NOT EXISTS \(definition)")
        }
        // Columns read a slice at a time are kept uncompressed, so `substring` fetches only the
        // TOAST chunks holding the slice instead of decompressing the value up to it.
        for column in columns where Self.slicedColumns.contains("\(name).\(column.name)") {
            statements.append(
                "ALTER TABLE \(Self.quote(name)) ALTER COLUMN \(Self.quote(column.name)) SET STORAGE EXTERNAL")
        }
        for index in indexes {
            statements.append(
                "CREATE \(index.unique ? "UNIQUE " : "")INDEX IF NOT EXISTS \(Self.quote(index.name)) ON "
                    + "\(Self.quote(name)) (\(Self.list(index.columns)))")
        }
        // Foreign keys are indexed on PostgreSQL as SQLite's lookups by parent expect.
        for key in foreignKeys
        where !indexes.contains(where: { $0.columns.starts(with: key.columns) })
            && !keyColumns.starts(with: key.columns)
        {
            statements.append(
                "CREATE INDEX IF NOT EXISTS \(Self.quote("\(name)_by_\(key.columns.joined(separator: "_"))")) ON "
                    + "\(Self.quote(name)) (\(Self.list(key.columns)))")
        }
        return statements
    }

    /// `table.column`s whose values are read in slices (an SAE card reads a dozen rows of a 3 MB
    /// activation shard).
    static let slicedColumns: Set<String> = ["sae_activation_shards.data"]

    /// `table.column`s that belong to the database they are in, kept by its own triggers (a
    /// trace's revision: a counter on SQLite, a transaction id on PostgreSQL). A copy leaves
    /// them out, and the destination numbers what it receives.
    static let localColumns: Set<String> = ["traces.\(TraceTables.revisionColumn)"]

    /// The columns a copy carries: all but ``localColumns``.
    package var copiedColumns: [Column] { columns.filter { !Self.localColumns.contains("\(name).\($0.name)") } }

    package static func quote(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    package static func list(_ identifiers: [String]) -> String {
        identifiers.map(quote).joined(separator: ", ")
    }

    /// `count` placeholders, `?, ?, …`, for a values list or an `IN`.
    package static func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ", ")
    }
}
