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

    @Test func pairedPassFailScoresUseMcNemarsAsymptoticTest() {
        let row = Self.reference["paired_binary"]!
        let a = Self.numbers(row["a"])
        let b = Self.numbers(row["b"])
        let comparison = PairedComparison(
            a: Dictionary(uniqueKeysWithValues: a.enumerated().map { ("q\($0)", [$1]) }),
            b: Dictionary(uniqueKeysWithValues: b.enumerated().map { ("q\($0)", [$1]) }))
        let table = row["table"]!.array!.map(Self.numbers)
        let (regressed, fixed) = (Int(table[0][1]), Int(table[1][0]))
        #expect(comparison.mcnemar?.regressed == regressed && comparison.mcnemar?.fixed == fixed)
        #expect(comparison.mcnemar?.method == "asymptotic")
        #expect(abs(comparison.pValue - row["mcnemar_asymptotic_p"]!.number!) < 1e-12)
        // The exact conditional test is still there to compare with, and matches statsmodels.
        let exact = PairedComparison.mcnemarExact(fixed: fixed, regressed: regressed).pValue
        #expect(abs(exact - row["mcnemar_p"]!.number!) < 1e-12)
        #expect(comparison.fixed.count == fixed && comparison.regressed.count == regressed)
        #expect(comparison.difference.method == "tango-score")
    }

    /// Tango's score interval against the reference written from Tango (1998) with scipy's root
    /// finder, and McNemar's asymptotic p against statsmodels, on tables from none discordant to
    /// every item fixed.
    @Test func pairedPassRatesGetTangosIntervalAsTheReferenceComputesIt() {
        for row in Self.reference["paired_proportions"]!.array! {
            let (fixed, regressed, n) = (
                Int(row["fixed"]!.number!), Int(row["regressed"]!.number!), Int(row["n"]!.number!)
            )
            let interval = Interval.tangoScore(fixed: fixed, regressed: regressed, n: n)
            #expect(interval.method == "tango-score" && interval.n == n)
            #expect(abs(interval.estimate - row["estimate"]!.number!) < 1e-15, "\(row)")
            #expect(abs(interval.lower - row["lower"]!.number!) < 1e-9, "\(row) \(interval)")
            #expect(abs(interval.upper - row["upper"]!.number!) < 1e-9, "\(row) \(interval)")
            let test = PairedComparison.mcnemarAsymptotic(fixed: fixed, regressed: regressed)
            #expect(abs(test.pValue - row["mcnemar_asymptotic_p"]!.number!) < 1e-12, "\(row)")
            #expect(
                abs(
                    PairedComparison.mcnemarExact(fixed: fixed, regressed: regressed).pValue
                        - row["mcnemar_exact_p"]!.number!) < 1e-12, "\(row)")
            // Through a comparison of two runs, the same interval and test.
            let a = (0..<n).map { $0 < fixed ? 0.0 : $0 < fixed + regressed ? 1 : Double($0 % 2) }
            let b = (0..<n).map { $0 < fixed ? 1.0 : $0 < fixed + regressed ? 0 : Double($0 % 2) }
            let comparison = PairedComparison(
                a: Dictionary(uniqueKeysWithValues: a.enumerated().map { ("q\($0)", [$1]) }),
                b: Dictionary(uniqueKeysWithValues: b.enumerated().map { ("q\($0)", [$1]) }))
            #expect(comparison.difference == interval && comparison.pValue == test.pValue, "\(row)")
        }
    }

    /// The worked example of Fagerland, Lydersen and Laake's R package contingencytables (Cavo et
    /// al. 2012, the table [[59, 6], [16, 80]]), as that package prints it: Tango's interval
    /// excludes 0 beside the asymptotic McNemar p 0.033006, while the exact test's 0.052479 would
    /// not have agreed with it.
    @Test func tangosIntervalMatchesContingencytablesPrintedExample() {
        let interval = Interval.tangoScore(fixed: 6, regressed: 16, n: 161)
        #expect(
            String(format: "%.4f %.4f %.4f", interval.estimate, interval.lower, interval.upper)
                == "-0.0621 -0.1240 -0.0054")
        #expect(
            String(format: "%.6f", PairedComparison.mcnemarAsymptotic(fixed: 6, regressed: 16).pValue) == "0.033006")
        #expect(String(format: "%.6f", PairedComparison.mcnemarExact(fixed: 6, regressed: 16).pValue) == "0.052479")
    }

    /// The clustered pass rate's variance against statsmodels' cluster-robust (sandwich) estimator
    /// of a weighted mean, each item weighted once whatever its epochs, then Korn and Graubard's
    /// effective n and statsmodels' Wilson interval over it; epochs unequal across items too.
    @Test func theClusteredPassRateMatchesStatsmodelsClusterRobustVariance() {
        for row in Self.reference["clustered_proportion_sandwich"]!.array! {
            let epochs = row["epochs"]!.array!.map(Self.numbers)
            let interval = Interval.clusteredProportion(epochs)
            #expect(interval.method == "wilson-clustered" && interval.n == epochs.count)
            #expect(abs(interval.estimate - row["estimate"]!.number!) < 1e-12)
            #expect(abs(interval.lower - row["lower"]!.number!) < 1e-9, "\(row["n_eff"]!)")
            #expect(abs(interval.upper - row["upper"]!.number!) < 1e-9, "\(row["n_eff"]!)")
        }
    }

    @Test func benjaminiHochbergMatchesStatsmodels() {
        let row = Self.reference["benjamini_hochberg"]!
        let adjusted = MultipleComparisons.benjaminiHochberg(Self.numbers(row["p"]))
        for (ours, theirs) in zip(adjusted, Self.numbers(row["adjusted"])) { #expect(abs(ours - theirs) < 1e-12) }
    }
}
