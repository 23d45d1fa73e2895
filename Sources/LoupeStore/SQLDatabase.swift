import Foundation
import GRDB
import GRDBSQLite

/// The SQL a backend speaks where the two differ.
package enum SQLDialect: Sendable, Hashable {
    case sqlite
    case postgres

    /// Seconds since 1970 by the database's own clock, as SQL: every process on a shared
    /// workspace reads one clock, so a lease's expiry does not depend on whose clock is right.
    package var nowSeconds: String {
        switch self {
        case .sqlite: "((julianday('now') - 2440587.5) * 86400.0)"
        case .postgres: "CAST(EXTRACT(EPOCH FROM clock_timestamp()) AS DOUBLE PRECISION)"
        }
    }

    /// What a `SELECT` that picks rows to update ends with so that concurrent transactions each
    /// take different rows without waiting: PostgreSQL's row locks; SQLite has one writer.
    package var skipLocked: String {
        switch self {
        case .sqlite: ""
        case .postgres: " FOR UPDATE SKIP LOCKED"
        }
    }

    /// The column that orders a table's rows as they were inserted, for tables keyed by their
    /// content: SQLite's rowid; on PostgreSQL the row's place in its table, which is insertion
    /// order for rows only ever inserted and deleted (qrels a source at a time, review skips),
    /// until a vacuum reuses the space of deleted ones.
    package var insertionOrder: String {
        switch self {
        case .sqlite: "rowid"
        case .postgres: "ctid"
        }
    }

    /// The `LIKE` that ignores case: SQLite's does (for ASCII), PostgreSQL's does not.
    package var likeIgnoringCase: String {
        switch self {
        case .sqlite: "LIKE"
        case .postgres: "ILIKE"
        }
    }
}

/// Statements inside one transaction of a ``SQLDatabase``, with SQLite's `?` placeholders.
package protocol SQLStatements {
    /// Runs one statement and returns its rows.
    @discardableResult
    func execute(_ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow]

    /// Runs one statement and returns how many rows it inserted, updated or deleted.
    func changes(_ sql: String, _ arguments: [SQLValue]) throws -> Int

    /// Inserts `rows` (each its `columns`' values, in order) into `table` and returns the
    /// `returning` columns of each row inserted (none when it names none): on SQLite one prepared
    /// statement run per row, on PostgreSQL many rows to a statement, so a trace's 50,000 spans
    /// are not 50,000 round trips. The rows returned may come in any order.
    func insertRows(into table: String, columns: [String], rows: [[SQLValue]], returning: [String]) throws
        -> [SQLRow]

    /// Runs one query and hands `body` its rows one at a time, columns by position: on SQLite
    /// each read in place from the statement's cursor, never copied into a row of its own (a
    /// trace's 50,000 spans, a profile's million events); elsewhere from the rows `execute`
    /// returns. `body` must not keep the row it is given.
    func forEachRow(_ sql: String, _ arguments: [SQLValue], _ body: (SQLCursorRow) throws -> Void) throws

    /// Runs one query someone typed (the agent's `sql` tool) so that nothing it does can write,
    /// and returns its columns, at most `limit` rows and whether there were more: SQLite refuses
    /// a statement that would write before running it (on a read-only connection besides);
    /// PostgreSQL makes the transaction read-only and cuts the query with LIMIT.
    func readOnlyQuery(_ sql: String, limit: Int) throws -> (columns: [String], rows: [[SQLValue]], truncated: Bool)
}

extension SQLStatements {
    /// The rows of ``execute(_:_:)``, one at a time.
    package func forEachRow(_ sql: String, _ arguments: [SQLValue], _ body: (SQLCursorRow) throws -> Void) throws {
        for row in try execute(sql, arguments) { try body(SQLCursorRow(values: row.values)) }
    }
}

/// One row of a query as ``SQLStatements/forEachRow(_:_:_:)`` reads it, its columns by
/// position, each as the type asked for: nil for NULL or for a value of another kind.
package struct SQLCursorRow {
    private enum Source {
        case sqlite(Row)
        case values([SQLValue])
    }

    private let source: Source

    fileprivate init(sqlite row: Row) { source = .sqlite(row) }

    init(values: [SQLValue]) { source = .values(values) }

    /// The integer in column `index` (a whole real counts).
    package func integer(_ index: Int) -> Int64? {
        switch source {
        case .sqlite(let row): row[index]
        case .values(let values): values[index].integer
        }
    }

    /// The integer in column `index` as an `Int`.
    package func int(_ index: Int) -> Int? { integer(index).map { Int($0) } }

    /// The number in column `index` (an integer counts).
    package func real(_ index: Int) -> Double? {
        switch source {
        case .sqlite(let row): row[index]
        case .values(let values): values[index].real
        }
    }

    /// The text in column `index`.
    package func text(_ index: Int) -> String? {
        switch source {
        case .sqlite(let row): row[index]
        case .values(let values): values[index].text
        }
    }

    /// The bytes in column `index`: a blob, or a text's UTF-8.
    package func data(_ index: Int) -> Data? {
        switch source {
        case .sqlite(let row): row[index]
        case .values(let values):
            switch values[index] {
            case .blob(let bytes): Data(bytes)
            case .text(let text): Data(text.utf8)
            default: nil
            }
        }
    }
}

