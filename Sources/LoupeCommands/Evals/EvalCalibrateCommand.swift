import ArgumentParser
import Foundation
import LoupeBase
import LoupeEvals
import LoupeKit
import LoupeStore

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
            let service = try ReviewCommand.service(context, access: .read)
            let report = try ReviewCommand.plainly {
                try service.calibrate(run: run, queue: labels, scorer: scorer, criterion: criterion)
            }
            if json { return context.print(Self.json(report).prettyJSON) }
            for line in report.reportLines(rows: rows) { context.print(line) }
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
                    "ppi": report.predictionPowered.map(interval) ?? .null, "lambda": number(ppi.lambda),
                    "ppi_untuned": interval(ppi.untuned.clamped(to: 0...1)),
                    "people": interval(report.peopleAlone ?? ppi.classical),
                    "judge": interval(report.judgeAlone ?? ppi.naive),
                ])
            }
            return .object(out)
        }
    }
}
