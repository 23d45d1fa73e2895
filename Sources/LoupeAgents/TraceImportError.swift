import Foundation
import LoupeBase

/// Malformed input: the file, where in it (line, zip member, span), the field, and what is wrong.
package struct TraceImportError: UserFacingError, Hashable, Sendable {
    /// The file, with the 1-based line for line-oriented input (JSON Lines).
    package var location: SourceLocation
    /// Where in the file when that is not a line: a zip member, a JSON path (`samples[3]`), a span.
    package var part: String?
    /// The field at fault, as a path from `part` (`events[2].id`).
    package var field: String?
    package var message: String

    package init(at location: SourceLocation, part: String? = nil, field: String? = nil, _ message: String) {
        self.location = location
        self.part = part
        self.field = field
        self.message = message
    }

    package init(file: String, line: Int? = nil, part: String? = nil, field: String? = nil, _ message: String) {
        self.init(at: SourceLocation(file: file, line: line), part: part, field: field, message)
    }

    /// `file:line: field: message` or `file:part: field: message`, without the parts not known.
    package var description: String {
        "\(location)" + (part.map { ":\($0)" } ?? "") + ": " + (field.map { "\($0): " } ?? "") + message
    }
}
