import ArgumentParser
import LoupeBase

/// Options every command accepts.
package struct GlobalOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp("The workspace file (default: $LOUPE_WORKSPACE, else ./loupe.sqlite).", valueName: "path"))
    package var workspace: String?

    package init() {}
}

/// A command of the Loupe language: it runs with a ``CommandContext`` instead of printing to
/// stdout, so the same command works on the shell, in the TUI, in the REPL and in notebooks.
package protocol LoupeCommand: ParsableCommand {
    var global: GlobalOptions { get }

    /// False for commands that make no sense inside the TUI (`repl`, opening another TUI).
    static var runsInsideTUI: Bool { get }

    func run(in context: CommandContext) throws
}

extension LoupeCommand {
    package static var runsInsideTUI: Bool { true }

    /// Direct `run()` is not used: the dispatcher builds a context and calls `run(in:)`.
    package func run() throws {
        throw CleanExit.message("internal: \(Self.self) must run through the Loupe dispatcher")
    }
}

/// A failure the command has already explained in its output: the exit code is 1 and the
/// message is the short summary.
package struct CommandFailure: UserFacingError, Sendable {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}
