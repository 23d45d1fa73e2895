import LoupeBase

/// A bordered pane with a title on its top edge.
package struct Block: Sendable {
    package var title: String
    package var trailingTitle: String
    package var focused: Bool

    package init(title: String = "", trailingTitle: String = "", focused: Bool = false) {
        self.title = title
        self.trailingTitle = trailingTitle
        self.focused = focused
    }

    /// The area inside the border.
    package static func inner(_ area: Rect) -> Rect { area.inset(dx: 1, dy: 1) }

    /// Draws the border and titles; returns the inner area.
    @discardableResult
    package func render(into frame: inout Frame, area: Rect, theme: Theme) -> Rect {
        guard area.width >= 2, area.height >= 2 else { return Rect(x: area.x, y: area.y, width: 0, height: 0) }
        let style = theme.border(focused: focused)
        let horizontal = String(repeating: "─", count: area.width - 2)
        frame.draw("╭" + horizontal + "╮", at: Point(x: area.x, y: area.y), style: style)
        frame.draw("╰" + horizontal + "╯", at: Point(x: area.x, y: area.maxY - 1), style: style)
        for y in (area.y + 1)..<(area.maxY - 1) {
            frame.draw("│", at: Point(x: area.x, y: y), style: style)
            frame.draw("│", at: Point(x: area.maxX - 1, y: y), style: style)
        }
        let room = area.width - 4
        if !trailingTitle.isEmpty, room > 8 {
            let text = " " + TextWidth.truncate(trailingTitle, toColumns: room / 2) + " "
            frame.draw(text, at: Point(x: area.maxX - 2 - TextWidth.of(text), y: area.y), style: theme.dim)
        }
        if !title.isEmpty, room > 2 {
            let titleStyle = focused ? theme.title.patched(with: theme.border(focused: true)) : theme.title
            let limit = trailingTitle.isEmpty ? room : room - min(room / 2, TextWidth.of(trailingTitle)) - 3
            frame.draw(
                " " + TextWidth.truncate(title, toColumns: max(1, limit)) + " ", at: Point(x: area.x + 1, y: area.y),
                style: titleStyle)
        }
        return Block.inner(area)
    }
}
