/// Places text labels on a chart so that none covers another, and so that each covers as few
/// of the chart's marks (a roof line, a point) as it can: every label is given its candidate
/// positions, best first, and takes the first free one, else the least covering.
package struct LabelPlacer: Sendable {
    package let area: Rect
    private var taken: [Rect] = []
    private let marked: @Sendable (Int, Int) -> Bool

    /// - Parameter marked: true for a cell (absolute x, y) that holds a mark a label should not hide.
    package init(area: Rect, marked: @escaping @Sendable (Int, Int) -> Bool = { _, _ in false }) {
        self.area = area
        self.marked = marked
    }

    /// Keeps `rect` free of labels (a point, a legend) without drawing anything.
    package mutating func reserve(_ rect: Rect) { taken.append(rect) }

    /// The first of `candidates` (top-left corners) where a `width`-column label fits inside the
    /// area over no label, preferring one that hides no mark; nil when every candidate is off
    /// the area or over a label. The place is then taken.
    package mutating func place(width: Int, candidates: [Point]) -> Point? {
        var best: (point: Point, covered: Int)?
        for point in candidates {
            let rect = Rect(x: point.x, y: point.y, width: width, height: 1)
            guard rect.x >= area.x, rect.maxX <= area.maxX, rect.y >= area.y, rect.y < area.maxY,
                !taken.contains(where: { !$0.intersection(rect).isEmpty })
            else { continue }
            let covered = (rect.x..<rect.maxX).filter { marked($0, rect.y) }.count
            if covered == 0 {
                best = (point, 0)
                break
            }
            if best.map({ covered < $0.covered }) ?? true { best = (point, covered) }
        }
        guard let best else { return nil }
        taken.append(Rect(x: best.point.x, y: best.point.y, width: width, height: 1))
        return best.point
    }
}
