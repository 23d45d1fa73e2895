import ArgumentParser
import LoupeKit

/// `loupe docs keybindings`: the key reference, generated from the keymaps the TUI uses.
struct DocsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "docs",
        abstract: "Print reference documents generated from the code.",
        subcommands: [Keybindings.self]
    )

    struct Keybindings: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print docs/keybindings.md: every key of every panel, from the keymaps.")
        @OptionGroup var global: GlobalOptions

        func run(in context: CommandContext) throws {
            guard let host = context.session.host else { throw NoTUIError() }
            context.output.write(host.keybindingsMarkdown())
        }
    }
}
