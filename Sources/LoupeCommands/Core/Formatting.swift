import Foundation
import LoupeBase
import LoupeKit

/// Human formatting shared by the commands' tables.
package enum Formatting {
    /// `512 B`, `40.0 KiB`, `3.2 MiB`.
    static func bytes(_ count: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while abs(value) >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(count) B" : String(format: "%.1f ", value) + units[unit]
    }

    /// `1 row`, `3 rows`.
    static func count(_ n: Int, _ singular: String, _ plural: String? = nil) -> String {
        "\(n) \(n == 1 ? singular : plural ?? singular + "s")"
    }

    /// Pretty, key-sorted, snake_case JSON: the same bytes for the same value.
    package static func json<T: Encodable>(_ value: T) throws -> String { try JSONText.pretty(value) }
}

extension CommandFailure {
    /// The text of `path`, or a `FileReadError` saying why not (missing, a directory, permission
    /// denied, too large, not UTF-8).
    static func readText(_ path: String) throws -> String { try TextFile.read(path) }
}
