/// A scorer's aggregate over a run, with the interval that fits its data: Wilson for a pass rate
/// over single trials, clustered Student-t (epochs averaged within each item first) when items
/// have several trials, Student-t for a continuous mean; a percentile bootstrap beside each.
package struct ScorerSummary: Hashable, Sendable, Codable {
    package struct PassAt: Hashable, Sendable, Codable {
        package var k: Int
        package var passAt: Double
        package var passHat: Double
    }

    package var scorer: String
    /// Every scored row has pass/fail: the headline is a pass rate.
    package var binary: Bool
    package var interval: Interval
    package var bootstrap: Interval
    package var items: Int
    package var rows: Int
    /// pass@k and pass^k for k = 1…epochs (binary scorers with more than one epoch).
    package var passAtK: [PassAt]
    /// When items state a confidence (binary scorers).
    package var calibration: Calibration?
}
