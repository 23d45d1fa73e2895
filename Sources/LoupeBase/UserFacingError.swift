/// An error a user can cause (a bad file, a busy workspace, a missing model): its
/// `description` says what is wrong, where, and what to do, and is shown as it is, on one line
/// after `error: ` on the shell or in the TUI's status bar.
///
/// Errors that are not user-facing (parse errors and help from ArgumentParser, programming
/// errors) go through their own paths; this protocol is how the command runner tells them apart,
/// instead of a hand-kept list of error types.
package protocol UserFacingError: Error, CustomStringConvertible {}

/// Where in a user's file something is: file, and line and column when known (1-based).
package struct SourceLocation: Hashable, Sendable, CustomStringConvertible {
    package var file: String
    package var line: Int?
    package var column: Int?

    package init(file: String, line: Int? = nil, column: Int? = nil) {
        self.file = file
        self.line = line
        self.column = column
    }

    /// `file:line:col`, `file:line` or `file`, the form editors and terminals link.
    package var description: String {
        switch (line, column) {
        case (let line?, let column?): "\(file):\(line):\(column)"
        case (let line?, nil): "\(file):\(line)"
        default: file
        }
    }
}
