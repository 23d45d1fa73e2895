import LoupeTUI

/// The keymaps every panel shares. Panels add their own (see ``Panel/keymap``).
package enum Keymaps {
    package static let global = Keymap(
        "Global",
        [
            KeyBinding([.character("?")], .showHelp, help: "Show this help", footer: "help"),
            KeyBinding(
                [.character(":")], .openCommandLine, help: "Open the command line (any loupe command)",
                footer: "command"),
            KeyBinding(
                [.control("p")], .openPalette, help: "Command palette: fuzzy-find a command or action",
                footer: "palette"),
            KeyBinding([.tab], .nextPanel, help: "Next panel", footer: "panels"),
            KeyBinding([.backTab], .previousPanel, help: "Previous panel"),
        ]
            + (1...9).map { n in
                KeyBinding([.character(Character(String(n)))], .focusPanel(n - 1), help: "Go to panel \(n)")
            }
            + [
                KeyBinding([.character("/")], .startSearch, help: "Search the focused list", footer: "search"),
                KeyBinding([.character("n")], .searchNext, help: "Next search match"),
                KeyBinding([.character("N")], .searchPrevious, help: "Previous search match"),
                KeyBinding(
                    [.character("o")], .toggleOutput, help: "Show or hide the output pane (command results and log)"),
                KeyBinding(
                    [.character("y")], .copySelection,
                    help: "Copy the selection (a step, a hit, an answer, a row) to the clipboard (OSC 52: SSH, tmux)"),
                KeyBinding([.character("z")], .toggleZoom, help: "Zoom the focused pane to the whole screen and back"),
                KeyBinding([.escape], .back, help: "Back: close the open pane, view or search"),
                KeyBinding([.control("l")], .redraw, help: "Redraw the screen"),
                KeyBinding(
                    [.control("o")], .jumpBack,
                    help: "Back to the panel a jump came from (an eval answer's trace or ranking)"),
                KeyBinding([.control("z")], .suspend, help: "Suspend to the shell (fg to come back)"),
                KeyBinding(
                    [.character("q"), .control("c")], .quit, help: "Quit (asks first while a job runs)", footer: "quit"),
            ]
    )

    package static let navigation = Keymap(
        "Navigation",
        [
            KeyBinding([.character("j"), .down], .panel(.down), help: "Move down"),
            KeyBinding([.character("k"), .up], .panel(.up), help: "Move up"),
            KeyBinding([.character("h"), .left], .panel(.left), help: "Move left / previous"),
            KeyBinding([.character("l"), .right], .panel(.right), help: "Move right / next"),
            KeyBinding([.control("d"), .pageDown], .panel(.pageDown), help: "Half a page down"),
            KeyBinding([.control("u"), .pageUp], .panel(.pageUp), help: "Half a page up"),
            KeyBinding([.character("g"), .home], .panel(.top), help: "First item"),
            KeyBinding([.character("G"), .end], .panel(.bottom), help: "Last item"),
            KeyBinding([.enter], .panel(.open), help: "Open or run the selected item", footer: "open"),
        ]
    )

    /// Keys of the `:` line (described here; the line editor implements them).
    package static let commandLine = Keymap(
        "Command line",
        [
            KeyBinding([.enter], .back, help: "Run the command"),
            KeyBinding([.escape], .back, help: "Cancel"),
            KeyBinding([.tab], .back, help: "Complete a command or option name"),
            KeyBinding([.up, .down], .back, help: "History: older / newer entry starting with the typed text"),
            KeyBinding([.control("a"), .control("e")], .back, help: "Start / end of line"),
            KeyBinding([.control("b"), .control("f")], .back, help: "Back / forward one character"),
            KeyBinding([.alt("b"), .alt("f")], .back, help: "Back / forward one word"),
            KeyBinding([.control("k"), .control("u")], .back, help: "Delete to end / to start of line"),
            KeyBinding([.control("w")], .back, help: "Delete the previous word"),
            KeyBinding([.control("y")], .back, help: "Paste the last deleted text"),
        ]
    )

    /// Keys of the command palette.
    package static let palette = Keymap(
        "Palette",
        [
            KeyBinding([.enter], .back, help: "Run the selected entry (commands needing arguments open the : line)"),
            KeyBinding([.up, .down], .back, help: "Move the selection"),
            KeyBinding([.escape], .back, help: "Close"),
        ]
    )
}
