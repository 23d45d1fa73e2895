import ArgumentParser
import Foundation
import LoupeBase
import LoupeEvals
import LoupeKit
import LoupeStore
import LoupeTUI

extension EvalCommand {
    struct Calibrate: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Is the judge right? A run's scorer against people's labels on the same answers.",
            discussion: """
                Agreement (accuracy, Cohen's kappa with its 95% interval, the confusion matrix) of the scorer \
                with the majority of the people who labelled, with each of them, and between them \
                (Krippendorff's alpha over all); the answers where judge and people disagree; and the pass \
                rate corrected for the judge's bias by prediction-powered inference (PPI++), beside the \
                judge alone and the people alone. The judge passes an answer when its score passed (or is \
                at least 0.5 for a scorer without a threshold); people pass it by the rubric's criterion.
                """)

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The run (loupe eval list).") var run: Int64
        @Option(help: "The review queue holding the labels.") var labels: String
        @Option(help: "The scorer to calibrate (default: the suite's first).") var scorer: String?
        @Option(help: "The rubric criterion (default: its first pass/fail one).") var criterion: String?
        @Option(help: "Disagreements listed at most.") var rows = 10
        @Flag(help: "Print JSON.") var json = false

        func run(in context: CommandContext) throws {
            let service = ReviewService(workspace: try context.workspace(access: .read))
            let report = try ReviewCommand.plainly {
                try service.calibrate(run: run, queue: labels, scorer: scorer, criterion: criterion)
            }
            if json { return context.print(Self.json(report).prettyJSON) }
            for line in Self.lines(report, rows: rows) { context.print(line) }
        }

        static func lines(_ report: ReviewService.JudgeCalibration, rows: Int) -> [String] {
            var lines = [
                "run \(report.run) · scorer \(UntrustedText.sanitized(report.scorer)) against queue "
                    + "\(UntrustedText.sanitized(report.queue)) · criterion \(UntrustedText.sanitized(report.criterion))",
                "\(Formatting.count(report.answers, "answer")), \(report.labelled) labelled by "
                    + Formatting.count(report.annotators.count, "person", "people")
                    + (report.annotators.isEmpty
                        ? "" : " (" + report.annotators.map(UntrustedText.sanitized).joined(separator: ", ") + ")")
                    + (report.ties > 0 ? ", \(Formatting.count(report.ties, "tie")) between people left out" : ""),
            ]
            guard let versus = report.judgeVersusPeople else {
                lines.append("no answer of the run has a label on \(report.criterion) yet")
                return lines
            }
            lines.append("agreement                 n  accuracy   kappa   95% interval")
            func row(_ name: String, _ agreement: RaterAgreement) -> String {
                let kappa = agreement.kappa
                return TextWidth.truncate(UntrustedText.sanitized(name), toColumns: 22).padded(to: 22)
                    + String(agreement.n).leftPadded(to: 5)
                    + String(format: "  %7.3f", agreement.accuracy)
                    + (kappa.isNaN
                        ? "       —   (one verdict only)"
                        : String(
                            format: "  %6.3f   [%+.3f, %+.3f]", kappa, max(-1, agreement.kappaInterval.lower),
                            min(1, agreement.kappaInterval.upper)))
            }
            lines.append(row("judge vs people", versus.agreement))
            for other in report.judgeVersusAnnotators where report.annotators.count > 1 {
                lines.append(row("judge vs " + other.reference, other.agreement))
            }
            if let people = report.peopleVersusPeople { lines.append(row(people.reference, people.agreement)) }
            if let alpha = report.alpha {
                lines.append(
                    String(
                        format: "Krippendorff's alpha (nominal, %d annotators): %.3f", report.annotators.count, alpha))
            }
            let confusion = versus.agreement
            lines.append("confusion (rows people, columns judge):")
            lines.append(
                "              "
                    + confusion.categories.map { ("judge " + $0).leftPadded(to: 11) }.joined(separator: " "))
            for (i, category) in confusion.categories.enumerated() {
                lines.append(
                    ("people " + category).padded(to: 14)
                        + confusion.confusion[i].map { String($0).leftPadded(to: 11) }.joined(separator: " "))
            }
            if report.perCriterion.count > 1 {
                lines.append(
                    "per criterion: "
                        + report.perCriterion.map { entry in
                            UntrustedText.sanitized(entry.reference) + " "
                                + (entry.agreement.kappa.isNaN
                                    ? "κ —" : String(format: "κ %.3f", entry.agreement.kappa))
                                + String(format: " (acc %.3f, n %d)", entry.agreement.accuracy, entry.agreement.n)
                        }.joined(separator: " · "))
            }
            if let ppi = report.passRate {
                lines.append("pass rate                          estimate   95% interval      width")
                func rate(_ name: String, _ interval: Interval) -> String {
                    name.padded(to: 34)
                        + (interval.estimate.isNaN
                            ? "   —"
                            : String(
                                format: "%7.3f   [%.3f, %.3f]   %.3f", interval.estimate, interval.lower,
                                interval.upper, interval.upper - interval.lower))
                }
                lines.append(rate("judge alone (\(ppi.labeledCount + ppi.unlabeledCount) answers)", ppi.naive))
                lines.append(rate("people alone (\(ppi.labeledCount) labelled)", ppi.classical))
                lines.append(rate(String(format: "prediction-powered (PPI++ λ %.2f)", ppi.lambda), ppi.estimate))
                let ppiWidth = ppi.estimate.upper - ppi.estimate.lower
                let peopleWidth = ppi.classical.upper - ppi.classical.lower
                if ppiWidth.isFinite, peopleWidth.isFinite, peopleWidth > 0 {
                    let change = 1 - ppiWidth / peopleWidth
                    lines.append(
                        change >= 0
                            ? String(
                                format: "the prediction-powered interval is %.0f%% narrower than the people's alone",
                                change * 100)
                            : String(
                                format: "the prediction-powered interval is %.0f%% wider than the people's alone",
                                -change * 100))
                }
                if ppi.unlabeledCount == 0 {
                    lines.append("every answer is labelled: the people's mean is the pass rate, PPI has nothing to add")
                }
            }
            lines.append("disagreements: \(report.disagreements.count)")
            for entry in report.disagreements.prefix(rows) {
                let said = entry.labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(
                    separator: " ")
                lines.append(
                    "  " + TextWidth.truncate(UntrustedText.sanitized(entry.itemID), toColumns: 10).padded(to: 10)
                        + " people \(entry.humanPasses ? "pass" : "fail") · judge \(entry.judgePasses ? "pass" : "fail")"
                        + String(format: " (%.3f)", entry.judgeValue) + "  "
                        + TextWidth.truncate(UntrustedText.sanitized(said), toColumns: 24).padded(to: 24) + "  "
                        + TextWidth.truncate(UntrustedText.sanitized(entry.input), toColumns: 40))
            }
            if report.disagreements.count > rows {
                lines.append("  … \(report.disagreements.count - rows) more (--rows N)")
            }
            return lines
        }

        static func json(_ report: ReviewService.JudgeCalibration) -> JSONValue {
            func number(_ value: Double) -> JSONValue { value.isFinite ? .number(value) : .null }
            func agreement(_ versus: ReviewService.JudgeCalibration.Versus) -> JSONValue {
                let a = versus.agreement
                return .object([
                    "reference": .string(versus.reference), "n": .number(Double(a.n)), "accuracy": number(a.accuracy),
                    "kappa": number(a.kappa), "kappa_lower": number(a.kappaInterval.lower),
                    "kappa_upper": number(a.kappaInterval.upper),
                    "categories": .array(a.categories.map(JSONValue.string)),
                    "confusion": .array(a.confusion.map { .array($0.map { .number(Double($0)) }) }),
                ])
            }
            func interval(_ i: Interval) -> JSONValue {
                .object([
                    "estimate": number(i.estimate), "lower": number(i.lower), "upper": number(i.upper),
                    "method": .string(i.method), "n": .number(Double(i.n)),
                ])
            }
            var out: [String: JSONValue] = [
                "run": .number(Double(report.run)), "queue": .string(report.queue), "scorer": .string(report.scorer),
                "criterion": .string(report.criterion), "answers": .number(Double(report.answers)),
                "labelled": .number(Double(report.labelled)), "ties": .number(Double(report.ties)),
                "annotators": .array(report.annotators.map(JSONValue.string)),
                "judge_vs_annotators": .array(report.judgeVersusAnnotators.map(agreement)),
                "per_criterion": .array(report.perCriterion.map(agreement)),
                "disagreements": .array(
                    report.disagreements.map { entry in
                        .object([
                            "item": .string(entry.key), "item_id": .string(entry.itemID),
                            "epoch": .number(Double(entry.epoch)), "people_pass": .bool(entry.humanPasses),
                            "judge_pass": .bool(entry.judgePasses), "judge_value": number(entry.judgeValue),
                        ])
                    }),
            ]
            if let versus = report.judgeVersusPeople { out["judge_vs_people"] = agreement(versus) }
            if let people = report.peopleVersusPeople { out["people_vs_people"] = agreement(people) }
            if let alpha = report.alpha { out["krippendorff_alpha"] = number(alpha) }
            if let ppi = report.passRate {
                out["pass_rate"] = .object([
                    "ppi": interval(ppi.estimate), "lambda": number(ppi.lambda), "ppi_untuned": interval(ppi.untuned),
                    "people": interval(ppi.classical), "judge": interval(ppi.naive),
                ])
            }
            return .object(out)
        }
    }
}
