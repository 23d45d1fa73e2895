/// A log axis of whole decades, each given the same whole number of cells, so that every tick
/// falls on an exact row or column and equal ratios are equal distances (a roof's slope reads
/// true). With fewer cells than decades, ticks go every `step` decades, one cell apart.
struct DecadeAxis: Hashable, Sendable {
    /// The exponents of the first and the last tick.
    let low: Int
    let high: Int
    /// Decades from one tick to the next.
    let step: Int
    /// Cells from one tick to the next.
    let cellsPerStep: Int

    /// An axis over at least `low...high` in at most `cells` cells. When the cells leave room for
    /// one more step, it goes to the high end (room for the highest roof's label); the cells
    /// left over after that stay unused.
    init(low: Int, high: Int, cells: Int) {
        let span = max(1, high - low)
        let room = max(1, cells - 1)
        let step = (span + room - 1) / room
        let steps = (span + step - 1) / step
        let cellsPerStep = room / steps
        self.step = step
        self.cellsPerStep = cellsPerStep
        self.low = high - steps * step
        self.high = high + min(1, (room - steps * cellsPerStep) / cellsPerStep) * step
    }

    /// The cells the axis takes, its first and last tick included.
    var cells: Int { (high - low) / step * cellsPerStep + 1 }

    /// How far `exponent` (a value's log10) is from the low end, in dots of `dotsPerCell` a cell.
    func dots(_ exponent: Double, dotsPerCell: Int) -> Double {
        (exponent - Double(low)) / Double(step) * Double(cellsPerStep * dotsPerCell)
    }

    /// Each tick's exponent and its cell, counted from the low end.
    var ticks: [(exponent: Int, cell: Int)] {
        stride(from: low, through: high, by: step).map { ($0, ($0 - low) / step * cellsPerStep) }
    }
}
