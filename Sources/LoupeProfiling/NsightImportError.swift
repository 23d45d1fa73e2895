import Foundation
import LoupeBase

/// A file that cannot be imported, and why.
package struct NsightImportError: UserFacingError, Hashable, Sendable {
    /// The export, and the 1-based line when one row is at fault.
    package var location: SourceLocation
    package var message: String

    package init(at location: SourceLocation, message: String) {
        self.location = location
        self.message = message
    }

    package init(file: String, line: Int?, message: String) {
        self.init(at: SourceLocation(file: file, line: line), message: message)
    }

    /// `file:line: message`, or `file: message` for the file as a whole.
    package var description: String { "\(location): \(message)" }
}
