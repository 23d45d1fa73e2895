import Foundation
import LoupeBase

/// JSON as commands print it and panels export it.
package enum JSONText {
    /// Pretty, key-sorted, snake_case JSON: the same bytes for the same value.
    package static func pretty<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        // Printed to terminals: no character that hides or reorders text goes out raw.
        return JSONValue.escapingInvisibleCharacters(in: String(decoding: try encoder.encode(value), as: UTF8.self))
    }
}
