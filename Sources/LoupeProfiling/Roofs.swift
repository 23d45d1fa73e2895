/// A machine's roofs: a compute peak and memory levels with the working-set sizes each covers.
/// Answers where a kernel should sit: its attainable rate min(peak, bandwidth × FLOP/byte) at
/// the level its data lives in, and whether memory or compute bounds it there.
package struct Roofs: Hashable, Sendable {
    /// GFLOP/s of FP32.
    package var peak: Double
    /// Giga-operations a second of int8 multiply-adds (2 a multiply-add), when measured.
    package var int8Peak: Double?
    /// Memory levels, fastest (smallest) first.
    package var levels: [BandwidthPlateau]

    package init(peak: Double, int8Peak: Double? = nil, levels: [BandwidthPlateau]) {
        self.peak = peak
        self.int8Peak = int8Peak
        self.levels = levels.sorted { $0.smallestBytes < $1.smallestBytes }
    }

    /// The compute roof of `precision` (`FP32`, `INT8`); nil when it was not measured.
    package func peak(_ precision: String) -> Double? {
        switch precision {
        case "FP32": peak
        case "INT8": int8Peak
        default: nil
        }
    }

    /// The level that holds a working set of `bytes`: the first whose plateau reaches that
    /// size; one that falls between two plateaus goes to the larger (slower) level, and one past
    /// every plateau to the last (DRAM).
    package func level(forWorkingSet bytes: Int) -> BandwidthPlateau? {
        levels.first { $0.largestBytes >= bytes } ?? levels.last
    }

    /// min(peak, bandwidth × intensity) at `precision`'s peak; nil when it has none.
    package func attainable(flopsPerByte: Double, at level: BandwidthPlateau, precision: String = "FP32") -> Double? {
        peak(precision).map { min($0, level.gigabytesPerSecond * flopsPerByte) }
    }

    /// The intensity where `level`'s diagonal meets `precision`'s peak.
    package func ridge(_ level: BandwidthPlateau, precision: String = "FP32") -> Double? {
        peak(precision).map { $0 / level.gigabytesPerSecond }
    }

    /// `memory` left of the level's ridge point, `compute` right of it.
    package func bound(flopsPerByte: Double, at level: BandwidthPlateau, precision: String = "FP32") -> String? {
        ridge(level, precision: precision).map { flopsPerByte < $0 ? "memory" : "compute" }
    }
}
