import ArgumentParser
import LoupeBase

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
