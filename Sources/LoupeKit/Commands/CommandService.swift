/// Runs command lines of the Loupe command language. The TUI, the REPL and notebooks hold one;
/// LoupeCommands provides it, so these callers need not know ArgumentParser.
package protocol CommandService: Sendable {
    /// Every command, for completion and the palette.
    var catalog: CommandCatalog { get }

    /// Parses and runs `line` (shell-like quoting), reporting progress to `reporter`.
    ///
    /// - Parameter columns: the width help text should be wrapped to.
    func execute(_ line: String, reporter: JobReporter, columns: Int) -> CommandOutcome

    /// ``execute(_:reporter:columns:)`` in `place`: a scratch workspace, paths read from a directory.
    func execute(_ line: String, reporter: JobReporter, columns: Int, place: CommandPlace) -> CommandOutcome
}
