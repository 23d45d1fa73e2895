/// A semantic colour slot of a theme. The raw value is the key in a `themes/*.toml` file.
package enum ThemeRole: String, CaseIterable, Hashable, Sendable {
    case background = "background"
    case text = "text"
    case textDim = "text.dim"
    case textAccent = "text.accent"
    case textTitle = "text.title"
    case border = "border"
    case borderFocused = "border.focused"
    case tabActiveForeground = "tab.active.fg"
    case tabActiveBackground = "tab.active.bg"
    case tabInactive = "tab.inactive"
    case selectionForeground = "selection.fg"
    case selectionBackground = "selection.bg"
    case statusBackground = "status.bg"
    case statusForeground = "status.fg"
    case statusOK = "status.ok"
    case statusWarn = "status.warn"
    case statusError = "status.error"
    case statusInfo = "status.info"
    case key = "key"
    case inputForeground = "input.fg"
    case inputBackground = "input.bg"
    case match = "match"
    case overlayBackground = "overlay.bg"
    case rooflineCompute = "roofline.compute"
    case rooflineMemory = "roofline.memory"
    case rooflinePoint = "roofline.point"
    case chartAxis = "chart.axis"
}

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
