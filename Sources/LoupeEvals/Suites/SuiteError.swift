import LoupeAgents
import LoupeBase

/// A suite or dataset that cannot be used, with the file and line (and column) that says why.
package struct SuiteError: UserFacingError, Hashable, Sendable {
    /// The suite, dataset or qrels file, with the 1-based line and column when one place is at fault.
    package var location: SourceLocation
    package var message: String

    package init(at location: SourceLocation, _ message: String) {
        self.location = location
        self.message = message
    }

    package init(file: String, line: Int? = nil, column: Int? = nil, _ message: String) {
        self.init(at: SourceLocation(file: file, line: line, column: column), message)
    }

    /// `file:line:column: message`, `file:line: message` or `file: message`.
    package var description: String { "\(location): \(message)" }
}
