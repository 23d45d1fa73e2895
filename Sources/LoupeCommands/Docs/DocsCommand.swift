import ArgumentParser
import LoupeApp
import LoupeKit
import LoupeTUI

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
            context.output.write(DocsCommand.keybindingsMarkdown())
        }
    }

    /// The Markdown of `docs/keybindings.md`.
    static func keybindingsMarkdown() -> String {
        let state = AppState(
            size: Size(width: 80, height: 24), theme: .builtInDefault, panels: AppState.standardPanels(),
            workspaceName: "", catalog: CommandCatalog(entries: []), themeNames: []
        )
        var text = "# Loupe key bindings\n\n"
        text += "Generated from the keymaps by `loupe docs keybindings`; a test fails when this file is stale.\n"
        for keymap in state.keymaps {
            text += "\n## \(keymap.name)\n\n| keys | action |\n| --- | --- |\n"
            for binding in keymap.bindings {
                let keys = binding.keys.map { "`\($0.displayName == "|" ? "\\|" : $0.displayName)`" }.joined(
                    separator: " ")
                text += "| \(keys) | \(binding.help) |\n"
            }
        }
        return text
    }
}
