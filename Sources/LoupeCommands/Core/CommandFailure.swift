import ArgumentParser
import LoupeBase

/// A failure the command has already explained in its output: the exit code is 1 and the
/// message is the short summary.
package struct CommandFailure: UserFacingError, Sendable {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}
