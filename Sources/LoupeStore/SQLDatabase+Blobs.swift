import Foundation
import GRDB
import GRDBSQLite

/// A table whose rows hold fixed-width records packed into blobs, a shard a row: each row has
/// the first record it holds (`first_row`), how many (`"rows"`) and their bytes (`data`). What
/// ``SQLDatabase/shardedRowBytes(_:rows:bytesPerRow:)`` reads parts of (an SAE activation set's
/// float16 rows, `sae_activation_shards`).
package struct ShardedRows: Sendable {
    /// The table's name.
    package var table: String
    /// The SQL condition that picks one set of shards (`set_id = ?`), and its arguments.
    package var condition: String
    package var arguments: [SQLValue]
    /// The column that orders the set's shards.
    package var order: String

    package init(table: String, condition: String, arguments: [SQLValue], order: String) {
        self.table = table
        self.condition = condition
        self.arguments = arguments
        self.order = order
    }
}

extension SQLDatabase {
    /// ``SQLDatabase/writeStatement(_:_:bytes:)`` in SQL: the bytes become one more
    /// ``SQLValue`` (PostgreSQL sends them as one parameter anyway).
    package func writeStatement(_ sql: String, _ arguments: [SQLValue], bytes: Data) throws(WorkspaceError) {
        _ = try writeStatement(sql, arguments + [.blob([UInt8](bytes))])
    }

    /// ``SQLDatabase/shardedRowBytes(_:rows:bytesPerRow:)`` in SQL, one query for every shard:
    /// its first row asked for, and the bytes from there to the last row asked for or the
    /// shard's end (PostgreSQL's `substring` of a column stored uncompressed fetches only the
    /// chunks that hold them).
    package func shardedRowBytes(_ shards: ShardedRows, rows range: Range<Int>, bytesPerRow: Int)
        throws(WorkspaceError) -> [(firstRow: Int, data: Data)]
    {
        let (greatest, least) = dialect == .sqlite ? ("max", "min") : ("GREATEST", "LEAST")
        let (lower, upper) = (SQLValue.integer(Int64(range.lowerBound)), SQLValue.integer(Int64(range.upperBound)))
        let width = SQLValue.integer(Int64(bytesPerRow))
        let query = """
            SELECT \(greatest)(?, first_row) AS first,
              substr(data, CAST((\(greatest)(?, first_row) - first_row) * ? + 1 AS INTEGER),
                CAST((\(least)(?, first_row + "rows") - \(greatest)(?, first_row)) * ? AS INTEGER)) AS part
            FROM \(shards.table)
            WHERE \(shards.condition) AND first_row < ? AND first_row + "rows" > ? ORDER BY \(shards.order)
            """
        return try readStatements { sql in
            try sql.execute(query, [lower, lower, width, upper, lower, width] + shards.arguments + [upper, lower])
                .map { row in
                    let part: Data
                    if case .blob(let bytes) = row["part"] { part = Data(bytes) } else { part = Data() }
                    return (Int(row.integer("first") ?? 0), part)
                }
        }
    }
}

extension Workspace {
    /// ``SQLDatabase/writeStatement(_:_:bytes:)`` with the bytes bound as they are: no copy of a
    /// retrieval index's tens of megabytes into a ``SQLValue`` and out again.
    package func writeStatement(_ sql: String, _ arguments: [SQLValue], bytes: Data) throws(WorkspaceError) {
        let values = arguments.map(\.databaseValue) + [bytes.databaseValue]
        try write { db in try db.execute(sql: sql, arguments: StatementArguments(values)) }
    }

    /// ``SQLDatabase/shardedRowBytes(_:rows:bytesPerRow:)`` through SQLite's incremental blob
    /// I/O: only the bytes asked for are read, no shard whole (a feature card's dozen rows of a
    /// 3 MB shard).
    package func shardedRowBytes(_ shards: ShardedRows, rows range: Range<Int>, bytesPerRow: Int)
        throws(WorkspaceError) -> [(firstRow: Int, data: Data)]
    {
        let arguments =
            shards.arguments.map(\.databaseValue) + [range.upperBound, range.lowerBound].map(\.databaseValue)
        return try read { db in
            let found = try Row.fetchAll(
                db,
                sql: "SELECT rowid, first_row, rows FROM \(shards.table) "
                    + "WHERE \(shards.condition) AND first_row < ? AND first_row + rows > ? ORDER BY \(shards.order)",
                arguments: StatementArguments(arguments)
            ).map { (rowid: $0[0] as Int64, firstRow: $0[1] as Int, rows: $0[2] as Int) }
            return try found.map { shard in
                let first = max(range.lowerBound, shard.firstRow)
                let last = min(range.upperBound, shard.firstRow + shard.rows)
                var blob: OpaquePointer?
                let opened = sqlite3_blob_open(db.sqliteConnection, "main", shards.table, "data", shard.rowid, 0, &blob)
                defer { sqlite3_blob_close(blob) }
                guard opened == SQLITE_OK, let blob else {
                    throw DatabaseError(resultCode: ResultCode(rawValue: opened), message: "cannot open shard blob")
                }
                let offset = (first - shard.firstRow) * bytesPerRow
                let length = max(0, min((last - first) * bytesPerRow, Int(sqlite3_blob_bytes(blob)) - offset))
                var data = Data(count: length)
                let status = data.withUnsafeMutableBytes { buffer in
                    length == 0 ? SQLITE_OK : sqlite3_blob_read(blob, buffer.baseAddress, Int32(length), Int32(offset))
                }
                guard status == SQLITE_OK else {
                    throw DatabaseError(resultCode: ResultCode(rawValue: status), message: "cannot read shard blob")
                }
                return (first, data)
            }
        }
    }
}
