import Foundation
import LoupeBase
import Testing

@testable import LoupeEvals

/// Properties every interval Loupe prints must have, whatever the data: it holds its own
/// estimate, it stays in its scale's domain (a pass rate in [0, 1], kappa in [−1, 1], a
/// difference of [0, 1] scores in [−1, 1]), and it covers the true value about as often as it
/// says (95%) in a seeded simulation. The reference tests check each estimator against scipy
/// and statsmodels on fixed data; these check the class of defect (an interval that excludes its
/// estimate, a negative pass rate, a zero-width interval from five items) cannot come back.
@Suite struct IntervalPropertyTests {
    /// The datasets a run can produce: pass/fail and scores in [0, 1], one epoch or several, from
    /// 1 to 60 items, all-pass and all-fail among them, and counts outside [0, 1].
    static func runs(seed: UInt64) -> [(name: String, rows: [ScoredRow])] {
        var random = SplitMix64(seed: seed)
        var out: [(String, [ScoredRow])] = []
        for items in [1, 2, 3, 5, 10, 26, 60] {
            for epochs in [1, 2, 5] {
                for p in [0.0, 0.1, 0.5, 0.9, 1.0] {
                    var rows: [ScoredRow] = []
                    for item in 0..<items {
                        // Each item has its own difficulty, so epochs of an item correlate.
                        let difficulty = min(1, max(0, p + (random.uniform() - 0.5) * 0.4))
                        for epoch in 1...epochs {
                            let pass = p == 0 ? false : p == 1 ? true : random.uniform() < difficulty
                            let f1 = p == 1 ? 1 : p == 0 ? 0 : min(1, max(0, difficulty + (random.uniform() - 0.5) / 2))
                            let count = Double(Int(random.uniform() * 4 * (p + 0.1)))
                            rows.append(
                                ScoredRow(
                                    itemID: String(format: "item-%03d", item), epoch: epoch,
                                    values: ["match": pass ? 1 : 0, "f1": f1, "f1@0.5": f1, "tool_calls": count],
                                    passed: ["match": pass, "f1@0.5": f1 >= 0.5]))
                        }
                    }
                    out.append(("\(items) items × \(epochs) epochs, p \(p)", rows))
                }
            }
        }
        return out
    }

    static func holdsItsEstimate(_ interval: Interval) -> Bool {
        interval.lower.isNaN || interval.upper.isNaN
            || (interval.lower <= interval.estimate && interval.estimate <= interval.upper)
    }

    static func lies(_ interval: Interval, in domain: ClosedRange<Double>) -> Bool {
        (interval.lower.isNaN || interval.lower >= domain.lowerBound)
            && (interval.upper.isNaN || interval.upper <= domain.upperBound)
            && (interval.estimate.isNaN || domain.contains(interval.estimate))
    }

    @Test func everyRunIntervalHoldsItsEstimateAndStaysInItsDomain() {
        for (name, rows) in Self.runs(seed: 62) {
            let summary = RunSummary(rows: rows, scorers: ["match", "f1", "f1@0.5", "tool_calls"])
            #expect(summary.scorers.count == 4, "\(name)")
            for scorer in summary.scorers {
                for interval in [scorer.interval, scorer.bootstrap] {
                    #expect(Self.holdsItsEstimate(interval), "\(name) \(scorer.scorer) \(interval)")
                }
                if scorer.scorer == "tool_calls" {
                    // A count: no upper bound, never below 0 in its bootstrap.
                    #expect(scorer.bootstrap.lower >= 0, "\(name)")
                    continue
                }
                #expect(Self.lies(scorer.interval, in: 0...1), "\(name) \(scorer.scorer) \(scorer.interval)")
                // A pass rate's interval has width wherever it was measured on fewer than infinitely
                // many trials: 10/10 is about [0.72, 1], never [1, 1].
                if scorer.binary && scorer.items > 0 {
                    #expect(scorer.interval.upper - scorer.interval.lower > 0.01, "\(name) \(scorer.scorer)")
                }
            }
            // The thresholded F1 is a pass rate, the raw F1 a mean.
            #expect(summary.scorers.first { $0.scorer == "f1@0.5" }?.statistic == "pass rate")
            #expect(summary.scorers.first { $0.scorer == "f1" }?.statistic == "mean")
        }
    }

