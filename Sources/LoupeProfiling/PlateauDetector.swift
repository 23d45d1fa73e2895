import Foundation

/// Finds the plateaus of a bandwidth-versus-working-set curve, so the memory ceilings come from
/// the measurement rather than a table.
package enum PlateauDetector {
    /// Groups consecutive samples (by size) whose bandwidth stays within `tolerance` of the
    /// group's median; groups of at least `minimumSamples` are plateaus, and neighbouring
    /// plateaus within `tolerance` of each other are merged. Points on a transition between two
    /// levels form short groups and are dropped.
    package static func plateaus(
        _ samples: [BandwidthSample], tolerance: Double = 0.15, minimumSamples: Int = 2
    ) -> [BandwidthPlateau] {
        let sorted = samples.sorted { $0.workingSetBytes < $1.workingSetBytes }
        var groups: [[BandwidthSample]] = []
        for sample in sorted {
            if let current = groups.last,
                abs(sample.gigabytesPerSecond - median(current)) <= tolerance * median(current)
            {
                groups[groups.count - 1].append(sample)
            } else {
                groups.append([sample])
            }
        }
        var kept = groups.filter { $0.count >= minimumSamples }
        var index = 1
        while index < kept.count {
            if abs(median(kept[index]) - median(kept[index - 1])) <= tolerance * median(kept[index - 1]) {
                kept[index - 1] += kept.remove(at: index)
            } else {
                index += 1
            }
        }
        return kept.enumerated().map { position, group in
            BandwidthPlateau(
                level: name(position: position, count: kept.count),
                gigabytesPerSecond: median(group), smallestBytes: group.first!.workingSetBytes,
                largestBytes: group.last!.workingSetBytes, samples: group.count)
        }
    }

    private static func name(position: Int, count: Int) -> String {
        if position == count - 1 && count > 1 { return "DRAM" }
        return "L\(position + 1)"
    }

    static func median(_ group: [BandwidthSample]) -> Double {
        let values = group.map(\.gigabytesPerSecond).sorted()
        return values.count % 2 == 1
            ? values[values.count / 2] : (values[values.count / 2 - 1] + values[values.count / 2]) / 2
    }
}
