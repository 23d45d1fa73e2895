/// A rectangle of cells. Empty when either side is zero or negative.
package struct Rect: Hashable, Sendable {
    package var x: Int
    package var y: Int
    package var width: Int
    package var height: Int

    package init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = max(0, width)
        self.height = max(0, height)
    }

    package init(size: Size) { self.init(x: 0, y: 0, width: size.width, height: size.height) }

    package var isEmpty: Bool { width <= 0 || height <= 0 }
    package var maxX: Int { x + width }
    package var maxY: Int { y + height }

    package func contains(_ point: Point) -> Bool {
        point.x >= x && point.x < maxX && point.y >= y && point.y < maxY
    }

    /// The rectangle shrunk by `dx` columns on the left and right and `dy` rows top and bottom.
    package func inset(dx: Int, dy: Int) -> Rect {
        Rect(x: x + dx, y: y + dy, width: width - 2 * dx, height: height - 2 * dy)
    }

    /// The part of this rectangle that is also in `other`.
    package func intersection(_ other: Rect) -> Rect {
        let left = max(x, other.x)
        let top = max(y, other.y)
        return Rect(x: left, y: top, width: min(maxX, other.maxX) - left, height: min(maxY, other.maxY) - top)
    }

    /// Row `index` of this rectangle as a one-row rectangle.
    package func row(_ index: Int) -> Rect { Rect(x: x, y: y + index, width: width, height: 1) }

    /// A rectangle of at most `size`, centred in this one.
    package func centered(width: Int, height: Int) -> Rect {
        let w = min(width, self.width)
        let h = min(height, self.height)
        return Rect(x: x + (self.width - w) / 2, y: y + (self.height - h) / 2, width: w, height: h)
    }
}
