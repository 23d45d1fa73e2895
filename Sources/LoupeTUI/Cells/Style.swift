/// How a cell is drawn: foreground and background colours (nil is the terminal's default) and
/// attributes.
package struct Style: Hashable, Sendable {
    package var foreground: RGB?
    package var background: RGB?
    package var attributes: TextAttributes

    package init(foreground: RGB? = nil, background: RGB? = nil, attributes: TextAttributes = []) {
        self.foreground = foreground
        self.background = background
        self.attributes = attributes
    }

    /// The terminal's default colours, no attributes.
    package static let plain = Style()

    /// This style with `other`'s colours where `other` sets them, and both sets of attributes.
    package func patched(with other: Style) -> Style {
        Style(
            foreground: other.foreground ?? foreground,
            background: other.background ?? background,
            attributes: attributes.union(other.attributes)
        )
    }

    /// This style, with `other`'s background when it sets none of its own.
    package func keepingBackground(of other: Style) -> Style {
        background == nil ? Style(foreground: foreground, background: other.background, attributes: attributes) : self
    }

    /// This style with extra attributes.
    package func adding(_ extra: TextAttributes) -> Style {
        var copy = self
        copy.attributes.formUnion(extra)
        return copy
    }
}
