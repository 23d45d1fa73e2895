import LoupeBase

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
            // A span that exactly fills the room still has text after it: it gives up its last
            // column to the ellipsis.
            let text =
                spanWidth == room
                ? TextWidth.truncate(span.text, toColumns: room - 1, ellipsis: "") + "…"
                : TextWidth.truncate(span.text, toColumns: room)
            if room > 0 { result.append(Span(text, span.style)) }
            break
        }
        return result
    }
}

extension Array where Element == Span {
    /// The spans with every case-insensitive occurrence of `needle` restyled as `style` (a
    /// search's matches in text already styled), split where the matches begin and end.
    package func highlighting(_ needle: String, as style: Style) -> [Span] {
        guard !needle.isEmpty else { return self }
        var result: [Span] = []
        for span in self {
            let characters = [Character](span.text)
            let matches = TextSearch.caseInsensitiveMatches(of: needle, in: characters)
            guard !matches.isEmpty else {
                result.append(span)
                continue
            }
            var start = 0
            for match in matches {
                if match.lowerBound > start {
                    result.append(Span(String(characters[start..<match.lowerBound]), span.style))
                }
                result.append(Span(String(characters[match]), style))
                start = match.upperBound
            }
            if start < characters.count { result.append(Span(String(characters[start...]), span.style)) }
        }
        return result
    }
}
