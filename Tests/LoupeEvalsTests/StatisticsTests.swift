import Testing

@testable import LoupeEvals

/// Hand-computed cases and edges the reference datasets do not reach.
@Suite struct StatisticsTests {
    @Test func wilsonStaysInsideZeroAndOneAtTheExtremes() {
        let none = Interval.wilson(successes: 0, n: 5)
        #expect(none.lower == 0 && none.upper > 0.4)
        let all = Interval.wilson(successes: 5, n: 5)
        #expect(all.upper == 1 && all.lower < 0.6)
        #expect(Interval.wilson(successes: 0, n: 0).estimate.isNaN)
    }

    @Test func oneValueHasAnUnboundedInterval() {
        let one = Interval.studentT([0.7])
        #expect(one.estimate == 0.7 && one.lower == -.infinity && one.upper == .infinity)
    }

    @Test func passAtKByHand() {
        // n = 4, c = 1: pass@2 = 1 − C(3,2)/C(4,2) = 1 − 3/6; pass^2 = 0.
        #expect(PassAtK.passAt(2, n: 4, c: 1) == 0.5)
        #expect(PassAtK.passHat(2, n: 4, c: 1) == 0)
        // n = 4, c = 3: pass^2 = C(3,2)/C(4,2) = 0.5.
        #expect(PassAtK.passHat(2, n: 4, c: 3) == 0.5)
        let curves = PassAtK.curves([(4, 1), (4, 3)])
        #expect(curves.map(\.k) == [1, 2, 3, 4])
        #expect(curves[0].passAt == 0.5 && curves[0].passHat == 0.5)
        #expect(curves[3].passAt == 1 && curves[3].passHat == 0)
    }

    @Test func calibrationByHand() {
        // Two in the 0.9 bin (one right), one in the 0.2 bin (wrong): ECE = 2/3·|0.5−0.9| + 1/3·|0−0.2|.
        let calibration = Calibration(confidences: [0.9, 0.9, 0.2], outcomes: [1, 0, 0])
        #expect(abs(calibration.expectedCalibrationError - (2.0 / 3 * 0.4 + 1.0 / 3 * 0.2)) < 1e-12)
        #expect(abs(calibration.brierScore - (0.01 + 0.81 + 0.04) / 3) < 1e-12)
        #expect(calibration.bins[9].count == 2 && calibration.bins[2].count == 1)
        #expect(Calibration(confidences: [1.0], outcomes: [1]).bins[9].count == 1)
    }

    @Test func differentItemSetsAreComparedOnTheCommonOnesAndSaidSo() {
        let comparison = PairedComparison(a: ["x": [1], "y": [0], "z": [1]], b: ["x": [1], "y": [1], "w": [0]])
        #expect(comparison.n == 2 && comparison.itemSetsDiffer)
        #expect(comparison.onlyInA == ["z"] && comparison.onlyInB == ["w"])
        #expect(comparison.fixed == ["y"] && comparison.regressed.isEmpty)
        // One fixed, none regressed: McNemar's z = 1, p = 2(1 − Φ(1)) (the exact test would say 1).
        #expect(abs((comparison.mcnemar?.pValue ?? 0) - 0.317_310_507_862_914_15) < 1e-12)
    }

    /// Two identical runs have no spread of differences: the MDE is undefined and says why,
    /// not 0.000 (which would claim any difference is detectable).
    @Test func identicalRunsHaveNoMinimumDetectableEffect() {
        let scores: [String: [Double]] = ["x": [0.2], "y": [0.7], "z": [0.4]]
        let same = PairedComparison(a: scores, b: scores)
        #expect(same.minimumDetectableEffect.isNaN)
        #expect(same.minimumDetectableEffectUndefined?.hasPrefix("identical scores on every item") == true)
        let shifted = PairedComparison(a: scores, b: scores.mapValues { $0.map { $0 + 0.1 } })
        #expect(shifted.minimumDetectableEffectUndefined?.hasPrefix("every item moved by the same amount") == true)
        let spread = PairedComparison(a: scores, b: ["x": [0.3], "y": [0.7], "z": [0.6]])
        #expect(spread.minimumDetectableEffect > 0 && spread.minimumDetectableEffectUndefined == nil)
        // The interval shares the cause: undefined with no spread, shown with one.
        #expect(same.differenceIntervalUndefined != nil && shifted.differenceIntervalUndefined != nil)
        #expect(spread.differenceIntervalUndefined == nil && spread.difference.upper > spread.difference.lower)
    }

    @Test func mcnemarByHand() {
        // 0 regressed, 6 fixed: p = 2 · 0.5⁶.
        #expect(abs(PairedComparison.mcnemarExact(fixed: 6, regressed: 0).pValue - 2.0 / 64) < 1e-15)
        #expect(PairedComparison.mcnemarExact(fixed: 0, regressed: 0).pValue == 1)
    }
}
