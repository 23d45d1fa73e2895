import Foundation

/// A mean estimated from a few human labels and many judge predictions: prediction-powered
/// inference (Angelopoulos et al. 2023, "Prediction-powered inference") with PPI++ power
/// tuning (Angelopoulos, Duchi and Zrnic 2023, "PPI++: Efficient Prediction-Powered Inference").
///
/// The judge's mean over every item is corrected by its average error on the labelled items,
/// so the estimate is unbiased however wrong the judge is, and the interval is narrower than
/// labels alone give when the judge tracks the labels. Formulas as `ppi_python` (0.2) computes
/// them: normal intervals, population (ddof 0) standard deviations.
package struct PredictionPoweredMean: Hashable, Sendable, Codable {
    /// PPI++: λ · mean(judge on unlabelled) + mean(label − λ · judge on labelled), with λ tuned
    /// to minimise the variance; `ppi_mean_ci(Y, Yhat, Yhat_unlabeled, lam=None)`. Method "ppi++",
    /// n = labelled + unlabelled items.
    package var estimate: Interval
    /// The tuned λ, clipped to [0, 1]: 0 ignores the judge (the classical mean), 1 is plain PPI.
    /// Where the judge's predictions are all equal λ is 0 (ppi_python divides 0 by 0 there).
    package var lambda: Double
    /// Classic PPI, λ = 1: method "ppi", n = labelled + unlabelled items.
    package var untuned: Interval
    /// The labels alone: their mean ± z · sd / √n (`classical_mean_ci`), method "normal".
    package var classical: Interval
    /// The judge alone: the mean of its predictions on every item, labelled and unlabelled,
    /// ± z · sd / √(n + N), method "normal". What trusting the judge reports: narrow, and off
    /// by however far the judge is off (the bias PPI removes). For contrast only.
    package var naive: Interval
    package var labeledCount: Int
    package var unlabeledCount: Int

    /// - Parameters:
    ///   - labels: the human labels (0/1 for pass/fail, or scores) on the labelled items.
    ///   - predictionsOnLabeled: the judge's predictions on those items, in the same order.
    ///   - predictionsOnUnlabeled: the judge's predictions on the items without a label.
    ///   - confidence: the intervals' coverage.
    ///
    /// With no labelled or no unlabelled items the prediction-powered intervals are NaN.
    package init(
        labels: [Double], predictionsOnLabeled: [Double], predictionsOnUnlabeled: [Double], confidence: Double = 0.95
    ) {
        precondition(labels.count == predictionsOnLabeled.count, "one prediction per labelled item")
        let n = labels.count
        let bigN = predictionsOnUnlabeled.count
        labeledCount = n
        unlabeledCount = bigN
        let z = Distributions.normalQuantile(1 - (1 - confidence) / 2)
        classical = Self.normalInterval(labels, z: z)
        naive = Self.normalInterval(predictionsOnLabeled + predictionsOnUnlabeled, z: z)
        guard n > 0, bigN > 0 else {
            lambda = .nan
            estimate = Interval(estimate: .nan, lower: .nan, upper: .nan, method: "ppi++", n: n + bigN)
            untuned = Interval(estimate: .nan, lower: .nan, upper: .nan, method: "ppi", n: n + bigN)
            return
        }

        // λ = Cov(Y, Ŷ) / ((1 + n/N) · Var(Ŷ over all items)), the covariance over the labelled
        // items with divisor n and the variance with divisor n + N − 1, as _calc_lam_glm has them.
        let labelMean = Self.mean(labels)
        let predictionMean = Self.mean(predictionsOnLabeled)
        let covariance =
            zip(labels, predictionsOnLabeled).reduce(0) { $0 + ($1.0 - labelMean) * ($1.1 - predictionMean) }
            / Double(n)
        let all = predictionsOnLabeled + predictionsOnUnlabeled
        let allMean = Self.mean(all)
        let variance = all.reduce(0) { $0 + ($1 - allMean) * ($1 - allMean) } / Double(all.count - 1)
        let denominator = (1 + Double(n) / Double(bigN)) * variance
        lambda = denominator > 0 ? Swift.min(1, Swift.max(0, covariance / denominator)) : 0

        untuned = Self.ppi(
            labels, predictionsOnLabeled, predictionsOnUnlabeled, lambda: 1, z: z, method: "ppi")
        estimate = Self.ppi(
            labels, predictionsOnLabeled, predictionsOnUnlabeled, lambda: lambda, z: z, method: "ppi++")
    }

    /// The PPI estimate for one λ with its normal interval: the variances of the imputed mean
    /// (λ · judge on unlabelled, over N) and of the rectifier (label − λ · judge, over n) add.
    private static func ppi(
        _ labels: [Double], _ predictions: [Double], _ unlabeled: [Double], lambda: Double, z: Double, method: String
    ) -> Interval {
        let imputed = unlabeled.map { lambda * $0 }
        let rectifier = zip(labels, predictions).map { $0 - lambda * $1 }
        let centre = mean(imputed) + mean(rectifier)
        let standardError =
            (populationVariance(imputed) / Double(unlabeled.count)
            + populationVariance(rectifier) / Double(labels.count)).squareRoot()
        return Interval(
            estimate: centre, lower: centre - z * standardError, upper: centre + z * standardError, method: method,
            n: labels.count + unlabeled.count)
    }

    /// Mean ± z · sd / √n with the population sd: ppi_python's `classical_mean_ci`.
    private static func normalInterval(_ values: [Double], z: Double) -> Interval {
        guard !values.isEmpty else { return Interval(estimate: .nan, lower: .nan, upper: .nan, method: "normal", n: 0) }
        let centre = mean(values)
        let half = z * (populationVariance(values) / Double(values.count)).squareRoot()
        return Interval(estimate: centre, lower: centre - half, upper: centre + half, method: "normal", n: values.count)
    }

    private static func mean(_ values: [Double]) -> Double { values.reduce(0, +) / Double(values.count) }

    private static func populationVariance(_ values: [Double]) -> Double {
        let centre = mean(values)
        return values.reduce(0) { $0 + ($1 - centre) * ($1 - centre) } / Double(values.count)
    }
}
