import LoupeProfiling
import Testing

@Suite struct PlateauDetectorTests {
    /// A synthetic sweep: `levels` of (largest size, GB/s), with one point on each transition.
    private func sweep(_ levels: [(Int, Double)], noise: Double = 0.03) -> [BandwidthSample] {
        var samples: [BandwidthSample] = []
        var size = 16 * 1024
        var index = 0
        var wobble = 1.0
        while index < levels.count {
            let (limit, bandwidth) = levels[index]
            wobble = wobble == 1 ? 1 + noise : 1
            if size <= limit {
                samples.append(BandwidthSample(workingSetBytes: size, gigabytesPerSecond: bandwidth * wobble))
            } else if index + 1 < levels.count {
                // A point between two levels.
                samples.append(
                    BandwidthSample(workingSetBytes: size, gigabytesPerSecond: (bandwidth + levels[index + 1].1) / 2))
                index += 1
            } else {
                break
            }
            size *= 2
        }
        return samples
    }

    @Test func findsFourLevelsAndNamesThemByOrder() {
        let samples = sweep([(64 * 1024, 200), (1 << 20, 90), (64 << 20, 40), (8 << 30, 12)])
        let plateaus = PlateauDetector.plateaus(samples)
        #expect(plateaus.map(\.level) == ["L1", "L2", "L3", "DRAM"])
        #expect(plateaus.count == 4)
        for (plateau, nominal) in zip(plateaus, [200.0, 90, 40, 12]) {
            #expect(
                abs(plateau.gigabytesPerSecond - nominal) <= 0.05 * nominal,
                "\(plateau.level): \(plateau.gigabytesPerSecond)")
        }
    }

    @Test func threeLevelsEndInDRAM() {
        let samples = sweep([(32 * 1024, 150), (512 * 1024, 80), (8 << 30, 15)])
        #expect(PlateauDetector.plateaus(samples).map(\.level) == ["L1", "L2", "DRAM"])
    }

    @Test func mergesNeighboursThatAreReallyOneLevel() {
        let samples = [10.0, 10.2, 9.9, 11.4, 11.2, 11.3].enumerated().map {
            BandwidthSample(workingSetBytes: (1 << 20) << $0.offset, gigabytesPerSecond: $0.element)
        }
        #expect(PlateauDetector.plateaus(samples).count == 1)
    }

    @Test func aCurveWithNoFlatStretchHasNoPlateau() {
        let samples = [100.0, 60, 35, 20, 11].enumerated().map {
            BandwidthSample(workingSetBytes: 1024 << $0.offset, gigabytesPerSecond: $0.element)
        }
        #expect(PlateauDetector.plateaus(samples).isEmpty)
    }
}

@Suite struct MachineProbeTests {
    @Test func probesRunAndReturnPositiveFigures() {
        #expect(MachineProbe.fp32Peak(threads: 1, seconds: 0.02) > 0)
        #expect(MachineProbe.triadBandwidth(workingSetBytes: 48 * 1024, threads: 2, minimumSeconds: 0.01) > 0)
    }
}
