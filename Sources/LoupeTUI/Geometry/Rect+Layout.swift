extension Rect {
    /// Splits the rectangle into adjacent slots along `axis`.
    ///
    /// Fixed slots (`length`, `percentage`) are served first in order; `fill` slots share the
    /// rest by weight, the last fill slot taking the rounding remainder. Slots never overlap and
    /// never leave the rectangle.
    package func split(_ axis: Axis, _ constraints: [Constraint]) -> [Rect] {
        let total = axis == .vertical ? height : width
        var sizes = [Int](repeating: 0, count: constraints.count)
        var remaining = total
        for (index, constraint) in constraints.enumerated() {
            switch constraint {
            case .length(let cells):
                sizes[index] = min(max(0, cells), remaining)
            case .percentage(let percent):
                sizes[index] = min(total * max(0, percent) / 100, remaining)
            case .fill:
                continue
            }
            remaining -= sizes[index]
        }
        let weights = constraints.map { constraint -> Int in
            if case .fill(let weight) = constraint { return max(1, weight) }
            return 0
        }
        let weightSum = weights.reduce(0, +)
        if weightSum > 0 {
            let share = remaining
            var given = 0
            let lastFill = weights.lastIndex(where: { $0 > 0 }) ?? 0
            for index in weights.indices where weights[index] > 0 {
                sizes[index] = index == lastFill ? share - given : share * weights[index] / weightSum
                given += sizes[index]
            }
        }
        var rects: [Rect] = []
        var offset = 0
        for size in sizes {
            switch axis {
            case .vertical: rects.append(Rect(x: x, y: y + offset, width: width, height: size))
            case .horizontal: rects.append(Rect(x: x + offset, y: y, width: size, height: height))
            }
            offset += size
        }
        return rects
    }
}
