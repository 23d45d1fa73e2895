/// A run of text in one style; a display line is an array of spans.
package struct Span: Hashable, Sendable {
    package var text: String
    package var style: Style

    package init(_ text: String, _ style: Style = .plain) {
        self.text = text
        self.style = style
    }

    /// Columns the span takes once drawn.
    package var width: Int { TextWidth.of(text) }
}

extension Array where Element == Span {
    /// Columns the spans take once drawn.
    package var width: Int { reduce(0) { $0 + $1.width } }

    /// The spans' text without styles.
    package var plainText: String { map(\.text).joined() }
}
