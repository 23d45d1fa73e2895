import LoupeBase

/// A theme file that could not be used, with the place to fix it.
package struct ThemeError: UserFacingError, Hashable, Sendable {
    /// The theme file, and the 1-based line when the problem is on one (none: the file as a whole).
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
