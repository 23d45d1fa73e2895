import Foundation

/// How well stated confidences match outcomes: expected calibration error over equal-width
/// bins, the Brier score, and the bins themselves for a reliability diagram.
package struct Calibration: Hashable, Sendable, Codable {
    package struct Bin: Hashable, Sendable, Codable {
        package var lower: Double
        package var upper: Double
        package var count: Int
        /// Mean outcome (fraction correct) in the bin; nil when empty.
        package var accuracy: Double?
        /// Mean confidence in the bin; nil when empty.
        package var confidence: Double?
    }

    /// Σ_b (n_b / N) · |accuracy_b − confidence_b|.
    package var expectedCalibrationError: Double
    /// Mean of (confidence − outcome)².
    package var brierScore: Double
    package var bins: [Bin]
    package var n: Int

    /// - Parameters:
    ///   - confidences: each prediction's stated probability of being correct, in [0, 1].
    ///   - outcomes: 1 when it was correct, else 0 (fractions are accepted as soft outcomes).
    ///   - binCount: equal-width bins over [0, 1]; a confidence of exactly 1 falls in the last.
    package init(confidences: [Double], outcomes: [Double], binCount: Int = 10) {
        precondition(confidences.count == outcomes.count, "one outcome per confidence")
        precondition(binCount > 0, "at least one bin")
        let n = confidences.count
        var counts = [Int](repeating: 0, count: binCount)
        var confidenceSums = [Double](repeating: 0, count: binCount)
        var outcomeSums = [Double](repeating: 0, count: binCount)
        var brier = 0.0
        for (confidence, outcome) in zip(confidences, outcomes) {
            let clamped = Swift.min(1, Swift.max(0, confidence))
            let bin = Swift.min(binCount - 1, Int(clamped * Double(binCount)))
            counts[bin] += 1
            confidenceSums[bin] += clamped
            outcomeSums[bin] += outcome
            brier += (clamped - outcome) * (clamped - outcome)
        }
        var ece = 0.0
        bins = (0..<binCount).map { b in
            let count = counts[b]
            let accuracy = count > 0 ? outcomeSums[b] / Double(count) : nil
            let confidence = count > 0 ? confidenceSums[b] / Double(count) : nil
            if let accuracy, let confidence { ece += Double(count) / Double(n) * abs(accuracy - confidence) }
            return Bin(
                lower: Double(b) / Double(binCount), upper: Double(b + 1) / Double(binCount), count: count,
                accuracy: accuracy, confidence: confidence)
        }
        expectedCalibrationError = n > 0 ? ece : .nan
        brierScore = n > 0 ? brier / Double(n) : .nan
        self.n = n
    }

    /// A reliability diagram as text, one line per non-empty bin: the confidence range, n, the
    /// accuracy as a bar (a `│` marks where a calibrated bin would end, at its mean confidence).
    package func diagram(width: Int = 30) -> [String] {
        bins.compactMap { bin -> String? in
            guard bin.count > 0, let accuracy = bin.accuracy, let confidence = bin.confidence else { return nil }
            // Outcomes are scores from a file: a NaN or out-of-range one must not reach `Int(_:)`.
            let shown = Swift.min(1, Swift.max(0, accuracy.isNaN ? 0 : accuracy))
            var bar = Array(repeating: Character(" "), count: width)
            let filled = Int((shown * Double(width)).rounded())
            for index in 0..<Swift.min(width, filled) { bar[index] = "█" }
            let mark = Swift.min(width - 1, Int((confidence * Double(width)).rounded()))
            bar[mark] = filled > mark ? "┃" : "│"
            let range = String(format: "%.1f–%.1f", bin.lower, bin.upper)
            return range + String(format: "  n %4d  acc %.2f  conf %.2f  ", bin.count, accuracy, confidence)
                + String(bar)
        }
    }
}
