/// A key press, decoded from whatever the terminal sent.
package enum Key: Hashable, Sendable {
    /// A printable grapheme, typed as is (shift already applied).
    case character(Character)
    /// Control plus a letter, lower case: ctrl+p is `.control("p")`.
    case control(Character)
    /// Alt (meta) plus a printable grapheme.
    case alt(Character)
    case enter
    case tab
    case backTab
    case escape
    case backspace
    case delete
    case up
    case down
    case left
    case right
    case home
    case end
    case pageUp
    case pageDown
    case insert
    case function(Int)

    /// The name people read in help and the footer: `ctrl+p`, `shift+tab`, `↑`, `?`.
    package var displayName: String {
        switch self {
        case .character(" "): return "space"
        case .character(let c): return String(c)
        case .control(let c): return "ctrl+\(c)"
        case .alt(let c): return "alt+\(c)"
        case .enter: return "enter"
        case .tab: return "tab"
        case .backTab: return "shift+tab"
        case .escape: return "esc"
        case .backspace: return "backspace"
        case .delete: return "del"
        case .up: return "↑"
        case .down: return "↓"
        case .left: return "←"
        case .right: return "→"
        case .home: return "home"
        case .end: return "end"
        case .pageUp: return "pgup"
        case .pageDown: return "pgdn"
        case .insert: return "ins"
        case .function(let n): return "F\(n)"
        }
    }
}
