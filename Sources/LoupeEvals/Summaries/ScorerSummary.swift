/// A scorer's aggregate over a run, with the interval that fits its data: for a pass rate,
/// Wilson over the items, or over the effective number of trials when items ran several
/// epochs ("wilson-clustered"); for a mean, Student-t, or clustered Student-t (epochs averaged
/// within each item first) with epochs, cut to [0, 1] when the scores lie there; a percentile
/// bootstrap beside each.
package struct ScorerSummary: Hashable, Sendable, Codable {
    package struct PassAt: Hashable, Sendable, Codable {
        package var k: Int
        package var passAt: Double
        package var passHat: Double
    }

    package var scorer: String
    /// Every scored row has pass/fail: the headline is a pass rate (a thresholded score like
    /// token F1 ≥ 0.5 included), not the mean of the raw values.
    package var binary: Bool
    /// "pass rate" or "mean": what the headline figure is, as every view names it.
    package var statistic: String { binary ? "pass rate" : "mean" }
    package var interval: Interval
    package var bootstrap: Interval
    package var items: Int
    package var rows: Int
    /// pass@k and pass^k for k = 1…epochs (binary scorers with more than one epoch).
    package var passAtK: [PassAt]
    /// When items state a confidence (binary scorers).
    package var calibration: Calibration?
}
