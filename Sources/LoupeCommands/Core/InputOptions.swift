import ArgumentParser
import LoupeBase

/// `--max-input-mb`, for commands that read a user's files: the most Loupe reads of one input
/// (`InputFile.limitBytes`). Every reader of a user's file honours `LOUPE_MAX_INPUT_MB` as well.
package struct InputOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The largest input file to read, in MiB (default: $\(InputFile.limitVariable), else 1024).",
            valueName: "MB"))
    package var maxInputMB: Int?

    package init() {}

    package mutating func validate() throws {
        guard let maxInputMB else { return }
        guard maxInputMB > 0 else { throw ValidationError("--max-input-mb must be at least 1 (MiB)") }
        // Parsed once per command, before it runs: the limit holds for the rest of the process.
        InputFile.setLimit(megabytes: maxInputMB)
    }
}
