import Foundation

/// Planning a paired eval (two systems scored on the same items): how many items a difference
/// needs, what difference a given number of items can see, and the spread of per-item
/// differences to plan with.
///
/// Power is the two-sided paired t-test's, exactly, from the noncentral t distribution: the
/// same function statsmodels' `TTestPower` solves, so `itemsNeeded` is
/// `ceil(TTestPower().solve_power(effect_size: difference / sd, alpha, power))`.
package enum PowerPlan {
    /// The smallest number of items at which a two-sided paired t-test at level `alpha` detects
    /// a true mean difference `difference` with probability at least `power`, when per-item
    /// differences have standard deviation `sdOfDifferences`. At least 2 (a t-test needs one
    /// degree of freedom). The sign of `difference` does not matter.
    package static func itemsNeeded(
        difference: Double, sdOfDifferences: Double, alpha: Double = 0.05, power: Double = 0.8
    ) -> Int {
        precondition(difference != 0 && difference.isFinite, "no number of items detects a zero difference")
        precondition(sdOfDifferences > 0, "the spread of differences must be positive")
        precondition(alpha > 0 && alpha < 1 && power > alpha && power < 1, "need 0 < alpha < power < 1")
        let effect = abs(difference) / sdOfDifferences
        func enough(_ n: Int) -> Bool { Self.power(effectSize: effect, n: Double(n), alpha: alpha) >= power }
        // Power rises with n: double to bracket the answer, then bisect on whole numbers.
        var low = 1
        var high = 2
        while !enough(high) {
            low = high
            high *= 2
        }
        while high - low > 1 {
            let middle = low + (high - low) / 2
            if enough(middle) { high = middle } else { low = middle }
        }
        return high
    }

    /// The smallest true mean difference (in the scores' units) that `n` items detect with
    /// probability `power` in a two-sided paired t-test at level `alpha`: the inverse of
    /// `itemsNeeded`, solved on the exact noncentral-t power to about 1e-14 relative.
    /// `PairedComparison`'s figure is the shifted-t approximation of the same quantity.
    package static func minimumDetectableEffect(
        n: Int, sdOfDifferences: Double, alpha: Double = 0.05, power: Double = 0.8
    ) -> Double {
        precondition(n >= 2, "a paired t-test needs at least two items")
        precondition(sdOfDifferences >= 0, "a standard deviation is not negative")
        precondition(alpha > 0 && alpha < 1 && power > alpha && power < 1, "need 0 < alpha < power < 1")
        func powerAt(_ effect: Double) -> Double { Self.power(effectSize: effect, n: Double(n), alpha: alpha) }
        var low = 0.0
        var high = 1.0
        while powerAt(high) < power {
            low = high
            high *= 2
        }
        for _ in 0..<200 {
            let middle = (low + high) / 2
            if powerAt(middle) < power { low = middle } else { high = middle }
            if high - low <= 1e-15 * high { break }
        }
        return (low + high) / 2 * sdOfDifferences
    }

    /// The power of the two-sided paired t-test at level `alpha` with `n` items, when the true
    /// mean difference is `difference` and per-item differences have sd `sdOfDifferences`.
    package static func power(difference: Double, sdOfDifferences: Double, n: Int, alpha: Double = 0.05) -> Double {
        precondition(n >= 2, "a paired t-test needs at least two items")
        precondition(sdOfDifferences > 0, "the spread of differences must be positive")
        return power(effectSize: difference / sdOfDifferences, n: Double(n), alpha: alpha)
    }

    /// The standard deviation of B − A for one item's pass/fail outcomes, A passing with
    /// probability `passRateA` and B with `passRateB`, their outcomes correlated `correlation`
    /// (the phi coefficient; how often both systems pass or fail the same items):
    /// √(pA(1 − pA) + pB(1 − pB) − 2ρ√(pA(1 − pA)pB(1 − pB))).
    ///
    /// Two pass/fail outcomes with different rates cannot reach every correlation in [−1, 1]; a
    /// correlation beyond what they can reach is taken at the nearest reachable one (P(both
    /// pass) cut to [max(0, pA + pB − 1), min(pA, pB)]), so the sd is always that of a real pair.
    package static func sdOfPairedDifferences(passRateA: Double, passRateB: Double, correlation: Double) -> Double {
        precondition((0...1).contains(passRateA) && (0...1).contains(passRateB), "pass rates lie in [0, 1]")
        precondition((-1...1).contains(correlation), "a correlation lies in [-1, 1]")
        let spread = (passRateA * (1 - passRateA) * passRateB * (1 - passRateB)).squareRoot()
        let bothPass = Swift.min(
            Swift.max(passRateA * passRateB + correlation * spread, Swift.max(0, passRateA + passRateB - 1)),
            Swift.min(passRateA, passRateB))
        // D = B − A is −1 (only A passed), +1 (only B passed) or 0.
        let onlyA = passRateA - bothPass
        let onlyB = passRateB - bothPass
        let meanDifference = passRateB - passRateA
        return Swift.max(0, onlyA + onlyB - meanDifference * meanDifference).squareRoot()
    }

    /// The standard deviation of an item's score averaged over `epochs` runs, from the sd of
    /// one run's score and the correlation between runs of the same item: the variance is
    /// scaled by the design effect (1 + (k − 1)ρ) / k. Independent epochs (ρ = 0) divide the
    /// variance by k; identical ones (ρ = 1) leave it as it is.
    package static func epochAdjustedSD(sd: Double, epochs: Int, intraItemCorrelation: Double) -> Double {
        precondition(epochs >= 1, "at least one epoch")
        precondition(sd >= 0, "a standard deviation is not negative")
        let k = Double(epochs)
        let designEffect = (1 + (k - 1) * intraItemCorrelation) / k
        precondition(
            designEffect >= 0 && intraItemCorrelation <= 1, "the correlation is out of range for this many epochs")
        return sd * designEffect.squareRoot()
    }

    /// Power of the two-sided one-sample t-test on n observations for a standardized effect:
    /// P(T > t_crit) + P(T < −t_crit), T noncentral t with n − 1 degrees of freedom and
    /// noncentrality effect · √n (statsmodels' `ttest_power`).
    static func power(effectSize: Double, n: Double, alpha: Double) -> Double {
        let degrees = n - 1
        let critical = Distributions.studentTQuantile(1 - alpha / 2, degrees: degrees)
        let noncentrality = effectSize * n.squareRoot()
        return 1 - noncentralTCDF(critical, degrees: degrees, noncentrality: noncentrality)
            + noncentralTCDF(-critical, degrees: degrees, noncentrality: noncentrality)
    }

    /// P(T ≤ t) for the noncentral t with `degrees` degrees of freedom and noncentrality δ.
    ///
    /// For t ≥ 0 (Lenth 1989, algorithm AS 243): Φ(−δ) + ½ Σⱼ [pⱼ I_x(j + ½, ν/2) + qⱼ I_x(j + 1, ν/2)]
    /// with x = t² / (t² + ν), pⱼ = e^(−δ²/2) (δ²/2)ʲ / j! and qⱼ = δ e^(−δ²/2) (δ²/2)ʲ / (√2 Γ(j + 3/2)).
    /// Unlike AS 243 the sum starts at the Poisson weights' mode and runs both ways until the
    /// weights (pⱼ + |qⱼ|, which bound the terms) drop below 1e-18 of the sum so far, so large δ
    /// neither underflows e^(−δ²/2) nor ends early, and small probabilities keep their digits.
    /// For t < 0, F(t; ν, δ) = 1 − F(−t; ν, −δ): about 1e-16 absolute, so a tiny lower-tail
    /// probability (t < 0 < δ) has few correct digits; power needs absolute accuracy only.
    static func noncentralTCDF(_ t: Double, degrees: Double, noncentrality delta: Double) -> Double {
        precondition(degrees > 0, "the noncentral t needs positive degrees of freedom")
        if t < 0 { return 1 - noncentralTCDF(-t, degrees: degrees, noncentrality: -delta) }
        if delta == 0 { return Distributions.studentTCDF(t, degrees: degrees) }
        let lambda = delta * delta / 2
        let normalTail = 0.5 * erfc(delta / 2.0.squareRoot())
        if t == 0 { return normalTail }
        let x = t * t / (t * t + degrees)
        let b = degrees / 2
        let logLambda = Foundation.log(lambda)
        let logQFactor = Foundation.log(abs(delta) / 2.0.squareRoot())
        let sign: Double = delta < 0 ? -1 : 1
        func term(_ j: Int) -> (value: Double, weight: Double) {
            let jj = Double(j)
            let logPoisson = -lambda + jj * logLambda
            let p = exp(logPoisson - lgamma(jj + 1))
            let q = exp(logPoisson + logQFactor - lgamma(jj + 1.5))
            let value =
                p * Distributions.regularizedIncompleteBeta(x, a: jj + 0.5, b: b)
                + sign * q * Distributions.regularizedIncompleteBeta(x, a: jj + 1, b: b)
            return (value, p + q)
        }
        let mode = Int(lambda.rounded(.down))
        var sum = 0.0
        var j = mode
        while j >= 0 {
            let (value, weight) = term(j)
            sum += value
            if weight <= 1e-18 * abs(sum) { break }
            j -= 1
        }
        j = mode + 1
        while true {
            let (value, weight) = term(j)
            sum += value
            // Past the mode the weights fall geometrically; they underflow to 0 if the sum is 0.
            if weight <= 1e-18 * abs(sum) || weight < 1e-300 { break }
            j += 1
        }
        return Swift.min(1, Swift.max(0, normalTail + sum / 2))
    }
}
