import LoupeBase

/// What can go wrong with a workspace file, said so a user knows what to do.
package struct WorkspaceError: UserFacingError, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure.
    package enum Code: Hashable, Sendable {
        /// Another process holds the write lock for longer than the busy timeout.
        case busy
        /// The file was written by a newer Loupe whose schema this binary does not know.
        case schemaTooNew
        /// The file is not SQLite, or is SQLite but not a Loupe workspace.
        case notAWorkspace
        /// The file or its directory cannot be read or written.
        case inaccessible
        /// The database server cannot be reached, or the connection to it was lost.
        case unreachable
        /// SQLite reported something else (corruption, disk full, …).
        case database
    }

    package var code: Code
    package var path: String
    package var message: String

    package init(_ code: Code, path: String, message: String) {
        self.code = code
        self.path = path
        self.message = message
    }

    package var description: String { "\(path): \(message)" }
}
