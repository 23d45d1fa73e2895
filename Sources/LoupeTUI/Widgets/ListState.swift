/// Selection and scroll position of a list or table: which row is selected and which row is at
/// the top of the viewport.
package struct ListState: Hashable, Sendable {
    package var selected: Int
    package var offset: Int

    package init(selected: Int = 0, offset: Int = 0) {
        self.selected = selected
        self.offset = offset
    }

    /// Moves the selection by `delta` rows within `0..<count`.
    package mutating func move(by delta: Int, count: Int) {
        guard count > 0 else {
            selected = 0
            return
        }
        selected = min(count - 1, max(0, selected + delta))
    }

    /// Selects the first (`toEnd == false`) or last row.
    package mutating func jump(toEnd: Bool, count: Int) {
        selected = toEnd ? max(0, count - 1) : 0
    }

    /// Scrolls so the selected row is inside a viewport of `height` rows, and clamps both
    /// indices to `count`.
    package mutating func reveal(height: Int, count: Int) {
        selected = count == 0 ? 0 : min(max(0, selected), count - 1)
        guard height > 0 else { return }
        if selected < offset { offset = selected }
        if selected >= offset + height { offset = selected - height + 1 }
        offset = max(0, min(offset, max(0, count - height)))
    }

    /// The row index at viewport row `row`, if that row shows one.
    package func index(atViewportRow row: Int, count: Int) -> Int? {
        let index = offset + row
        return row >= 0 && index < count ? index : nil
    }
}
