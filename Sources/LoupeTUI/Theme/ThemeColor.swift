/// A theme colour: a fixed RGB value or the terminal's own default colour.
package enum ThemeColor: Hashable, Sendable {
    case terminalDefault
    case rgb(RGB)

    /// Parses `#rrggbb` or `default`.
    package init?(parsing text: String) {
        if text.lowercased() == "default" {
            self = .terminalDefault
        } else if let rgb = RGB(hex: text) {
            self = .rgb(rgb)
        } else {
            return nil
        }
    }

    /// The colour for a ``Style``: nil means the terminal default.
    package var rgb: RGB? {
        if case .rgb(let value) = self { return value }
        return nil
    }
}
