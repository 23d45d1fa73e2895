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

    /// The display rows at `width`: each line wrapped to it (or cut, when `wrap` is off).
    package func displayRows(width: Int) -> [[Span]] {
        guard wrap, width > 0 else { return lines }
        var rows: [[Span]] = []
        for line in lines {
            if line.width <= width {
                rows.append(line)
                continue
            }
            var current: [Span] = []
            var used = 0
            for span in line {
                var piece = ""
                for character in span.text {
                    let w = TextWidth.of(character)
                    if used + w > width {
                        if !piece.isEmpty { current.append(Span(piece, span.style)) }
                        rows.append(current)
                        current = []
                        piece = ""
                        used = 0
                    }
                    piece.append(character)
                    used += w
                }
                if !piece.isEmpty { current.append(Span(piece, span.style)) }
            }
            rows.append(current)
        }
        return rows
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
            frame.draw(rows[clamped + row], at: Point(x: area.x, y: area.y + row), clip: Rect(x: area.x, y: area.y, width: textWidth, height: area.height))
        }
        Scrollbar.render(into: &frame, x: area.maxX - 1, rows: area, offset: clamped, count: rows.count, theme: theme)
        return (clamped, rows.count)
    }
}
