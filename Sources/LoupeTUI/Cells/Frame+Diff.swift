extension Frame {
    /// One cell a backend must write: its position and what goes there.
    package struct Change: Hashable, Sendable {
        /// The column, from 0 at the left edge.
        package var x: Int
        /// The row, from 0 at the top edge.
        package var y: Int
        /// The cell to write; never a continuation cell (a wide glyph's lead cell covers both columns).
        package var cell: Cell

        package init(x: Int, y: Int, cell: Cell) {
            self.x = x
            self.y = y
            self.cell = cell
        }
    }

    /// What turns a screen showing one frame into one showing another.
    package struct Diff: Hashable, Sendable {
        /// True when the screen must be erased before ``changes`` are written: there was no
        /// previous frame, or it had another size, so nothing on screen can be trusted.
        package var isFullRedraw: Bool
        /// The cells to write, in row-major order (top to bottom, left to right).
        package var changes: [Change]

        package init(isFullRedraw: Bool, changes: [Change]) {
            self.isFullRedraw = isFullRedraw
            self.changes = changes
        }
    }

    /// The cells to write so a screen showing `previous` shows this frame.
    ///
    /// A cell is a change when its grapheme, width or style differs from the cell at the same
    /// position in `previous`. Continuation cells are never changes: a terminal draws a wide
    /// glyph from its lead cell, which differs whenever the glyph does. With no `previous`, or one
    /// of another size, every cell but continuations is a change and ``Diff/isFullRedraw`` is set.
    /// O(width × height); allocates only the array of changes.
    package func diff(from previous: Frame?) -> Diff {
        let reference = previous.flatMap { $0.size == size ? $0 : nil }
        var changes: [Change] = []
        if reference == nil { changes.reserveCapacity(cells.count) }
        for y in 0..<height {
            let rowStart = y * width
            for x in 0..<width {
                let cell = cells[rowStart + x]
                if cell.isContinuation { continue }
                if let reference, reference.cells[rowStart + x] == cell { continue }
                changes.append(Change(x: x, y: y, cell: cell))
            }
        }
        return Diff(isFullRedraw: reference == nil, changes: changes)
    }
}
