/// A matrix drawn as colour: two matrix rows per cell with the half block `▀` (upper row in
/// the foreground, lower row in the background). A monochrome theme gets one row per cell in
/// shade glyphs `·░▒▓█` instead.
package struct Heatmap: Sendable {
    package var values: [[Double]]
    package var range: ClosedRange<Double>

    /// `range` maps values to the ramp; defaults to the matrix's own minimum and maximum.
    package init(values: [[Double]], range: ClosedRange<Double>? = nil) {
        self.values = values
        let finite = values.joined().filter(\.isFinite)
        self.range = range ?? ((finite.min() ?? 0)...(max(finite.max() ?? 1, (finite.min() ?? 0) + 1e-12)))
    }

    /// Rows of cells the heatmap needs for its matrix under `theme`.
    package func cellRows(theme: Theme) -> Int {
        theme.isMonochrome ? values.count : (values.count + 1) / 2
    }

    package func fraction(_ value: Double) -> Double {
        let span = range.upperBound - range.lowerBound
        return span > 0 ? (value - range.lowerBound) / span : 0
    }

    package func render(into frame: inout Frame, origin: Point, theme: Theme) {
        let columns = values.map(\.count).max() ?? 0
        if theme.isMonochrome {
            let shades = ["·", "░", "▒", "▓", "█"]
            for (row, line) in values.enumerated() {
                for column in 0..<columns {
                    let value = column < line.count ? line[column] : .nan
                    let level = value.isFinite ? min(4, Int(fraction(value) * 4.999)) : 0
                    frame.put(shades[level], x: origin.x + column, y: origin.y + row, style: .plain)
                }
            }
            return
        }
        for cellRow in 0..<cellRows(theme: theme) {
            for column in 0..<columns {
                let upper = value(row: cellRow * 2, column: column)
                let lower = value(row: cellRow * 2 + 1, column: column)
                let style = Style(
                    foreground: upper.map { theme.heatColor(fraction($0)) },
                    background: lower.map { theme.heatColor(fraction($0)) }
                )
                frame.put(upper == nil ? " " : "▀", x: origin.x + column, y: origin.y + cellRow, style: style)
            }
        }
    }

    private func value(row: Int, column: Int) -> Double? {
        guard row < values.count, column < values[row].count, values[row][column].isFinite else { return nil }
        return values[row][column]
    }
}
