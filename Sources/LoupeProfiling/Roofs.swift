/// A machine's roofs: a compute peak and memory levels with the working-set sizes each covers.
/// Answers where a kernel should sit: its attainable rate min(peak, bandwidth × FLOP/byte) at
/// the level its data lives in, and whether memory or compute bounds it there.
package struct Roofs: Hashable, Sendable {
    /// GFLOP/s.
    package var peak: Double
    /// Memory levels, fastest (smallest) first.
    package var levels: [BandwidthPlateau]

    package init(peak: Double, levels: [BandwidthPlateau]) {
        self.peak = peak
        self.levels = levels.sorted { $0.smallestBytes < $1.smallestBytes }
    }

    /// The level that holds a working set of `bytes`: the first whose plateau reaches that
    /// size; one that falls between two plateaus goes to the larger (slower) level, and one past
    /// every plateau to the last (DRAM).
    package func level(forWorkingSet bytes: Int) -> BandwidthPlateau? {
        levels.first { $0.largestBytes >= bytes } ?? levels.last
    }

    /// min(peak, bandwidth × intensity).
    package func attainable(flopsPerByte: Double, at level: BandwidthPlateau) -> Double {
        min(peak, level.gigabytesPerSecond * flopsPerByte)
    }

    /// The intensity where `level`'s diagonal meets the peak.
    package func ridge(_ level: BandwidthPlateau) -> Double { peak / level.gigabytesPerSecond }

    /// `memory` left of the level's ridge point, `compute` right of it.
    package func bound(flopsPerByte: Double, at level: BandwidthPlateau) -> String {
        flopsPerByte < ridge(level) ? "memory" : "compute"
    }
}