extension SQLStatements {
    /// ``insertRows(into:columns:rows:returning:)`` returning nothing.
    package func insertRows(into table: String, columns: [String], rows: [[SQLValue]]) throws {
        _ = try insertRows(into: table, columns: columns, rows: rows, returning: [])
    }
}

extension SQLStatements {
    @discardableResult
    package func execute(_ sql: String) throws -> [SQLRow] { try execute(sql, []) }

    /// The rows of `sql` decoded as `Record`s (GRDB's `FetchableRecord` decoding, whichever
    /// backend read them).
    package func fetch<Record: FetchableRecord>(
        _ type: Record.Type, _ sql: String, _ arguments: [SQLValue] = []
    ) throws -> [Record] {
        try execute(sql, arguments).map { try Record(row: $0.grdbRow) }
    }

    /// Inserts `record` into its table; returns how many rows were inserted (0 when `ignoringConflicts`
    /// and the key is taken) and the generated `id`, if the table has one and the record had none.
    ///
    /// A nil `id` is left out, so that SQLite's rowid or PostgreSQL's identity column chooses it.
    @discardableResult
    package func insert<Record: EncodableRecord & TableRecord>(
        _ record: Record, ignoringConflicts: Bool = false, returningID: Bool = false
    ) throws -> (inserted: Int, id: Int64?) {
        let dictionary = try record.databaseDictionary.filter { !($0.key == "id" && $0.value.isNull) }
        let columns = dictionary.keys.sorted()
        var sql = "INSERT INTO \(StoreTable.quote(Record.databaseTableName)) (\(StoreTable.list(columns))) VALUES ("
        sql += StoreTable.placeholders(columns.count) + ")"
        if ignoringConflicts { sql += " ON CONFLICT DO NOTHING" }
        let arguments = columns.map { SQLValue(dictionary[$0]!) }
        guard returningID else { return (try changes(sql, arguments), nil) }
        let rows = try execute(sql + " RETURNING id", arguments)
        if case .integer(let id)? = rows.first?["id"] { return (rows.count, id) }
        return (rows.count, nil)
    }
}

/// A workspace's tables reached through statements, on SQLite or PostgreSQL: what the parts of
/// the Store written once for both backends (``EvalTables``) run on.
package protocol SQLDatabase: Sendable {
    var dialect: SQLDialect { get }
    /// The workspace as it is shown: a path, or a URL without its password.
    var displayName: String { get }
    /// Runs `body` on a consistent view of the tables.
    func readStatements<T: Sendable>(_ body: @Sendable (any SQLStatements) throws -> T) throws(WorkspaceError) -> T
    /// Runs `body` in one write transaction; a throw rolls everything back.
    func writeStatements<T: Sendable>(_ body: @Sendable (any SQLStatements) throws -> T) throws(WorkspaceError) -> T
    /// Runs one statement that writes, atomic on its own: no transaction around it where the
    /// backend need not open one (PostgreSQL runs it in one round trip, not BEGIN…COMMIT's three).
    func writeStatement(_ sql: String, _ arguments: [SQLValue]) throws(WorkspaceError) -> [SQLRow]
    /// Runs `body` in one write transaction, as ``writeStatements(_:)`` does; with
    /// `deferringCheckpoint`, a backend that copies its log into the workspace inside the commit
    /// that crosses a mark (SQLite) leaves that to ``foldLog(past:)``, so a caller that answers
    /// someone once its data is committed (the OTLP receiver) answers first. PostgreSQL's server
    /// keeps its own log: there it is ``writeStatements(_:)``.
    func writeStatements<T: Sendable>(
        deferringCheckpoint: Bool, _ body: @Sendable (any SQLStatements) throws -> T
    ) throws(WorkspaceError) -> T
    /// Folds what the backend keeps beside the workspace (SQLite's write-ahead log) into it: all
    /// of it when `bytes` is nil (a process that wrote stops), else once the log passes `bytes`.
    /// Nothing on PostgreSQL, whose server keeps its own log.
    func foldLog(past bytes: Int64?) throws(WorkspaceError)
    /// The file the workspace is, on this machine's disk (whose free space a large import
    /// checks first); nil for a server's database.
    var file: String? { get }
    /// Runs one statement that writes, atomic on its own, whose last placeholder takes `bytes`:
    /// SQLite binds them as they are; in SQL (the default) they are one more ``SQLValue``.
    func writeStatement(_ sql: String, _ arguments: [SQLValue], bytes: Data) throws(WorkspaceError)
    /// Rows `range` of a set of shards (``ShardedRows``), `bytesPerRow` each, as the parts of
    /// the shards that hold them (in order, each with the first row it holds). Only those bytes
    /// are read: SQLite through its incremental blob I/O, in SQL (the default) with `substr`.
    func shardedRowBytes(_ shards: ShardedRows, rows range: Range<Int>, bytesPerRow: Int)
        throws(WorkspaceError) -> [(firstRow: Int, data: Data)]
}

