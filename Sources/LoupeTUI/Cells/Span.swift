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

extension Array where Element == Span {
    /// The spans cut to `columns`, the last kept span ending in `…` when anything was cut.
    package func truncated(toColumns columns: Int) -> [Span] {
        guard width > columns else { return self }
        var result: [Span] = []
        var used = 0
        for span in self {
            let spanWidth = span.width
            if used + spanWidth < columns {
                result.append(span)
                used += spanWidth
                continue
            }
            let room = columns - used
            if room > 0 { result.append(Span(TextWidth.truncate(span.text, toColumns: room), span.style)) }
            break
        }
        return result
    }
}
