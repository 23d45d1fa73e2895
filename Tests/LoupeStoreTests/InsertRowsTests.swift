import Foundation
import LoupeStore
import Testing

/// `insertRows` binds values through SQLite's own API on SQLite: each kind of value must arrive
/// as the kind it was, an empty text and an empty blob included (a null pointer binds NULL).
@Suite struct InsertRowsTests {
    @Test func everyKindOfValueIsStoredAsItWas() throws {
        let workspace = try TemporaryWorkspace.make("insert")
        let values: [SQLValue] = [
            .null, .integer(-42), .integer(.max), .real(2.5), .text(""), .text("é 😀 \u{0}x"), .blob([]),
            .blob([0, 1, 255]),
        ]
        let stored = try workspace.writeStatements { sql in
            try sql.execute("CREATE TABLE kinds (n INTEGER, value)")
            try sql.insertRows(
                into: "kinds", columns: ["n", "value"], rows: values.enumerated().map { [.integer(Int64($0)), $1] })
            return try sql.execute("SELECT typeof(value) AS kind, value FROM kinds ORDER BY n")
        }
        #expect(
            stored.map { $0["kind"] } == [
                .text("null"), .text("integer"), .text("integer"), .text("real"), .text("text"), .text("text"),
                .text("blob"), .text("blob"),
            ])
        // A NUL ends a text, as GRDB (and SQLite's C strings) store it.
        #expect(stored.map { $0["value"] } == values.map { $0 == .text("é 😀 \u{0}x") ? .text("é 😀 ") : $0 })
    }

    @Test func aFailedRowThrowsAndTheStatementStaysUsable() throws {
        let workspace = try TemporaryWorkspace.make("insert-fail")
        try workspace.writeStatements { sql in
            try sql.execute("CREATE TABLE unique_ids (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        }
        #expect(throws: (any Error).self) {
            try workspace.writeStatements { sql in
                try sql.insertRows(
                    into: "unique_ids", columns: ["id", "name"],
                    rows: [[.integer(1), .text("a")], [.integer(1), .text("b")]])
            }
        }
        // The transaction rolled back; the same statement, from the cache, inserts cleanly.
        let count = try workspace.writeStatements { sql in
            try sql.insertRows(into: "unique_ids", columns: ["id", "name"], rows: [[.integer(1), .text("c")]])
            return try sql.execute("SELECT count(*) AS n, max(name) AS name FROM unique_ids")[0]
        }
        #expect(count["n"] == .integer(1))
        #expect(count["name"] == .text("c"))
    }
}