extension SQLDatabase {
    package func foldLog(past bytes: Int64?) throws(WorkspaceError) {}

    package var file: String? { nil }

    package func writeStatements<T: Sendable>(
        deferringCheckpoint: Bool, _ body: @Sendable (any SQLStatements) throws -> T
    ) throws(WorkspaceError) -> T {
        try writeStatements(body)
    }

    package func writeStatement(_ sql: String, _ arguments: [SQLValue]) throws(WorkspaceError) -> [SQLRow] {
        try writeStatements { try $0.execute(sql, arguments) }
    }
}

extension SQLValue {
    /// A value GRDB encodes (a date as GRDB's text, a Bool as 0 or 1), as stored.
    package init(_ value: (any DatabaseValueConvertible)?) {
        self.init(value?.databaseValue ?? .null)
    }

    /// A date as the workspace stores it (GRDB's UTC text), for modules that do not see GRDB.
    package init(date: Date) {
        self.init(date as (any DatabaseValueConvertible))
    }
}

extension SQLRow {
    /// The row as GRDB decodes records from.
    var grdbRow: Row {
        Row(Dictionary(zip(columns, values.map { $0.databaseValue as (any DatabaseValueConvertible)? })) { a, _ in a })
    }

    /// The integer in `column`, nil when it holds none.
    package func integer(_ column: String) -> Int64? { self[column].integer }

    /// The number in `column`, nil when it holds none.
    package func real(_ column: String) -> Double? { self[column].real }

    /// The text in `column`, nil when it holds none.
    package func text(_ column: String) -> String? { self[column].text }
}

extension SQLValue {
    /// The integer held (a whole real counts), nil otherwise.
    package var integer: Int64? {
        switch self {
        case .integer(let value): value
        case .real(let value): Int64(exactly: value)
        default: nil
        }
    }

    /// The number held, nil otherwise.
    package var real: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .real(let value): value
        default: nil
        }
    }

    /// The text held, nil otherwise.
    package var text: String? {
        if case .text(let text) = self { return text }
        return nil
    }
}

/// GRDB's connection as ``SQLStatements``.
struct GRDBStatements: SQLStatements {
    let db: Database

    func execute(_ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow] {
        let statement = try db.cachedStatement(sql: sql)
        let columns = statement.columnNames
        // A cursor: its row is read in place, not copied into a row of its own first.
        let rows = try Row.fetchCursor(statement, arguments: StatementArguments(arguments.map(\.databaseValue)))
        var out: [SQLRow] = []
        while let row = try rows.next() {
            out.append(SQLRow(columns: columns, values: row.databaseValues.map(SQLValue.init)))
        }
        return out
    }

    func forEachRow(_ sql: String, _ arguments: [SQLValue], _ body: (SQLCursorRow) throws -> Void) throws {
        let statement = try db.cachedStatement(sql: sql)
        let rows = try Row.fetchCursor(statement, arguments: StatementArguments(arguments.map(\.databaseValue)))
        while let row = try rows.next() { try body(SQLCursorRow(sqlite: row)) }
    }

    func readOnlyQuery(_ sql: String, limit: Int) throws -> (columns: [String], rows: [[SQLValue]], truncated: Bool) {
        let statement = try db.makeStatement(sql: sql)
        guard statement.isReadonly else { throw StatementWrites() }
        let cursor = try Row.fetchCursor(statement)
        var rows: [[SQLValue]] = []
        while let row = try cursor.next() {
            if rows.count == limit { return (statement.columnNames, rows, true) }
            rows.append(row.databaseValues.map(SQLValue.init))
        }
        return (statement.columnNames, rows, false)
    }

