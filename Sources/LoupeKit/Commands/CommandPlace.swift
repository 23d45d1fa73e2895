/// Where a command line runs: on the open workspace or on a scratch one of its own, and the
/// directory its relative paths are read from.
///
/// The Notebooks panel runs a tutorial on a scratch workspace, so that it leaves the user's
/// workspace (its traces, its theme) as it was unless they ask, and reads the notebook's
/// `sample-data/…` from the notebook's repository, wherever the TUI was started.
package struct CommandPlace: Hashable, Sendable {
    package enum Target: Hashable, Sendable {
        /// The workspace the TUI (or REPL) has open.
        case open
        /// A scratch workspace with this name, kept for the process (a notebook's session).
        case scratch(String)
    }

    package var target: Target
    /// Relative paths among the line's arguments that name an existing file or folder under this
    /// directory, or under one of its parents, are read from there.
    package var directory: String?

    package init(target: Target, directory: String? = nil) {
        self.target = target
        self.directory = directory
    }

    /// The open workspace, paths as given.
    package static let open = CommandPlace(target: .open)

    package var isScratch: Bool { target != .open }
}
