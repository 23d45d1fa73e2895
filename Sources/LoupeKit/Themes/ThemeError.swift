import LoupeBase

/// A theme file that could not be used, with the place to fix it.
package struct ThemeError: UserFacingError, Hashable, Sendable, CustomStringConvertible {
    package var file: String
    /// 1-based line, or nil when the problem is the file as a whole.
    package var line: Int?
    package var message: String

    package init(file: String, line: Int?, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    package var description: String {
        line.map { "\(file):\($0): \(message)" } ?? "\(file): \(message)"
    }
}