    /// A typed query that would write; the workspace error it becomes says so.
    private struct StatementWrites: Error, CustomStringConvertible {
        var description: String { "the statement writes" }
    }

    func changes(_ sql: String, _ arguments: [SQLValue]) throws -> Int {
        try db.cachedStatement(sql: sql).execute(arguments: StatementArguments(arguments.map(\.databaseValue)))
        return db.changesCount
    }

    func insertRows(into table: String, columns: [String], rows: [[SQLValue]], returning: [String]) throws
        -> [SQLRow]
    {
        guard !rows.isEmpty else { return [] }
        let statement = try db.cachedStatement(
            sql: "INSERT INTO \(StoreTable.quote(table)) (\(StoreTable.list(columns))) "
                + "VALUES (\(StoreTable.placeholders(columns.count)))"
                + (returning.isEmpty ? "" : " RETURNING \(StoreTable.list(returning))"))
        guard !returning.isEmpty else {
            try Self.insert(rows, with: statement, in: db)
            return []
        }
        var out: [SQLRow] = []
        out.reserveCapacity(rows.count)
        for row in rows {
            for returned in try Row.fetchAll(statement, arguments: StatementArguments(row.map(\.databaseValue))) {
                out.append(SQLRow(columns: returning, values: returned.databaseValues.map(SQLValue.init)))
            }
        }
        return out
    }
}

extension GRDBStatements {
    /// Runs an INSERT once per row, each value bound through SQLite's own API. Converting every
    /// row into GRDB's `StatementArguments` (a key path and a protocol box per value, twenty
    /// nested bindings per span) was a fifth of storing a trace import's spans, all of it on the
    /// one writer's core. Texts and blobs are copied by SQLite as they are bound.
    fileprivate static func insert(_ rows: [[SQLValue]], with statement: Statement, in db: Database) throws {
        let handle = statement.sqliteStatement
        // SQLite's SQLITE_TRANSIENT: copy the bytes before the call returns.
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        func check(_ code: Int32, _ expected: Int32 = SQLITE_OK) throws {
            guard code != expected else { return }
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage, sql: statement.sql)
        }
        for row in rows {
            for (index, value) in row.enumerated() {
                let position = Int32(index + 1)
                switch value {
                case .null: try check(sqlite3_bind_null(handle, position))
                case .integer(let n): try check(sqlite3_bind_int64(handle, position, n))
                case .real(let x): try check(sqlite3_bind_double(handle, position, x))
                case .text(let text):
                    // As a C string, as GRDB binds it: the same text stored to the byte (a NUL ends it).
                    try check(text.withCString { sqlite3_bind_text(handle, position, $0, -1, transient) })
                case .blob(let bytes):
                    // An empty blob stays a blob (a null pointer would bind NULL).
                    try check(
                        bytes.isEmpty
                            ? sqlite3_bind_zeroblob(handle, position, 0)
                            : bytes.withUnsafeBytes {
                                sqlite3_bind_blob(handle, position, $0.baseAddress, Int32($0.count), transient)
                            })
                }
            }
            let stepped = sqlite3_step(handle)
            sqlite3_reset(handle)
            try check(stepped, SQLITE_DONE)
        }
    }
}

extension Workspace: SQLDatabase {
    package var dialect: SQLDialect { .sqlite }
    package var displayName: String { path }
    package var file: String? { path }

    package func readStatements<T: Sendable>(
        _ body: @Sendable (any SQLStatements) throws -> T
    ) throws(WorkspaceError) -> T {
        try read { db in try body(GRDBStatements(db: db)) }
    }

    package func writeStatements<T: Sendable>(
        _ body: @Sendable (any SQLStatements) throws -> T
    ) throws(WorkspaceError) -> T {
        try write { db in try body(GRDBStatements(db: db)) }
    }

    /// ``writeStatements(_:)``, committed without SQLite's automatic checkpoint when
    /// `deferringCheckpoint` (see ``write(deferringCheckpoint:_:)``).
    package func writeStatements<T: Sendable>(
        deferringCheckpoint: Bool, _ body: @Sendable (any SQLStatements) throws -> T
    ) throws(WorkspaceError) -> T {
        try write(deferringCheckpoint: deferringCheckpoint) { db in try body(GRDBStatements(db: db)) }
    }
}
