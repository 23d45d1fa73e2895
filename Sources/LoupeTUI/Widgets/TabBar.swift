/// The row of panel tabs: `1 Traces  2 Retrieval …`, the active one highlighted.
package struct TabBar: Sendable {
    package var titles: [String]
    package var selected: Int

    package init(titles: [String], selected: Int) {
        self.titles = titles
        self.selected = selected
    }

    /// The rectangle each tab occupies in `area`, for drawing and for mouse hit-testing. Tabs
    /// that do not fit get an empty rectangle.
    package func tabRects(in area: Rect) -> [Rect] {
        var x = area.x + 1
        var rects: [Rect] = []
        for (index, title) in titles.enumerated() {
            let width = TextWidth.of(label(index, title))
            if x + width > area.maxX {
                rects.append(Rect(x: x, y: area.y, width: 0, height: 0))
                continue
            }
            rects.append(Rect(x: x, y: area.y, width: width, height: 1))
            x += width + 1
        }
        return rects
    }

    package func render(into frame: inout Frame, area: Rect, theme: Theme) {
        for (index, rect) in tabRects(in: area).enumerated() where !rect.isEmpty {
            let active = index == selected
            let text = label(index, titles[index])
            frame.draw(text, at: Point(x: rect.x, y: rect.y), style: theme.tab(active: active))
            if !active, index < 9 {
                frame.draw(String(index + 1), at: Point(x: rect.x + 1, y: rect.y), style: theme.key)
            }
        }
    }

    private func label(_ index: Int, _ title: String) -> String {
        index < 9 ? " \(index + 1) \(title) " : " \(title) "
    }
}
