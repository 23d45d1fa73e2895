extension Theme {
    private func style(_ foreground: ThemeRole?, _ background: ThemeRole? = nil, _ attributes: TextAttributes = [])
        -> Style
    {
        Style(
            foreground: foreground.flatMap(color),
            background: background.flatMap(color),
            attributes: attributes
        )
    }

    /// The screen's base: body text on the background.
    package var base: Style { style(.text, .background) }
    /// Ordinary text (background left as drawn).
    package var text: Style { style(.text) }
    /// Secondary text: hints, units, timestamps.
    package var dim: Style { isMonochrome ? Style(attributes: .dim) : style(.textDim) }
    /// Text that should catch the eye: numbers, names, links.
    package var accent: Style { style(.textAccent) }
    /// Titles and headings.
    package var title: Style { style(.textTitle, nil, .bold) }
    /// Key names in the footer and help.
    package var key: Style { style(.key, nil, .bold) }
    /// Search and fuzzy-match hits inside text.
    package var match: Style { isMonochrome ? Style(attributes: [.bold, .underline]) : style(.match, nil, .bold) }

    /// A pane border; the focused pane's border stands out.
    package func border(focused: Bool) -> Style {
        if isMonochrome { return Style(attributes: focused ? .bold : .dim) }
        return focused ? style(.borderFocused, nil, .bold) : style(.border)
    }

    /// A tab title in the tab bar.
    package func tab(active: Bool) -> Style {
        if isMonochrome { return Style(attributes: active ? [.reverse, .bold] : []) }
        return active ? style(.tabActiveForeground, .tabActiveBackground, .bold) : style(.tabInactive)
    }

    /// The selected row of a list or table.
    package var selection: Style {
        isMonochrome ? Style(attributes: .reverse) : style(.selectionForeground, .selectionBackground)
    }

    /// The status bar's and tab bar's base style. Plain when monochrome: reverse video is kept
    /// for what is selected (the active tab, the selected row).
    package var statusBar: Style {
        isMonochrome ? Style() : style(.statusForeground, .statusBackground)
    }

    /// Text that reports an outcome.
    package func status(_ level: StatusLevel) -> Style {
        if isMonochrome { return Style(attributes: level == .error ? [.bold] : []) }
        switch level {
        case .ok: return style(.statusOK)
        case .warn: return style(.statusWarn)
        case .error: return style(.statusError, nil, .bold)
        case .info: return style(.statusInfo)
        }
    }

    /// A text input (the `:` line, the palette's query).
    package var input: Style { style(.inputForeground, .inputBackground) }

    /// The body of an overlay (help, palette, dialogs).
    package var overlay: Style { style(.text, .overlayBackground) }
}

/// How good or bad a reported outcome is.
package enum StatusLevel: Hashable, Sendable {
    case ok
    case warn
    case error
    case info
}
