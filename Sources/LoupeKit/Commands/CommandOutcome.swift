import LoupeTUI

/// Something a command asks of the TUI when it runs inside it (ignored on the shell).
package enum UIRequest: Hashable, Sendable {
    /// Switch to this theme now (the command already stored the choice in the workspace).
    case applyTheme(Theme)
    /// Leave the TUI.
    case quit
}

/// What running one command line produced.
package struct CommandOutcome: Hashable, Sendable {
    /// What the command printed.
    package var output: String
    /// The error message when the command failed, nil when it succeeded.
    package var error: String?
    /// Requests for the TUI.
    package var requests: [UIRequest]

    package init(output: String = "", error: String? = nil, requests: [UIRequest] = []) {
        self.output = output
        self.error = error
        self.requests = requests
    }

    package var succeeded: Bool { error == nil }
}

/// Runs command lines of the Loupe command language. The TUI, the REPL and notebooks hold one;
/// LoupeCommands provides it, so these callers need not know ArgumentParser.
package protocol CommandService: Sendable {
    /// Every command, for completion and the palette.
    var catalog: CommandCatalog { get }

    /// Parses and runs `line` (shell-like quoting), reporting progress to `reporter`.
    ///
    /// - Parameter columns: the width help text should be wrapped to.
    func execute(_ line: String, reporter: JobReporter, columns: Int) -> CommandOutcome
}
