import Foundation

/// The few distributions eval statistics need: Student's t (intervals, paired tests, the
/// minimum detectable effect), the standard normal (Wilson) and the binomial (McNemar's exact
/// test). Written from the definitions; checked against scipy in `scripts/reference/`.
package enum Distributions {
    /// Φ⁻¹(p), the standard normal quantile (Acklam's rational approximation refined by one
    /// Halley step on erfc; |error| < 1e-12 for p in (0, 1)).
    package static func normalQuantile(_ p: Double) -> Double {
        precondition(p > 0 && p < 1, "a quantile needs 0 < p < 1")
        let a = [
            -3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02,
            -3.066479806614716e+01, 2.506628277459239e+00,
        ]
        let b = [
            -5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01,
            -1.328068155288572e+01,
        ]
        let c = [
            -7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00,
            4.374664141464968e+00, 2.938163982698783e+00,
        ]
        let d = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00]
        let low = 0.02425
        var x: Double
        if p < low {
            let q = (-2 * log(p)).squareRoot()
            x =
                (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
                / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
        } else if p <= 1 - low {
            let q = p - 0.5
            let r = q * q
            x =
                (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q
                / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
        } else {
            let q = (-2 * log(1 - p)).squareRoot()
            x =
                -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
                / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
        }
        let e = 0.5 * erfc(-x / 2.0.squareRoot()) - p
        let u = e * (2 * Double.pi).squareRoot() * exp(x * x / 2)
        x -= u / (1 + x * u / 2)
        return x
    }

    /// P(T ≤ t) for Student's t with `degrees` degrees of freedom.
    package static func studentTCDF(_ t: Double, degrees: Double) -> Double {
        precondition(degrees > 0, "Student's t needs positive degrees of freedom")
        let x = degrees / (degrees + t * t)
        let tail = 0.5 * regularizedIncompleteBeta(x, a: degrees / 2, b: 0.5)
        return t >= 0 ? 1 - tail : tail
    }

    /// The t quantile: the t with P(T ≤ t) = p (bisection on the CDF to 1e-13).
    package static func studentTQuantile(_ p: Double, degrees: Double) -> Double {
        precondition(p > 0 && p < 1, "a quantile needs 0 < p < 1")
        if p == 0.5 { return 0 }
        if p < 0.5 { return -studentTQuantile(1 - p, degrees: degrees) }
        var low = 0.0
        var high = 1.0
        while studentTCDF(high, degrees: degrees) < p { high *= 2 }
        for _ in 0..<200 {
            let middle = (low + high) / 2
            if studentTCDF(middle, degrees: degrees) < p { low = middle } else { high = middle }
            if high - low < 1e-13 * Swift.max(1, high) { break }
        }
        return (low + high) / 2
    }

    /// P(X ≤ k) for X ~ Binomial(n, p), summed in log space so large n stays exact.
    package static func binomialCDF(_ k: Int, n: Int, p: Double) -> Double {
        guard k >= 0 else { return 0 }
        guard k < n else { return 1 }
        var total = 0.0
        for i in 0...k {
            let log = logChoose(n, i) + Double(i) * Foundation.log(p) + Double(n - i) * Foundation.log1p(-p)
            total += exp(log)
        }
        return Swift.min(1, total)
    }

    /// log C(n, k).
    package static func logChoose(_ n: Int, _ k: Int) -> Double {
        lgamma(Double(n + 1)) - lgamma(Double(k + 1)) - lgamma(Double(n - k + 1))
    }

    /// I_x(a, b), the regularized incomplete beta function (continued fraction, modified Lentz).
    package static func regularizedIncompleteBeta(_ x: Double, a: Double, b: Double) -> Double {
        if x <= 0 { return 0 }
        if x >= 1 { return 1 }
        let front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x))
        // The fraction converges fast for x < (a + 1) / (a + b + 2); use the symmetry otherwise.
        if x > (a + 1) / (a + b + 2) { return 1 - regularizedIncompleteBeta(1 - x, a: b, b: a) }
        let tiny = 1e-300
        var c = 1.0
        var d = 1 - (a + b) * x / (a + 1)
        if abs(d) < tiny { d = tiny }
        d = 1 / d
        var fraction = d
        for m in 1...300 {
            let m = Double(m)
            let even = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
            d = 1 + even * d
            if abs(d) < tiny { d = tiny }
            c = 1 + even / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            fraction *= d * c
            let odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
            d = 1 + odd * d
            if abs(d) < tiny { d = tiny }
            c = 1 + odd / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            let delta = d * c
            fraction *= delta
            if abs(delta - 1) < 1e-15 { break }
        }
        return front * fraction / a
    }
}
