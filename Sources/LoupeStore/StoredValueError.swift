import Foundation
import LoupeBase

/// A value the workspace stored that does not read back: which value, in which row and column,
/// and why. The workspace wrote these columns itself, so one that fails to decode is a damaged or
/// hand-edited file; the reader says where, instead of showing the row as empty.
package struct StoredValueError: UserFacingError, Hashable, Sendable {
    /// The value as a user names it: "payload", "source", "score value".
    package var what: String
    /// The row as a user finds it: "trace 3, span 12".
    package var row: String
    /// The column that holds the value: "payload_json".
    package var column: String
    /// Why it does not read back: "line 1, column 9: unexpected end of input".
    package var reason: String

    package init(_ what: String, row: String, column: String, reason: String) {
        self.what = what
        self.row = row
        self.column = column
        self.reason = reason
    }

    /// Where it is and what it is, without the reason: `unreadable payload (trace 3, span 12,
    /// column payload_json)`.
    package var headline: String { "unreadable \(what) (\(row), column \(column))" }

    package var description: String { "\(headline): \(reason)" }
}

extension JSONValue {
    /// JSON that the workspace stored in a text column, parsed; a value that does not parse is a
    /// ``StoredValueError`` naming `what`, `row` and `column`.
    package static func parse(
        stored text: String, _ what: String, row: String, column: String
    ) throws(StoredValueError) -> JSONValue {
        do {
            return try parse(text)
        } catch {
            throw StoredValueError(what, row: row, column: column, reason: error.description)
        }
    }
}

extension JSONDecoder {
    /// A `Decodable` value that the workspace stored as JSON text in a column, decoded; one that
    /// does not read back is a ``StoredValueError`` naming `what`, `row` and `column`, saying where
    /// the text stops being JSON, or which field of the JSON does not fit.
    package func decode<T: Decodable>(
        _ type: T.Type, stored text: String, _ what: String, row: String, column: String
    ) throws(StoredValueError) -> T {
        // Parsed first for a syntax error's line and column, which DecodingError does not give.
        _ = try JSONValue.parse(stored: text, what, row: row, column: column)
        do {
            return try decode(type, from: Data(text.utf8))
        } catch {
            throw StoredValueError(what, row: row, column: column, reason: Self.reason(error))
        }
    }

    /// A decoding error in a line: the field by its path and what is wrong with it.
    static func reason(_ error: any Error) -> String {
        func field(_ path: [any CodingKey]) -> String {
            path.isEmpty
                ? "the value" : path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error as? DecodingError {
        case .keyNotFound(let key, let context): return "\(field(context.codingPath + [key])) is missing"
        case .typeMismatch(let type, let context): return "\(field(context.codingPath)) is not of type \(type)"
        case .valueNotFound(let type, let context): return "\(field(context.codingPath)) is null, not of type \(type)"
        case .dataCorrupted(let context): return "\(field(context.codingPath)): \(context.debugDescription)"
        default: return "\(error)"
        }
    }
}
