import Foundation

extension Interval {
    /// Tango's score interval for the difference of two paired proportions (Tango 1998,
    /// "Equivalence test and confidence interval for the difference in proportions for the
    /// paired-sample design", Statistics in Medicine 17:891–908): run B's pass rate minus run A's
    /// on the same `n` items, `fixed` of which only B passed and `regressed` only A.
    ///
    /// It is the set of differences Δ₀ that the score test of "the difference is Δ₀" does not
    /// reject, and at Δ₀ = 0 that test is McNemar's asymptotic test (no continuity correction).
    /// So the interval excludes 0 exactly when ``PairedComparison/mcnemarAsymptotic(fixed:regressed:)``
    /// gives p < 1 − `confidence`: the two figures shown side by side cannot disagree. Its coverage is
    /// close to nominal from small n on, where the t interval on the 0/1 differences is not
    /// (Fagerland, Lydersen and Laake 2014, "Recommended tests and confidence intervals for paired
    /// binomial proportions"). Always within [−1, 1] and around its estimate (f − r) / n; with no
    /// discordant item it is ±z² / (n + z²), never a zero-width certainty. Method "tango-score".
    package static func tangoScore(fixed: Int, regressed: Int, n: Int, confidence: Double = 0.95) -> Interval {
        precondition(fixed >= 0 && regressed >= 0 && fixed + regressed <= n, "fixed + regressed must lie in 0...n")
        guard n > 0 else { return Interval(estimate: .nan, lower: .nan, upper: .nan, method: "tango-score", n: 0) }
        let z = Distributions.normalQuantile(1 - (1 - confidence) / 2)
        let estimate = Double(fixed - regressed) / Double(n)
        let score = { (delta: Double) in tangoStatistic(fixed: fixed, regressed: regressed, n: n, delta: delta) }
        // The statistic falls from +∞ near Δ₀ = −1 through 0 at the estimate to −∞ near +1: each
        // bound is the one crossing of ±z on its side of the estimate.
        let lower = estimate == -1 ? -1 : bisect(from: -1, to: estimate) { score($0) > z }
        let upper = estimate == 1 ? 1 : bisect(from: estimate, to: 1) { score($0) >= -z }
        return Interval(estimate: estimate, lower: lower, upper: upper, method: "tango-score", n: n)
    }

    /// Tango's score statistic for "the difference is Δ₀": (f − r − nΔ₀) / √(n(2q̂ + Δ₀(1 − Δ₀))),
    /// q̂ the maximum-likelihood probability of a regressed item under that hypothesis (the root of
    /// 2n q² + (−f − r + (2n − f + r)Δ₀) q − rΔ₀(1 − Δ₀) = 0 that is a probability). At Δ₀ = 0 it is
    /// McNemar's (f − r) / √(f + r); with no discordant item there it is 0 (no evidence either way).
    package static func tangoStatistic(fixed: Int, regressed: Int, n: Int, delta: Double) -> Double {
        let (f, r, nn) = (Double(fixed), Double(regressed), Double(n))
        let a = 2 * nn
        let b = -f - r + (2 * nn - f + r) * delta
        let c = -r * delta * (1 - delta)
        let root = Swift.max(0, b * b - 4 * a * c).squareRoot()
        // The same root in the form that does not cancel when b is large and positive.
        let q = b > 0 ? -2 * c / (b + root) : (-b + root) / (2 * a)
        let variance = nn * (2 * q + delta * (1 - delta))
        let numerator = f - r - nn * delta
        guard variance > 0 else { return numerator == 0 ? 0 : numerator > 0 ? .infinity : -.infinity }
        return numerator / variance.squareRoot()
    }

    /// The point in [from, to] where `below` turns from true to false (bisection to the last bit;
    /// the ends themselves are never evaluated, where the statistic can be 0/0).
    private static func bisect(from: Double, to: Double, below: (Double) -> Bool) -> Double {
        var (low, high) = (from, to)
        for _ in 0..<200 {
            let middle = (low + high) / 2
            guard middle > low && middle < high else { break }
            if below(middle) { low = middle } else { high = middle }
        }
        return (low + high) / 2
    }
}
