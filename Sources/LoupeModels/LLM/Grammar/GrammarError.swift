import Foundation
import LoupeBase

/// A JSON schema (a tool's `parameters`, a `response_format`) that constrained decoding cannot
/// enforce, with the place in the schema and the feature, so the caller can say which to drop.
package struct GrammarError: UserFacingError, Hashable, Sendable {
    /// Where in the schema, as a JSON-pointer-like path from its root (`/properties/k`); "" for the root.
    package var path: String
    package var message: String

    package init(path: String, _ message: String) {
        self.path = path
        self.message = message
    }

    package var description: String { "schema at \(path.isEmpty ? "/" : path): \(message)" }
}
