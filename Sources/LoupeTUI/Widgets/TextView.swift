import LoupeBase

/// Scrollable multi-line text, wrapped at the viewport width when `wrap` is on.
package struct TextView: Sendable {
    package var lines: [[Span]]
    package var wrap: Bool

    package init(lines: [[Span]], wrap: Bool = true) {
        self.lines = lines
        self.wrap = wrap
    }

    /// Plain text as lines in one style (split on newlines, sanitised, tabs expanded).
    package init(text: String, style: Style, wrap: Bool = true) {
        self.init(lines: UntrustedText.lines(text).map { [Span($0, style)] }, wrap: wrap)
    }

    /// The display rows at `width`: each line word-wrapped to it (a word longer than the width
    /// is cut), or cut at the width when `wrap` is off.
    package func displayRows(width: Int) -> [[Span]] {
        guard wrap, width > 0 else { return lines }
        var rows: [[Span]] = []
        for line in lines {
            if line.width <= width {
                rows.append(line)
                continue
            }
            let glyphs = line.flatMap { span in span.text.map { (character: $0, style: span.style) } }
            var start = 0
            while start < glyphs.count {
                var used = 0
                var end = start
                var lastBreak: Int?
                while end < glyphs.count {
                    let glyphWidth = TextWidth.of(glyphs[end].character)
                    if used + glyphWidth > width { break }
                    used += glyphWidth
                    if glyphs[end].character == " " { lastBreak = end + 1 }
                    end += 1
                }
                if end < glyphs.count, let lastBreak, lastBreak > start { end = lastBreak }
                if end == start { end += 1 }
                rows.append(TextView.spans(glyphs[start..<end]))
                start = end
            }
        }
        return rows
    }

    /// Runs of same-styled glyphs back to spans.
    private static func spans(_ glyphs: ArraySlice<(character: Character, style: Style)>) -> [Span] {
        var spans: [Span] = []
        for glyph in glyphs {
            if let last = spans.last, last.style == glyph.style {
                spans[spans.count - 1].text.append(glyph.character)
            } else {
                spans.append(Span(String(glyph.character), glyph.style))
            }
        }
        return spans
    }

    /// Draws the rows from `offset` (clamped so the last page stays full); returns the clamped
    /// offset and the total number of display rows.
    @discardableResult
    package func render(into frame: inout Frame, area: Rect, offset: Int, theme: Theme) -> (offset: Int, rows: Int) {
        guard !area.isEmpty else { return (0, 0) }
        let textWidth = area.width - 1
        let rows = displayRows(width: textWidth)
        let clamped = max(0, min(offset, rows.count - area.height))
        for row in 0..<area.height where clamped + row < rows.count {
            frame.draw(
                rows[clamped + row], at: Point(x: area.x, y: area.y + row),
                clip: Rect(x: area.x, y: area.y, width: textWidth, height: area.height))
        }
        Scrollbar.render(into: &frame, x: area.maxX - 1, rows: area, offset: clamped, count: rows.count, theme: theme)
        return (clamped, rows.count)
    }
}