    @Test func aCountsIntervalIsNotCutAtOne() {
        // Inspect's tool_calls_used: 1, 1, 1, 2, 1 calls: mean 1.2, which [.., 1] would exclude.
        let rows = [1.0, 1, 1, 2, 1].enumerated().map {
            ScoredRow(itemID: "i\($0.offset)", epoch: 1, values: ["tool_calls_used": $0.element])
        }
        let interval = RunSummary(rows: rows, scorers: ["tool_calls_used"]).scorers[0].interval
        #expect(abs(interval.estimate - 1.2) < 1e-12)
        #expect(interval.lower < 1.2 && interval.upper > 1.2 && interval.upper > 1)
        #expect(interval.method == "t")
    }

    @Test func tenPassesOverFiveItemsAreNotCertain() {
        // The walkthrough's run 13: 5 items × 2 epochs, every answer passed.
        let rows = (0..<5).flatMap { item in
            (1...2).map { ScoredRow(itemID: "i\(item)", epoch: $0, values: ["match": 1], passed: ["match": true]) }
        }
        let interval = RunSummary(rows: rows, scorers: ["match"]).scorers[0].interval
        #expect(interval.method == "wilson-clustered" && interval.n == 5)
        // Wilson on 10/10: statsmodels' proportion_confint(10, 10, method="wilson") lower 0.7224672.
        #expect(abs(interval.lower - 0.722_467_2) < 1e-6 && interval.upper == 1)
    }

