import Foundation
import LoupeBase

/// An estimate with its confidence interval and how the interval was made.
package struct Interval: Hashable, Sendable, Codable {
    package var estimate: Double
    package var lower: Double
    package var upper: Double
    /// "wilson", "wilson-clustered", "t", "clustered-t", "bootstrap", "normal", "ppi", "ppi++" or
    /// "asymptotic" (kappa).
    package var method: String
    /// The number of independent units behind it (items, not item × epoch rows).
    package var n: Int

    package init(estimate: Double, lower: Double, upper: Double, method: String, n: Int) {
        self.estimate = estimate
        self.lower = lower
        self.upper = upper
        self.method = method
        self.n = n
    }

    /// Half the interval's width (what "± x" shows).
    package var halfWidth: Double { (upper - lower) / 2 }

    /// The interval cut to `range` (for statistics that cannot leave it, like a pass rate or a
    /// score in [0, 1]). The estimate is cut too, so the interval always holds it.
    package func clamped(to range: ClosedRange<Double>) -> Interval {
        var out = self
        out.estimate = estimate.isNaN ? estimate : Swift.min(range.upperBound, Swift.max(range.lowerBound, estimate))
        out.lower = Swift.max(range.lowerBound, lower)
        out.upper = Swift.min(range.upperBound, upper)
        return out
    }

    /// The Wilson score interval for a pass rate: sound at 0/n and n/n, where the normal
    /// approximation collapses to a zero-width interval.
    package static func wilson(successes: Int, n: Int, confidence: Double = 0.95) -> Interval {
        precondition(successes >= 0 && successes <= n, "successes must lie in 0...n")
        guard n > 0 else { return Interval(estimate: .nan, lower: .nan, upper: .nan, method: "wilson", n: 0) }
        return wilson(proportion: Double(successes) / Double(n), effectiveN: Double(n), n: n, confidence: confidence)
    }

    /// Wilson's interval for a proportion `p` observed over `effectiveN` independent trials
    /// (a whole number for plain counts; a design-effect-adjusted one for clustered data, as
    /// statsmodels' `proportion_confint(p · n, n, method="wilson")` takes it). `n` is the count
    /// of independent units reported beside it.
    package static func wilson(
        proportion p: Double, effectiveN nn: Double, n: Int, method: String = "wilson", confidence: Double = 0.95
    ) -> Interval {
        let z = Distributions.normalQuantile(1 - (1 - confidence) / 2)
        let denominator = 1 + z * z / nn
        let centre = (p + z * z / (2 * nn)) / denominator
        let half = z * (p * (1 - p) / nn + z * z / (4 * nn * nn)).squareRoot() / denominator
        // At 0/n and n/n the bound is exactly 0 or 1; the formula leaves rounding dust there.
        return Interval(
            estimate: p, lower: p == 0 ? 0 : Swift.max(0, Swift.min(p, centre - half)),
            upper: p == 1 ? 1 : Swift.min(1, Swift.max(p, centre + half)), method: method, n: n)
    }

    /// A pass rate over items that each ran several epochs: the epochs of an item are not
    /// independent, so Wilson's interval is taken over the effective number of trials, the
    /// rows divided by the design effect (Korn and Graubard 1998, "Confidence intervals for
    /// proportions with small expected number of positive counts estimated from survey data").
    /// The effective n is p(1 − p) / Var(p̂), Var(p̂) from the item means (the clustered
    /// variance), held between the items (every epoch a copy) and the rows (epochs
    /// independent); where p̂ is 0 or 1 or the item means do not vary, it is the rows, as
    /// Korn and Graubard take it. So 10 passes out of 10 answers over 5 items is about
    /// [0.72, 1], never the zero-width [1, 1] a t interval on the item means gives.
    package static func clusteredProportion(_ epochsByItem: [[Double]], confidence: Double = 0.95) -> Interval {
        let items = epochsByItem.filter { !$0.isEmpty }
        let rows = items.reduce(0) { $0 + $1.count }
        guard !items.isEmpty else {
            return Interval(estimate: .nan, lower: .nan, upper: .nan, method: "wilson-clustered", n: 0)
        }
        let means = items.map { $0.reduce(0, +) / Double($0.count) }
        let k = Double(means.count)
        let p = means.reduce(0, +) / k
        var effective = Double(rows)
        if items.count > 1 {
            let variance = means.reduce(0) { $0 + ($1 - p) * ($1 - p) } / (k - 1) / k
            if variance > 0, p > 0, p < 1 {
                effective = Swift.min(Double(rows), Swift.max(k, p * (1 - p) / variance))
            }
        }
        return wilson(
            proportion: p, effectiveN: effective, n: items.count, method: "wilson-clustered", confidence: confidence)
    }

    /// The mean with a Student-t interval on its standard error (n − 1 degrees of freedom).
    /// One value has no spread to measure: its interval is unbounded.
    package static func studentT(_ values: [Double], confidence: Double = 0.95, method: String = "t") -> Interval {
        let n = values.count
        guard n > 0 else { return Interval(estimate: .nan, lower: .nan, upper: .nan, method: method, n: 0) }
        let mean = values.reduce(0, +) / Double(n)
        guard n > 1 else { return Interval(estimate: mean, lower: -.infinity, upper: .infinity, method: method, n: 1) }
        let variance = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(n - 1)
        let t = Distributions.studentTQuantile(1 - (1 - confidence) / 2, degrees: Double(n - 1))
        let half = t * (variance / Double(n)).squareRoot()
        return Interval(estimate: mean, lower: mean - half, upper: mean + half, method: method, n: n)
    }

    /// The mean of repeated trials: epochs are averaged within each item first, then the
    /// interval is Student-t across items, so an item's correlated epochs count once
    /// (clustered by item; Miller 2024, "Adding Error Bars to Evals").
    package static func clustered(_ epochsByItem: [[Double]], confidence: Double = 0.95) -> Interval {
        let means = epochsByItem.filter { !$0.isEmpty }.map { $0.reduce(0, +) / Double($0.count) }
        return studentT(means, confidence: confidence, method: "clustered-t")
    }

    /// A percentile bootstrap interval for any statistic: `resamples` resamples with
    /// replacement drawn from a seeded generator, so the same data always gives the same interval.
    package static func bootstrap(
        _ values: [Double], resamples: Int = 2000, seed: UInt64 = 0x5EED, confidence: Double = 0.95,
        statistic: ([Double]) -> Double = { $0.reduce(0, +) / Double($0.count) }
    ) -> Interval {
        let n = values.count
        guard n > 0 else { return Interval(estimate: .nan, lower: .nan, upper: .nan, method: "bootstrap", n: 0) }
        var generator = SplitMix64(seed: seed)
        var sample = [Double](repeating: 0, count: n)
        var estimates: [Double] = []
        estimates.reserveCapacity(resamples)
        for _ in 0..<resamples {
            for i in 0..<n { sample[i] = values[Int(generator.next() % UInt64(n))] }
            estimates.append(statistic(sample))
        }
        estimates.sort()
        let alpha = (1 - confidence) / 2
        return Interval(
            estimate: statistic(values), lower: percentile(estimates, alpha), upper: percentile(estimates, 1 - alpha),
            method: "bootstrap", n: n)
    }

    /// The q-quantile of sorted values, linear between order statistics (numpy's default).
    package static func percentile(_ sorted: [Double], _ q: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let position = q * Double(sorted.count - 1)
        let below = Int(position.rounded(.down))
        let above = Swift.min(sorted.count - 1, below + 1)
        let fraction = position - Double(below)
        return sorted[below] + (sorted[above] - sorted[below]) * fraction
    }
}
