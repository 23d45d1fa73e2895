import Foundation
import GRDB

/// One value of a row as both backends hold it: SQLite's storage classes, which every
/// PostgreSQL column of a workspace maps onto (BIGINT, DOUBLE PRECISION, TEXT, BYTEA).
package enum SQLValue: Sendable, Hashable, CustomStringConvertible {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    /// Its size as copied: 8 bytes a number, the bytes of a text or blob.
    package var byteCount: Int {
        switch self {
        case .null: 0
        case .integer, .real: 8
        case .text(let text): text.utf8.count
        case .blob(let bytes): bytes.count
        }
    }

    package var description: String {
        switch self {
        case .null: "NULL"
        case .integer(let value): String(value)
        case .real(let value): String(value)
        case .text(let text): text.count > 40 ? "'\(text.prefix(40))…'" : "'\(text)'"
        case .blob(let bytes): "<\(bytes.count) bytes>"
        }
    }

    /// A SQLite value as it is stored.
    init(_ value: DatabaseValue) {
        switch value.storage {
        case .null: self = .null
        case .int64(let value): self = .integer(value)
        case .double(let value): self = .real(value)
        case .string(let text): self = .text(text)
        case .blob(let data): self = .blob([UInt8](data))
        }
    }

    /// The SQLite value to bind.
    var databaseValue: DatabaseValue {
        switch self {
        case .null: .null
        case .integer(let value): value.databaseValue
        case .real(let value): value.databaseValue
        case .text(let text): text.databaseValue
        case .blob(let bytes): Data(bytes).databaseValue
        }
    }
}

/// One row read by a query: its values in the order of `columns`.
package struct SQLRow: Sendable, Hashable {
    package var columns: [String]
    package var values: [SQLValue]

    package init(columns: [String], values: [SQLValue]) {
        self.columns = columns
        self.values = values
    }

    package subscript(_ column: String) -> SQLValue {
        columns.firstIndex(of: column).map { values[$0] } ?? .null
    }
}
