import Foundation

/// Run B against run A on the items both scored: the per-item differences (B − A) with their
/// interval and test, and the items that changed. Items are compared by id; epochs are averaged
/// within an item first. Pass/fail scores with one epoch get Tango's score interval and
/// McNemar's asymptotic test, which agree on significance by construction; other scores a
/// Student-t interval and a paired t-test, which agree the same way.
package struct PairedComparison: Hashable, Sendable, Codable {
    /// McNemar's test on the discordant pairs.
    package struct McNemar: Hashable, Sendable, Codable {
        /// Items A passed and B failed.
        package var regressed: Int
        /// Items A failed and B passed.
        package var fixed: Int
        /// Two-sided p-value; which test made it is `method` ("asymptotic" or "exact").
        package var pValue: Double
        /// "asymptotic": z = (fixed − regressed) / √(fixed + regressed), no continuity correction,
        /// the score test Tango's interval inverts; "exact": the conditional binomial test.
        package var method: String
    }

    /// Items both runs scored.
    package var n: Int
    package var meanA: Double
    package var meanB: Double
    /// Mean of B − A over the common items: for pass/fail scores the difference of the pass
    /// rates with Tango's score interval (method "tango-score"), else a Student-t interval on the
    /// paired differences (method "t"). Either excludes 0 exactly when `pValue` < 0.05.
    package var difference: Interval
    /// The same difference with a percentile bootstrap interval over items.
    package var bootstrapDifference: Interval
    /// Paired t-test p-value for "no difference" (McNemar's asymptotic test when the scores are
    /// pass/fail).
    package var pValue: Double
    package var mcnemar: McNemar?
    /// Items where B scored higher, the same, lower.
    package var wins: Int
    package var ties: Int
    package var losses: Int
    /// Ids of the items B improved (for pass/fail: failed in A, passed in B), best gain first.
    package var fixed: [String]
    /// Ids of the items B made worse, worst first.
    package var regressed: [String]
    /// The smallest true difference a paired t-test at α = 0.05 detects with 80% power at this
    /// n and this spread of differences: (t₀.₉₇₅ + t₀.₈) · sd / √n, with n − 1 degrees of freedom.
    /// NaN where it is undefined (``minimumDetectableEffectUndefined`` says why).
    package var minimumDetectableEffect: Double
    package var onlyInA: [String]
    package var onlyInB: [String]
    /// Why there is no minimum detectable effect, nil when there is one. With no spread in the
    /// differences (two identical runs) the t-test's power formula has nothing to scale: a "0.000"
    /// would claim any difference at all is detectable.
    package var minimumDetectableEffectUndefined: String? {
        guard minimumDetectableEffect.isNaN else { return nil }
        if n < 2 { return "fewer than 2 items in common" }
        return wins == 0 && losses == 0
            ? "identical scores on every item: the differences have no spread"
            : "every item moved by the same amount: the differences have no spread"
    }

    /// Why the paired interval is not shown, nil when it is. It has the MDE's cause: with no
    /// spread in the differences (or fewer than 2 items) the t interval collapses onto its
    /// estimate, and "[+0.000, +0.000]" would claim a certainty nothing measured. Tango's
    /// interval for pass/fail scores keeps its width there and is always shown.
    package var differenceIntervalUndefined: String? {
        difference.method == "tango-score" && n > 0 ? nil : minimumDetectableEffectUndefined
    }

    /// True when the runs scored different item sets (the comparison uses the common ones).
    package var itemSetsDiffer: Bool { !onlyInA.isEmpty || !onlyInB.isEmpty }

    /// - Parameters:
    ///   - a, b: each run's scores by item id, one value per epoch.
    package init(a: [String: [Double]], b: [String: [Double]], seed: UInt64 = 0x5EED) {
        func mean(_ values: [Double]) -> Double { values.reduce(0, +) / Double(values.count) }
        let common = a.keys.filter { b[$0] != nil && !(a[$0]!.isEmpty) && !(b[$0]!.isEmpty) }.sorted()
        onlyInA = a.keys.filter { b[$0] == nil }.sorted()
        onlyInB = b.keys.filter { a[$0] == nil }.sorted()
        n = common.count
        let scoresA = common.map { mean(a[$0]!) }
        let scoresB = common.map { mean(b[$0]!) }
        let differences = zip(scoresB, scoresA).map { $0 - $1 }
        meanA = n > 0 ? mean(scoresA) : .nan
        meanB = n > 0 ? mean(scoresB) : .nan
        bootstrapDifference = Interval.bootstrap(differences, seed: seed)
        wins = differences.filter { $0 > 0 }.count
        losses = differences.filter { $0 < 0 }.count
        ties = n - wins - losses
        let changed = common.indices.filter { differences[$0] != 0 }
        fixed = changed.filter { differences[$0] > 0 }.sorted { differences[$0] > differences[$1] }.map { common[$0] }
        regressed = changed.filter { differences[$0] < 0 }.sorted { differences[$0] < differences[$1] }.map {
            common[$0]
        }

        let binary =
            [a, b].allSatisfy { $0.values.joined().allSatisfy { $0 == 0 || $0 == 1 } }
            && common.allSatisfy { a[$0]!.count == 1 && b[$0]!.count == 1 }
        let average = n > 0 ? mean(differences) : .nan
        var sd = 0.0
        if n > 1 {
            sd = (differences.reduce(0) { $0 + ($1 - average) * ($1 - average) } / Double(n - 1)).squareRoot()
        }
        if binary {
            // The t interval on 0/1 differences can exclude 0 beside a McNemar p above 0.05 (5
            // fixed, none regressed of 20); Tango's interval and the asymptotic test cannot.
            let test = Self.mcnemarAsymptotic(fixed: fixed.count, regressed: regressed.count)
            mcnemar = test
            pValue = test.pValue
            difference = Interval.tangoScore(fixed: fixed.count, regressed: regressed.count, n: n)
        } else {
            mcnemar = nil
            pValue = Self.pairedTTest(mean: average, sd: sd, n: n)
            // Scores in [0, 1] differ by at most 1 either way; the t interval over few items can
            // reach past that and is cut there.
            let paired = Interval.studentT(differences)
            difference =
                RunSummary.domain(of: [a, b].flatMap { $0.values.joined() }) != nil
                ? paired.clamped(to: -1...1) : paired
        }
        minimumDetectableEffect = Self.minimumDetectableEffect(sd: sd, n: n)
    }

    /// McNemar's exact conditional (binomial) test: 2 · P(X ≤ min(fixed, regressed)),
    /// X ~ Bin(fixed + regressed, ½), at most 1. Not what a comparison shows: no interval for the
    /// difference inverts it, and it is conservative (Fagerland, Lydersen and Laake 2013, "The
    /// McNemar test for binary matched-pairs data: mid-p and asymptotic are better than exact
    /// conditional").
    package static func mcnemarExact(fixed: Int, regressed: Int) -> McNemar {
        let discordant = fixed + regressed
        let p =
            discordant == 0
            ? 1 : Swift.min(1, 2 * Distributions.binomialCDF(Swift.min(fixed, regressed), n: discordant, p: 0.5))
        return McNemar(regressed: regressed, fixed: fixed, pValue: p, method: "exact")
    }

    /// McNemar's asymptotic test without continuity correction: z = (f − r) / √(f + r), two-sided
    /// normal p-value; 1 with no discordant item. It is Tango's score test at a difference of 0,
    /// so ``Interval/tangoScore(fixed:regressed:n:confidence:)`` excludes 0 exactly when p < 0.05.
    package static func mcnemarAsymptotic(fixed: Int, regressed: Int) -> McNemar {
        let discordant = fixed + regressed
        guard discordant > 0 else {
            return McNemar(regressed: regressed, fixed: fixed, pValue: 1, method: "asymptotic")
        }
        let z = Double(fixed - regressed) / Double(discordant).squareRoot()
        return McNemar(
            regressed: regressed, fixed: fixed, pValue: erfc(abs(z) / 2.0.squareRoot()), method: "asymptotic")
    }

    /// Two-sided p-value of the paired t-test.
    package static func pairedTTest(mean: Double, sd: Double, n: Int) -> Double {
        guard n > 1 else { return .nan }
        guard sd > 0 else { return mean == 0 ? 1 : 0 }
        let t = mean / (sd / Double(n).squareRoot())
        return 2 * (1 - Distributions.studentTCDF(abs(t), degrees: Double(n - 1)))
    }

    /// (t_{1−α/2} + t_{power}) · sd / √n with n − 1 degrees of freedom; NaN with fewer than 2
    /// items or no spread (sd below 1e-9).
    package static func minimumDetectableEffect(sd: Double, n: Int, alpha: Double = 0.05, power: Double = 0.8)
        -> Double
    {
        // No spread, no test to power: undefined rather than 0. Rounding leaves a spread of
        // ~1e-17 where every item moved by the same 0.1; that is none either.
        guard n > 1, sd > 1e-9 else { return .nan }
        let degrees = Double(n - 1)
        let t =
            Distributions.studentTQuantile(1 - alpha / 2, degrees: degrees)
            + Distributions.studentTQuantile(power, degrees: degrees)
        return t * sd / Double(n).squareRoot()
    }
}
