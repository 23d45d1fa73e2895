import LoupeApp
import LoupeKit
import LoupeTUI

/// `docs/keybindings.md`, generated from the keymaps the TUI uses (a test fails when the
/// committed file is stale).
enum KeybindingsDocument {
    static func markdown() -> String {
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
