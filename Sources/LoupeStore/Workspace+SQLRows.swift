import GRDB

extension Workspace {
    /// The rows of `sql` as plain values, in the order of its columns: how `workspace copy`
    /// reads a file without knowing GRDB.
    package func sqlRows(_ sql: String, _ arguments: [SQLValue]) throws(WorkspaceError) -> [[SQLValue]] {
        let bound = StatementArguments(arguments.map(\.databaseValue))
        return try read { db in
            try Row.fetchAll(db, sql: sql, arguments: bound).map { row in row.databaseValues.map(SQLValue.init) }
        }
    }

    /// Runs `body` in one write transaction; its function runs one statement and returns the
    /// statement's rows.
    package func sqlWrite<T: Sendable>(
        _ body: @Sendable (_ execute: (String, [SQLValue]) throws -> [[SQLValue]]) throws -> T
    ) throws(WorkspaceError) -> T {
        try write { db in
            try body { sql, arguments in
                try Row.fetchAll(db, sql: sql, arguments: StatementArguments(arguments.map(\.databaseValue)))
                    .map { row in row.databaseValues.map(SQLValue.init) }
            }
        }
    }
}
