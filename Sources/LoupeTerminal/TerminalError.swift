import LoupeBase

/// Why the terminal could not be set up, in words a user can act on.
package enum TerminalError: UserFacingError, Hashable, Sendable, CustomStringConvertible {
    case notATerminal
    case notUTF8(codeset: String)
    case unknownTerminal(term: String)

    package var description: String {
        switch self {
        case .notATerminal:
            return "loupe's TUI needs a terminal: standard input and output are not both a TTY. "
                + "Use a subcommand (loupe --help) for scripts."
        case .notUTF8(let codeset):
            return "loupe needs a UTF-8 locale, but the current one uses \(codeset). "
                + "Run it with LANG=C.UTF-8 (or another UTF-8 locale)."
        case .unknownTerminal(let term):
            let shown = term.isEmpty ? "(TERM is not set)" : "'\(term)'"
            return "unknown terminal type \(shown): its terminfo entry is missing. "
                + "Try TERM=xterm-256color, or install the ncurses-term package."
        }
    }
}
