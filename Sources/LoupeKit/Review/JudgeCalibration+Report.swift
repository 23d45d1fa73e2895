import Foundation
import LoupeBase
import LoupeEvals

extension ReviewService.JudgeCalibration {
    /// The report as `eval calibrate` prints it and the Review panel shows it: ``summaryLines()``
    /// then ``disagreementLines(rows:)``. Every name and text from the workspace is sanitised.
    package func reportLines(rows: Int) -> [String] {
        let summary = summaryLines()
        // Without a label on the criterion there is nothing to disagree about.
        guard judgeVersusPeople != nil else { return summary }
        return summary + disagreementLines(rows: rows)
    }

    /// What was compared, the agreement table (judge against people and each annotator, people
    /// against each other, Krippendorff's alpha), the confusion matrix, agreement per criterion
    /// and the pass rate (judge alone, people alone, PPI++).
    package func summaryLines() -> [String] {
        var lines = [
            "run \(run) · scorer \(UntrustedText.sanitized(scorer)) against queue "
                + "\(UntrustedText.sanitized(queue)) · criterion \(UntrustedText.sanitized(criterion))",
            "\(Self.count(answers, "answer")), \(labelled) labelled by "
                + Self.count(annotators.count, "person", "people")
                + (annotators.isEmpty
                    ? "" : " (" + annotators.map(UntrustedText.sanitized).joined(separator: ", ") + ")")
                + (ties > 0 ? ", \(Self.count(ties, "tie")) between people left out" : ""),
        ]
        guard let versus = judgeVersusPeople else {
            lines.append("no answer of the run has a label on \(UntrustedText.sanitized(criterion)) yet")
            return lines
        }
        lines.append("agreement                 n  accuracy   kappa   95% interval")
        func row(_ name: String, _ agreement: RaterAgreement) -> String {
            let kappa = agreement.kappa
            return Self.padded(TextWidth.truncate(UntrustedText.sanitized(name), toColumns: 22), to: 22)
                + Self.leftPadded(String(agreement.n), to: 5)
                + String(format: "  %7.3f", agreement.accuracy)
                + (kappa.isNaN
                    ? "       —   (one verdict only)"
                    : agreement.kappaInterval.lower.isNaN
                        ? String(format: "  %6.3f   none (std. error 0)", kappa)
                        : String(
                            format: "  %6.3f   [%+.3f, %+.3f]", kappa, agreement.kappaInterval.lower,
                            agreement.kappaInterval.upper))
        }
        lines.append(row("judge vs people", versus.agreement))
        for other in judgeVersusAnnotators where annotators.count > 1 {
            lines.append(row("judge vs " + other.reference, other.agreement))
        }
        if let people = peopleVersusPeople { lines.append(row(people.reference, people.agreement)) }
        if let alpha {
            lines.append(
                String(format: "Krippendorff's alpha (nominal, %d annotators): %.3f", annotators.count, alpha))
        }
        let confusion = versus.agreement
        lines.append("confusion (rows people, columns judge):")
        lines.append(
            "              "
                + confusion.categories.map { Self.leftPadded("judge " + $0, to: 11) }.joined(separator: " "))
        for (i, category) in confusion.categories.enumerated() {
            lines.append(
                Self.padded("people " + category, to: 14)
                    + confusion.confusion[i].map { Self.leftPadded(String($0), to: 11) }.joined(separator: " "))
        }
        if perCriterion.count > 1 {
            lines.append(
                "per criterion: "
                    + perCriterion.map { entry in
                        UntrustedText.sanitized(entry.reference) + " "
                            + (entry.agreement.kappa.isNaN ? "κ —" : String(format: "κ %.3f", entry.agreement.kappa))
                            + String(format: " (acc %.3f, n %d)", entry.agreement.accuracy, entry.agreement.n)
                    }.joined(separator: " · "))
        }
        if let ppi = passRate {
            lines.append("pass rate                          estimate   95% interval      width   method")
            func rate(_ name: String, _ interval: Interval) -> String {
                Self.padded(name, to: 34)
                    + (interval.estimate.isNaN
                        ? "   —"
                        : String(
                            format: "%7.3f   [%.3f, %.3f]   %.3f   ", interval.estimate, interval.lower,
                            interval.upper, interval.upper - interval.lower) + interval.method)
            }
            let none = Interval(estimate: .nan, lower: .nan, upper: .nan, method: "", n: 0)
            let judge = judgeAlone ?? none
            let people = peopleAlone ?? none
            let powered = predictionPowered ?? none
            lines.append(rate("judge alone (\(ppi.labeledCount + ppi.unlabeledCount) answers)", judge))
            lines.append(rate("people alone (\(ppi.labeledCount) labelled)", people))
            lines.append(rate(String(format: "prediction-powered (PPI++ λ %.2f)", ppi.lambda), powered))
            // Like for like: PPI++'s normal interval against the labels' own normal interval
            // (ppi_python's classical_mean_ci), not against the Wilson interval shown above.
            let ppiWidth = ppi.estimate.upper - ppi.estimate.lower
            let classicalWidth = ppi.classical.upper - ppi.classical.lower
            if ppiWidth.isFinite, classicalWidth.isFinite, classicalWidth > 0 {
                let change = 1 - ppiWidth / classicalWidth
                lines.append(
                    String(
                        format: "the prediction-powered interval is %.0f%% %@ than the labels' alone by the same "
                            + "(normal) method", abs(change) * 100, change >= 0 ? "narrower" : "wider"))
            }
            if predictionPowered == nil, !ppi.estimate.estimate.isNaN {
                lines.append(
                    "prediction-powered: no interval: the \(ppi.labeledCount) labels and the judge's errors on them "
                        + "do not vary (label more answers)")
            }
            if ppi.unlabeledCount == 0 {
                lines.append("every answer is labelled: the people's mean is the pass rate, PPI has nothing to add")
            }
        }
        return lines
    }

    /// `disagreements: N`, then at most `rows` of them: item, the people's and the judge's
    /// verdicts, each annotator's label, the input.
    package func disagreementLines(rows: Int) -> [String] {
        var lines = ["disagreements: \(disagreements.count)"]
        for entry in disagreements.prefix(rows) {
            let said = entry.labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            lines.append(
                "  " + Self.padded(TextWidth.truncate(UntrustedText.sanitized(entry.itemID), toColumns: 10), to: 10)
                    + " people \(entry.humanPasses ? "pass" : "fail") · judge \(entry.judgePasses ? "pass" : "fail")"
                    + String(format: " (%.3f)", entry.judgeValue) + "  "
                    + Self.padded(TextWidth.truncate(UntrustedText.sanitized(said), toColumns: 24), to: 24) + "  "
                    + TextWidth.truncate(UntrustedText.sanitized(entry.input), toColumns: 40))
        }
        if disagreements.count > rows {
            lines.append("  … \(disagreements.count - rows) more (--rows N)")
        }
        return lines
    }

    /// `1 answer`, `3 answers`.
    private static func count(_ n: Int, _ singular: String, _ plural: String? = nil) -> String {
        "\(n) \(n == 1 ? singular : plural ?? singular + "s")"
    }

    /// `text` cut (with an ellipsis) or padded with spaces to `width` characters.
    private static func padded(_ text: String, to width: Int) -> String {
        text.count >= width
            ? String(text.prefix(width - 1)) + "…" : text + String(repeating: " ", count: width - text.count)
    }

    /// `text` with spaces before it up to `width` characters.
    private static func leftPadded(_ text: String, to width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }
}
