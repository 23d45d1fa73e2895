import LoupeBase

/// A scrolling list of one-line items with a selected row and an optional scrollbar.
package struct ListView: Sendable {
    package var items: [[Span]]
    package var focused: Bool
    package var highlight: String

    /// `highlight`, when not empty, marks its case-insensitive occurrences in the items.
    package init(items: [[Span]], focused: Bool = true, highlight: String = "") {
        self.items = items
        self.focused = focused
        self.highlight = highlight
    }

    package func render(into frame: inout Frame, area: Rect, state: inout ListState, theme: Theme) {
        guard !area.isEmpty else { return }
        state.reveal(height: area.height, count: items.count)
        let scrollbar = items.count > area.height && area.width > 2
        let textWidth = scrollbar ? area.width - 1 : area.width
        for row in 0..<area.height {
            guard let index = state.index(atViewportRow: row, count: items.count) else { break }
            let rowRect = Rect(x: area.x, y: area.y + row, width: textWidth, height: 1)
            let isSelected = index == state.selected
            if isSelected {
                frame.fill(rowRect, style: focused ? theme.selection : theme.selection.adding(.dim))
            }
            var spans = items[index].truncated(toColumns: max(0, textWidth - 1))
            if isSelected {
                spans = spans.map { Span($0.text, $0.style.patched(with: theme.selection)) }
            }
            let marker = isSelected && focused ? "▌" : " "
            frame.draw(marker, at: Point(x: rowRect.x, y: rowRect.y), style: theme.border(focused: true))
            frame.draw(spans, at: Point(x: rowRect.x + 1, y: rowRect.y), clip: rowRect)
            if !highlight.isEmpty { markMatches(in: &frame, row: rowRect, theme: theme) }
        }
        if scrollbar {
            Scrollbar.render(
                into: &frame, x: area.maxX - 1, rows: area, offset: state.offset, count: items.count, theme: theme)
        }
    }

    private func markMatches(in frame: inout Frame, row: Rect, theme: Theme) {
        let characters = Array(frame.rowText(row.y))
        for range in TextSearch.caseInsensitiveMatches(of: highlight, in: characters) {
            let x = row.x + characters[..<range.lowerBound].reduce(0) { $0 + TextWidth.of($1) }
            let width = characters[range].reduce(0) { $0 + TextWidth.of($1) }
            frame.restyle(Rect(x: x, y: row.y, width: width, height: 1).intersection(row), with: theme.match)
        }
    }
}