    @Test func pairedDifferencesAndAgreementStayInTheirDomains() {
        var random = SplitMix64(seed: 7)
        for n in [2, 3, 5, 12, 40] {
            for flip in [0.0, 0.2, 0.5] {
                var a: [String: [Double]] = [:]
                var b: [String: [Double]] = [:]
                var human: [String] = []
                var judge: [String] = []
                for item in 0..<n {
                    let x = random.uniform() < 0.5 ? 1.0 : 0.0
                    let y = random.uniform() < flip ? 1 - x : x
                    a["i\(item)"] = [x]
                    b["i\(item)"] = [y == 1 || random.uniform() < 0.3 ? 1 : 0]
                    human.append(x == 1 ? "pass" : "fail")
                    judge.append(y == 1 ? "pass" : "fail")
                }
                let paired = PairedComparison(a: a, b: b)
                #expect(Self.holdsItsEstimate(paired.difference) && Self.lies(paired.difference, in: -1...1), "\(n)")
                #expect(
                    Self.holdsItsEstimate(paired.bootstrapDifference)
                        && Self.lies(paired.bootstrapDifference, in: -1...1))
                let agreement = RaterAgreement(reference: human, rated: judge)
                if !agreement.kappa.isNaN {
                    #expect(Self.holdsItsEstimate(agreement.kappaInterval), "\(n) \(flip)")
                    #expect(Self.lies(agreement.kappaInterval, in: -1...1), "\(n) \(flip) \(agreement.kappaInterval)")
                    // An interval is either missing (standard error 0) or has width: never [κ, κ].
                    #expect(agreement.kappaInterval.lower.isNaN || agreement.kappaInterval.halfWidth > 0)
                }
            }
        }
    }

    @Test func predictionPoweredAndWinRatesStayInZeroOne() {
        var random = SplitMix64(seed: 11)
        for labelled in [3, 10, 40] {
            let labels = (0..<labelled).map { _ in random.uniform() < 0.3 ? 1.0 : 0 }
            let onLabelled = labels.map { random.uniform() < 0.2 ? 1 - $0 : $0 }
            let others = (0..<100).map { _ in random.uniform() < 0.3 ? 1.0 : 0 }
            let ppi = PredictionPoweredMean(
                labels: labels, predictionsOnLabeled: onLabelled, predictionsOnUnlabeled: others)
            let clamped = ppi.estimate.clamped(to: 0...1)
            #expect(Self.holdsItsEstimate(clamped) && Self.lies(clamped, in: 0...1))
            let people = Interval.wilson(successes: labels.filter { $0 == 1 }.count, n: labels.count)
            #expect(Self.holdsItsEstimate(people) && Self.lies(people, in: 0...1) && people.halfWidth > 0)
        }
        let outcomes = (0..<9).map { i in (a: "x", b: "y", score: i % 3 == 0 ? 0.5 : 1.0) }
        let rate = WinRate(of: "x", over: "y", outcomes: outcomes)
        #expect(Self.holdsItsEstimate(rate.rate) && Self.lies(rate.rate, in: 0...1))
    }

    // MARK: Coverage in seeded simulations

    /// The share of `trials` simulated runs whose interval covers `truth`.
    static func coverage(trials: Int, truth: Double, _ interval: (inout SplitMix64) -> Interval) -> Double {
        var random = SplitMix64(seed: 0xC0FE)
        var covered = 0
        for _ in 0..<trials {
            let i = interval(&random)
            if i.lower <= truth && truth <= i.upper { covered += 1 }
        }
        return Double(covered) / Double(trials)
    }

    @Test func wilsonCoversAPassRateAboutNinetyFivePercentOfTheTime() {
        // Wilson's coverage oscillates around the nominal level; at n 40 it stays within 0.93–0.97.
        for p in [0.1, 0.3, 0.5] {
            let covered = Self.coverage(trials: 4000, truth: p) { random in
                let successes = (0..<40).filter { _ in random.uniform() < p }.count
                return Interval.wilson(successes: successes, n: 40)
            }
            #expect(covered > 0.925 && covered < 0.975, "p \(p): \(covered)")
        }
    }

    @Test func theClusteredPassRateCoversWhenEpochsCorrelate() {
        // 30 items × 4 epochs: each item passes with its own rate (Beta-like spread around 0.6),
        // so an item's epochs agree more than independent trials would. Treating the 120 answers
        // as independent under-covers; the effective-n Wilson holds the nominal level.
        let truth = 0.6
        func draw(_ random: inout SplitMix64) -> [[Double]] {
            (0..<30).map { _ in
                let rate = min(1, max(0, truth + (random.uniform() - 0.5) * 0.8))
                return (0..<4).map { _ in random.uniform() < rate ? 1 : 0 }
            }
        }
        let clustered = Self.coverage(trials: 3000, truth: truth) { random in
            Interval.clusteredProportion(draw(&random))
        }
        let naive = Self.coverage(trials: 3000, truth: truth) { random in
            let rows = Array(draw(&random).joined())
            return Interval.wilson(successes: rows.filter { $0 == 1 }.count, n: rows.count)
        }
        #expect(clustered > 0.93 && clustered < 0.975, "clustered \(clustered)")
        #expect(naive < clustered, "naive \(naive) against clustered \(clustered)")
    }

    @Test func theStudentTCoversAMeanOfScoresInZeroOne() {
        // Uniform scores on [0, 1], 12 items: the t interval, cut to [0, 1], covers 0.5 at ~95%.
        let covered = Self.coverage(trials: 4000, truth: 0.5) { random in
            let values = (0..<12).map { _ in random.uniform() }
            return Interval.studentT(values).clamped(to: 0...1)
        }
        #expect(covered > 0.935 && covered < 0.965, "\(covered)")
    }

    @Test func thePairedDifferenceCoversTheTrueDelta() {
        // B is A plus 0.1 with noise on 25 items; the paired t interval covers 0.1 at ~95%.
        let covered = Self.coverage(trials: 1000, truth: 0.1) { random in
            var a: [String: [Double]] = [:]
            var b: [String: [Double]] = [:]
            for item in 0..<25 {
                let base = 0.2 + random.uniform() * 0.5
                a["i\(item)"] = [base]
                b["i\(item)"] = [base + 0.1 + (random.uniform() - 0.5) * 0.3]
            }
            return PairedComparison(a: a, b: b).difference
        }
        #expect(covered > 0.93 && covered < 0.97, "\(covered)")
    }

    // MARK: Paired pass/fail runs

    /// Two runs on the same `n` items, each item fixed (A fails, B passes) with probability `fixed`,
    /// regressed with `regressed`, else the same in both.
    static func pairedPassFail(
        n: Int, fixed: Double, regressed: Double, _ random: inout SplitMix64
    ) -> (a: [String: [Double]], b: [String: [Double]]) {
        var a: [String: [Double]] = [:]
        var b: [String: [Double]] = [:]
        for item in 0..<n {
            let u = random.uniform()
            let same: Double = random.uniform() < 0.6 ? 1 : 0
            a["i\(item)"] = [u < fixed ? 0 : u < fixed + regressed ? 1 : same]
            b["i\(item)"] = [u < fixed ? 1 : u < fixed + regressed ? 0 : same]
        }
        return (a, b)
    }

    /// The walkthrough's case: 5 of 20 items fixed, none regressed. The t interval on the 0/1
    /// differences, [+0.044, +0.456], excluded 0 beside an exact McNemar p of 0.0625; the interval
    /// and the p shown now say the same thing, and the screen names both.
    @Test func fiveFixedOfTwentyShowAnIntervalThatAgreesWithItsTest() {
        let a = Dictionary(uniqueKeysWithValues: (0..<20).map { ("i\($0)", [$0 < 5 ? 0.0 : 1]) })
        let b = Dictionary(uniqueKeysWithValues: (0..<20).map { ("i\($0)", [1.0]) })
        let comparison = PairedComparison(a: a, b: b)
        let excludesZero = comparison.difference.lower > 0 || comparison.difference.upper < 0
        #expect(excludesZero == (comparison.pValue < 0.05), "\(comparison.difference) p \(comparison.pValue)")
        #expect(comparison.difference.method == "tango-score" && comparison.mcnemar?.method == "asymptotic")
        #expect(abs(comparison.difference.estimate - 0.25) < 1e-15)
    }

    /// Every table of fixed and regressed counts up to 40 items: the interval holds its estimate,
    /// lies in [−1, 1], has width, and excludes 0 exactly when McNemar's asymptotic p < 0.05 (both
    /// are Tango's score statistic at 0; they could part only where that statistic is within the
    /// bisection's last bit of 1.96, which no table of counts reaches).
    @Test func thePairedPassRateIntervalExcludesZeroExactlyWhenItsTestRejects() {
        for n in [1, 2, 3, 5, 8, 13, 20, 40] {
            for fixed in 0...n {
                for regressed in 0...(n - fixed) {
                    let interval = Interval.tangoScore(fixed: fixed, regressed: regressed, n: n)
                    let p = PairedComparison.mcnemarAsymptotic(fixed: fixed, regressed: regressed).pValue
                    let label = "n \(n) fixed \(fixed) regressed \(regressed): \(interval) p \(p)"
                    #expect(Self.holdsItsEstimate(interval) && Self.lies(interval, in: -1...1), "\(label)")
                    #expect(interval.upper - interval.lower > 0.01, "\(label)")
                    #expect((interval.lower > 0 || interval.upper < 0) == (p < 0.05), "\(label)")
                }
            }
        }
        // Through whole comparisons too (a seeded sample; the tables above cover every count).
        var random = SplitMix64(seed: 63)
        for n in [4, 12, 30] {
            for _ in 0..<40 {
                let (a, b) = Self.pairedPassFail(n: n, fixed: random.uniform() * 0.4, regressed: 0.1, &random)
                let comparison = PairedComparison(a: a, b: b)
                let excludesZero = comparison.difference.lower > 0 || comparison.difference.upper < 0
                #expect(excludesZero == (comparison.pValue < 0.05), "\(comparison.difference) \(comparison.pValue)")
                #expect(comparison.differenceIntervalUndefined == nil)
            }
        }
    }

    @Test func thePairedPassRateIntervalCoversTheTrueDifference() {
        // Exact coverage of these three, summed over every table: 0.956, 0.956 and 0.948.
        for (n, fixed, regressed) in [(40, 0.15, 0.05), (40, 0.1, 0.1), (60, 0.25, 0.1)] {
            let covered = Self.coverage(trials: 4000, truth: fixed - regressed) { random in
                var (f, r) = (0, 0)
                for _ in 0..<n {
                    let u = random.uniform()
                    if u < fixed { f += 1 } else if u < fixed + regressed { r += 1 }
                }
                return Interval.tangoScore(fixed: f, regressed: r, n: n)
            }
            #expect(covered > 0.93 && covered < 0.97, "n \(n) fixed \(fixed) regressed \(regressed): \(covered)")
        }
    }
}
