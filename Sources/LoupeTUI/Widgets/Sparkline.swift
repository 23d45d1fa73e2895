/// A one-row chart of a series in block elements `▁▂▃▄▅▆▇█`.
package struct Sparkline: Sendable {
    static let levels: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]
    static let partialBlocks: [Character] = [" ", "▏", "▎", "▍", "▌", "▋", "▊", "▉"]

    package var values: [Double]

    package init(values: [Double]) { self.values = values }

    /// The glyphs for the last `width` values, scaled between their minimum and maximum.
    package func glyphs(width: Int) -> String {
        let shown = values.suffix(max(0, width)).filter(\.isFinite)
        guard let low = shown.min(), let high = shown.max() else { return "" }
        let span = high - low
        return String(
            shown.map { value -> Character in
                let level = span > 0 ? Int(((value - low) / span * 7).rounded()) : 3
                return Sparkline.levels[min(7, max(0, level))]
            })
    }

    package func render(into frame: inout Frame, area: Rect, style: Style) {
        frame.draw(glyphs(width: area.width), at: Point(x: area.x, y: area.y), style: style, clip: area)
    }
}
