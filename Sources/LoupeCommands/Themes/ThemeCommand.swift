import ArgumentParser
import LoupeKit
import LoupeStore
import LoupeTUI

/// `loupe theme [NAME]`: list themes, or switch to one and remember it in the workspace.
struct ThemeCommand: LoupeCommand {
    static let configuration = CommandConfiguration(
        commandName: "theme",
        abstract: "List the colour themes, or switch to one (remembered in the workspace).",
        discussion: "Themes are TOML files in themes/ (and ~/.config/loupe/themes); NO_COLOR forces monochrome."
    )

    /// The workspace setting that holds the chosen theme.
    static let settingKey = ThemeLoader.settingKey

    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("The theme to switch to.", valueName: "name")) var name: String?

    func run(in context: CommandContext) throws {
        let loader = context.session.themes
        guard let name else {
            // Listing needs no workspace: without one that reads, no theme is marked current.
            let current = (try? context.settings(access: .read).setting(ThemeCommand.settingKey)) ?? nil
            for theme in loader.availableThemes() {
                let marker = theme == (current ?? "default") ? "  (current)" : ""
                context.print(theme + marker)
            }
            return
        }
        let theme = try loader.load(name)
        try context.settings().setSetting(ThemeCommand.settingKey, to: name)
        context.request(.applyTheme(theme))
        context.print("theme: \(name)" + (theme.isMonochrome ? " (monochrome)" : ""))
    }
}
