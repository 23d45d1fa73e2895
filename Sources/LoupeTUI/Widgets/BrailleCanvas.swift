/// A plotting surface of braille dots: each cell holds 2 × 4 dots, so a `w × h` cell canvas has
/// `2w × 4h` dots. Dot (0, 0) is the top-left corner.
package struct BrailleCanvas: Sendable {
    package let columns: Int
    package let rows: Int
    private var bits: [UInt8]
    private var styles: [Style?]

    package init(columns: Int, rows: Int) {
        self.columns = max(0, columns)
        self.rows = max(0, rows)
        bits = Array(repeating: 0, count: self.columns * self.rows)
        styles = Array(repeating: nil, count: self.columns * self.rows)
    }

    /// True when the cell at (`column`, `row`) has a dot: what a label placed over it would hide.
    package func hasDots(column: Int, row: Int) -> Bool {
        column >= 0 && row >= 0 && column < columns && row < rows && bits[row * columns + column] != 0
    }

    package var dotWidth: Int { columns * 2 }
    package var dotHeight: Int { rows * 4 }

    // Braille dot numbering: bit for (column, row) inside a cell.
    private static let dotBits: [[UInt8]] = [[0x01, 0x08], [0x02, 0x10], [0x04, 0x20], [0x40, 0x80]]

    /// Sets the dot at (`x`, `y`); dots outside the canvas are ignored. The cell takes `style`.
    package mutating func set(x: Int, y: Int, style: Style) {
        guard x >= 0, y >= 0, x < dotWidth, y < dotHeight else { return }
        let index = (y / 4) * columns + x / 2
        bits[index] |= BrailleCanvas.dotBits[y % 4][x % 2]
        styles[index] = style
    }

    /// Draws a straight line of dots between two dot positions (Bresenham).
    package mutating func line(from start: Point, to end: Point, style: Style) {
        var x = start.x
        var y = start.y
        let dx = abs(end.x - start.x)
        let dy = -abs(end.y - start.y)
        let stepX = start.x < end.x ? 1 : -1
        let stepY = start.y < end.y ? 1 : -1
        var error = dx + dy
        while true {
            set(x: x, y: y, style: style)
            if x == end.x && y == end.y { break }
            let doubled = 2 * error
            if doubled >= dy {
                error += dy
                x += stepX
            }
            if doubled <= dx {
                error += dx
                y += stepY
            }
        }
    }

    /// Paints the non-empty cells into `frame` with their top-left corner at `origin`.
    package func render(into frame: inout Frame, origin: Point) {
        for row in 0..<rows {
            for column in 0..<columns {
                let index = row * columns + column
                guard bits[index] != 0, let scalar = Unicode.Scalar(0x2800 + UInt32(bits[index])) else { continue }
                frame.put(
                    String(Character(scalar)), x: origin.x + column, y: origin.y + row, style: styles[index] ?? .plain)
            }
        }
    }
}
