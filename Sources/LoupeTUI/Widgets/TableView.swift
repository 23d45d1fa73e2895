import LoupeBase

/// A table with a header row, a selected row and a sort indicator (`▲`/`▼`) on the sorted column.
package struct TableView: Sendable {
    package var columns: [TableColumn]
    package var rows: [[String]]
    package var sort: TableSort?
    package var focused: Bool

    package init(columns: [TableColumn], rows: [[String]], sort: TableSort? = nil, focused: Bool = true) {
        self.columns = columns
        self.rows = rows
        self.sort = sort
        self.focused = focused
    }

    /// The rectangle of each column inside `area`, one column of space between neighbours.
    package func columnRects(in area: Rect) -> [Rect] {
        let gaps = max(0, columns.count - 1)
        let inner = Rect(x: area.x, y: area.y, width: area.width - gaps, height: area.height)
        var rects = inner.split(.horizontal, columns.map(\.width))
        for index in rects.indices { rects[index].x += index }
        return rects
    }

    package func render(into frame: inout Frame, area: Rect, state: inout ListState, theme: Theme) {
        guard area.height >= 1 else { return }
        // One column for the selection marker and, when the rows overflow, one for the scrollbar.
        let scrollbar = rows.count > area.height - 1 ? 1 : 0
        let rects = columnRects(
            in: Rect(x: area.x + 1, y: area.y, width: area.width - 1 - scrollbar, height: area.height))
        for (index, column) in columns.enumerated() {
            var title = column.title
            if let sort, sort.column == index { title += sort.ascending ? " ▲" : " ▼" }
            let rect = rects[index]
            frame.draw(
                TextWidth.fit(title, toColumns: rect.width, alignment: column.alignment),
                at: Point(x: rect.x, y: area.y), style: theme.title)
        }
        let body = Rect(x: area.x, y: area.y + 1, width: area.width, height: area.height - 1)
        let lines = rows.map { row -> [Span] in
            var spans: [Span] = []
            for (index, column) in columns.enumerated() {
                let width = rects[index].width
                spans.append(
                    Span(
                        TextWidth.fit(
                            index < row.count ? row[index] : "", toColumns: width, alignment: column.alignment),
                        theme.text))
                if index < columns.count - 1 { spans.append(Span(" ")) }
            }
            return spans
        }
        ListView(items: lines, focused: focused).render(into: &frame, area: body, state: &state, theme: theme)
    }
}
