/// A one-column scrollbar: a dim track and a thumb sized to the visible share.
package enum Scrollbar {
    package static func render(into frame: inout Frame, x: Int, rows area: Rect, offset: Int, count: Int, theme: Theme)
    {
        guard count > area.height, area.height > 0 else { return }
        let thumbHeight = max(1, area.height * area.height / count)
        let maxOffset = max(1, count - area.height)
        let thumbTop = (area.height - thumbHeight) * min(offset, maxOffset) / maxOffset
        for row in 0..<area.height {
            let inThumb = row >= thumbTop && row < thumbTop + thumbHeight
            frame.draw(inThumb ? "┃" : "│", at: Point(x: x, y: area.y + row), style: inThumb ? theme.accent : theme.dim)
        }
    }
}
