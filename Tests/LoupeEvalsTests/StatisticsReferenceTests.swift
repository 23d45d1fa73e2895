import Foundation
import LoupeAgents
import LoupeBase
import Testing

@testable import LoupeEvals

/// Every statistic against scipy/statsmodels on the fixed datasets of
/// `scripts/reference/eval_stats.py` (its output is the fixture).
@Suite struct StatisticsReferenceTests {
    static let reference: JSONValue = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/reference-stats.json")
        return try! JSONValue.parse(Data(contentsOf: url))
    }()

    static func numbers(_ value: JSONValue?) -> [Double] { value?.array?.compactMap(\.number) ?? [] }

    @Test func studentTAndNormalQuantilesAndCDFMatchScipy() {
        for row in Self.reference["t_quantiles"]!.array! {
            let t = Distributions.studentTQuantile(row["p"]!.number!, degrees: row["df"]!.number!)
            #expect(abs(t - row["t"]!.number!) < 1e-9 * Swift.max(1, abs(t)), "\(row)")
        }
        for row in Self.reference["t_cdf"]!.array! {
            let p = Distributions.studentTCDF(row["t"]!.number!, degrees: row["df"]!.number!)
            #expect(abs(p - row["p"]!.number!) < 1e-12, "\(row)")
        }
        for row in Self.reference["normal_quantiles"]!.array! {
            let z = Distributions.normalQuantile(row["p"]!.number!)
            #expect(abs(z - row["z"]!.number!) < 1e-9, "\(row)")
        }
    }

    @Test func wilsonIntervalsMatchStatsmodels() {
        for row in Self.reference["wilson"]!.array! {
            let interval = Interval.wilson(successes: Int(row["successes"]!.number!), n: Int(row["n"]!.number!))
            #expect(abs(interval.lower - row["lower"]!.number!) < 1e-12, "\(row)")
            #expect(abs(interval.upper - row["upper"]!.number!) < 1e-12, "\(row)")
        }
    }

    @Test func wilsonAtAFractionalCountMatchesStatsmodels() {
        for row in Self.reference["wilson_fractional"]!.array! {
            let nobs = row["nobs"]!.number!
            let interval = Interval.wilson(proportion: row["count"]!.number! / nobs, effectiveN: nobs, n: Int(nobs))
            #expect(abs(interval.lower - row["lower"]!.number!) < 1e-12, "\(row)")
            #expect(abs(interval.upper - row["upper"]!.number!) < 1e-12, "\(row)")
        }
    }

    @Test func aPassRateOverEpochsIsWilsonOverTheEffectiveTrials() {
        for row in Self.reference["clustered_proportion"]!.array! {
            let epochs = row["epochs"]!.array!.map(Self.numbers)
            let interval = Interval.clusteredProportion(epochs)
            #expect(interval.method == "wilson-clustered" && interval.n == epochs.count)
            #expect(abs(interval.estimate - row["estimate"]!.number!) < 1e-12)
            #expect(abs(interval.lower - row["lower"]!.number!) < 1e-10, "\(row["n_eff"]!)")
            #expect(abs(interval.upper - row["upper"]!.number!) < 1e-10, "\(row["n_eff"]!)")
        }
    }

    @Test func studentTIntervalsMatchScipy() {
        for row in Self.reference["t_intervals"]!.array! {
            let interval = Interval.studentT(Self.numbers(row["values"]))
            #expect(abs(interval.estimate - row["mean"]!.number!) < 1e-12)
            #expect(abs(interval.lower - row["lower"]!.number!) < 1e-10, "\(row["name"]!)")
            #expect(abs(interval.upper - row["upper"]!.number!) < 1e-10, "\(row["name"]!)")
        }
    }

    @Test func theBootstrapAgreesWithScipysWithinMonteCarloError() {
        let row = Self.reference["bootstrap_mean"]!
        let values = Self.numbers(row["values"])
        let interval = Interval.bootstrap(values, resamples: 20_000)
        // Different generators: the bounds agree to Monte Carlo error, a few thousandths here.
        #expect(abs(interval.lower - row["lower"]!.number!) < 0.02)
        #expect(abs(interval.upper - row["upper"]!.number!) < 0.02)
        // And the same seed gives the same interval.
        #expect(Interval.bootstrap(values) == Interval.bootstrap(values))
        #expect(Interval.bootstrap(values, seed: 1) != Interval.bootstrap(values, seed: 2))
    }

    @Test func epochsAreAveragedWithinItemsBeforeTheInterval() {
        let row = Self.reference["clustered"]!
        let epochs = row["epochs"]!.array!.map(Self.numbers)
        let interval = Interval.clustered(epochs)
        #expect(interval.n == 30)
        #expect(abs(interval.estimate - row["mean"]!.number!) < 1e-12)
        #expect(abs(interval.lower - row["lower"]!.number!) < 1e-10)
        #expect(abs(interval.upper - row["upper"]!.number!) < 1e-10)
        // When an item's epochs agree, treating the rows as independent overstates n: 10 items
        // × 5 identical epochs are 10 observations, not 50.
        let agreeing = (0..<10).map { [Double](repeating: $0 < 5 ? 1 : 0, count: 5) }
        #expect(Interval.clustered(agreeing).n == 10)
        #expect(Interval.studentT(Array(agreeing.joined())).halfWidth < Interval.clustered(agreeing).halfWidth / 2)
    }

    @Test func passAtKAndPassHatKMatchExactBinomials() {
        for row in Self.reference["pass_at_k"]!.array! {
            let (n, c, k) = (Int(row["n"]!.number!), Int(row["c"]!.number!), Int(row["k"]!.number!))
            #expect(abs(PassAtK.passAt(k, n: n, c: c) - row["pass_at"]!.number!) < 1e-12, "\(row)")
            #expect(abs(PassAtK.passHat(k, n: n, c: c) - row["pass_hat"]!.number!) < 1e-12, "\(row)")
        }
    }

    @Test func calibrationMatchesTheDefinitions() {
        let row = Self.reference["calibration"]!
        let calibration = Calibration(
            confidences: Self.numbers(row["confidences"]), outcomes: Self.numbers(row["outcomes"]))
        #expect(abs(calibration.expectedCalibrationError - row["ece"]!.number!) < 1e-12)
        #expect(abs(calibration.brierScore - row["brier"]!.number!) < 1e-12)
        #expect(calibration.bins.map(\.count).reduce(0, +) == 200)
    }

    @Test func pairedContinuousScoresMatchScipysPairedTTest() {
        let row = Self.reference["paired_continuous"]!
        let a = Self.numbers(row["a"])
        let b = Self.numbers(row["b"])
        let comparison = PairedComparison(
            a: Dictionary(uniqueKeysWithValues: a.enumerated().map { ("item\($0)", [$1]) }),
            b: Dictionary(uniqueKeysWithValues: b.enumerated().map { ("item\($0)", [$1]) }))
        #expect(comparison.n == 50 && comparison.mcnemar == nil)
        #expect(abs(comparison.difference.estimate - row["mean_difference"]!.number!) < 1e-12)
        #expect(abs(comparison.difference.lower - row["lower"]!.number!) < 1e-10)
        #expect(abs(comparison.difference.upper - row["upper"]!.number!) < 1e-10)
        #expect(abs(comparison.pValue - row["p_value"]!.number!) < 1e-10)
        // The shifted-t formula against statsmodels' noncentral-t power solution: within 3%.
        let exact = row["mde_noncentral_t"]!.number!
        #expect(abs(comparison.minimumDetectableEffect - exact) / exact < 0.03)
        #expect(comparison.wins + comparison.ties + comparison.losses == 50)
    }

    @Test func pairedPassFailScoresUseMcNemarsExactTest() {
        let row = Self.reference["paired_binary"]!
        let a = Self.numbers(row["a"])
        let b = Self.numbers(row["b"])
        let comparison = PairedComparison(
            a: Dictionary(uniqueKeysWithValues: a.enumerated().map { ("q\($0)", [$1]) }),
            b: Dictionary(uniqueKeysWithValues: b.enumerated().map { ("q\($0)", [$1]) }))
        let table = row["table"]!.array!.map(Self.numbers)
        #expect(comparison.mcnemar?.regressed == Int(table[0][1]))
        #expect(comparison.mcnemar?.fixed == Int(table[1][0]))
        #expect(abs(comparison.pValue - row["mcnemar_p"]!.number!) < 1e-12)
        #expect(comparison.fixed.count == Int(table[1][0]) && comparison.regressed.count == Int(table[0][1]))
    }

    @Test func benjaminiHochbergMatchesStatsmodels() {
        let row = Self.reference["benjamini_hochberg"]!
        let adjusted = MultipleComparisons.benjaminiHochberg(Self.numbers(row["p"]))
        for (ours, theirs) in zip(adjusted, Self.numbers(row["adjusted"])) { #expect(abs(ours - theirs) < 1e-12) }
    }
}
