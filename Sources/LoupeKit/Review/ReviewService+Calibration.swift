import Foundation
import LoupeBase
import LoupeEvals
import LoupeStore

extension ReviewService {
    /// How far a run's scorer (an LLM judge, or any scorer) can be trusted, measured against the
    /// human labels of a queue on the same answers (LangSmith's "align evaluator", MLflow's judge
    /// alignment): agreement with each person and with their majority, agreement between people,
    /// the disagreements, and the pass rate corrected for the judge's bias by prediction-powered
    /// inference.
    package struct JudgeCalibration: Sendable {
        package struct Versus: Sendable {
            /// An annotator's name, or "people" for the majority of the people who labelled.
            package var reference: String
            package var agreement: RaterAgreement
        }

        /// An answer where the judge and the people's majority disagree.
        package struct Disagreement: Hashable, Sendable {
            package var key: String
            package var itemID: String
            package var epoch: Int
            package var humanPasses: Bool
            package var judgePasses: Bool
            package var judgeValue: Double
            /// Each annotator's value on the criterion.
            package var labels: [String: String]
            package var input: String
            package var output: String
        }

        package var run: Int64
        package var queue: String
        package var scorer: String
        package var criterion: String
        /// Answers of the run, and how many of them people labelled on the criterion.
        package var answers: Int
        package var labelled: Int
        /// Items the people split evenly on: left out of the majority.
        package var ties: Int
        /// The judge against the people's majority, then against each annotator.
        package var judgeVersusPeople: Versus?
        package var judgeVersusAnnotators: [Versus]
        /// The first two annotators against each other on the items both labelled.
        package var peopleVersusPeople: Versus?
        /// Krippendorff's alpha (nominal) over every annotator, when two or more labelled.
        package var alpha: Double?
        package var annotators: [String]
        /// Every pass/fail criterion of the rubric against the judge (people's majority).
        package var perCriterion: [Versus]
        package var disagreements: [Disagreement]
        /// The pass rate: PPI++ from the labelled answers and the judge on the rest, beside the
        /// judge alone and the people alone.
        package var passRate: PredictionPoweredMean?
        /// The judge's pass rate over every answer with its interval, computed as the Evals panel
        /// computes the run's (Wilson over items, or over the effective trials with epochs), so the
        /// two views of one run show one interval.
        package var judgeAlone: Interval?
        /// The people's pass rate on the labelled answers, with Wilson's interval (a normal
        /// interval on 3 labels reaches below 0).
        package var peopleAlone: Interval?
        /// The PPI++ estimate with its interval cut to [0, 1]: a pass rate cannot leave it. Nil
        /// when its normal interval has no width: every label and every correction of the judge
        /// on the labelled answers alike (two labels that agree), which claims a certainty a
        /// sample cannot give (the people's Wilson interval on the same labels is wide).
        package var predictionPowered: Interval? {
            guard let passRate, !passRate.estimate.estimate.isNaN, passRate.estimate.upper > passRate.estimate.lower
            else { return nil }
            return passRate.estimate.clamped(to: 0...1)
        }
    }

    /// Calibrates `scorer` of `run` against the queue's labels on `criterion` (default: the
    /// rubric's first criterion that says pass or fail). A judge passes an answer when its score
    /// says passed, or, for a scorer without a threshold, when its value is at least 0.5.
    package func calibrate(run: Int64, queue name: String, scorer: String?, criterion: String?) throws
        -> JudgeCalibration
    {
        let queue = try self.queue(name)
        guard let record = try evals.evalRun(run) else { throw ReviewError("no eval run \(run) (loupe eval list)") }
        let evals = EvalService(evals: evals)
        let rows = try evals.detail(run).rows
        let scorers = try EvalService.scorers(record)
        let judge = scorer ?? scorers.first ?? ""
        guard scorers.contains(judge) || rows.contains(where: { $0.score(judge) != nil }) else {
            throw ReviewError("run \(run) has no scorer \(judge) (it has \(scorers.joined(separator: ", ")))")
        }
        let chosen: Rubric.Criterion
        if let criterion {
            guard let named = queue.rubric.criterion(criterion) else {
                throw ReviewError("rubric \(queue.rubric.name) has no criterion \(criterion)")
            }
            guard named.passFails else {
                throw ReviewError(
                    "criterion \(criterion) says nothing about passing: mark options pass: true, or give pass_at")
            }
            chosen = named
        } else {
            guard let first = queue.rubric.passFailCriterion else {
                throw ReviewError(
                    "rubric \(queue.rubric.name) has no criterion that says pass or fail (pass: true on an option, "
                        + "pass_at on a number, or a boolean)")
            }
            chosen = first
        }
        let items = try reviews.reviewItems(queue: queue.id)
        let labels = try reviews.reviewLabels(queue: queue.id)
        let keyByAnswer = Dictionary(
            items.compactMap { item -> (EvalItemKey, String)? in
                guard item.runID == run, let id = item.evalItemID, let epoch = item.epoch else { return nil }
                return (EvalItemKey(itemID: id, epoch: epoch), item.itemKey)
            }, uniquingKeysWith: { a, _ in a })
        guard !keyByAnswer.isEmpty else {
            let runs = Set(items.compactMap(\.runID)).sorted().map(String.init).joined(separator: ", ")
            throw ReviewError(
                "queue \(queue.name) holds no answer of run \(run)"
                    + (runs.isEmpty ? "" : " (its answers are run \(runs)'s)"))
        }
        func judgePasses(_ row: EvalService.ResultRow) -> (passes: Bool, value: Double)? {
            guard let score = row.score(judge) else { return nil }
            return (score.passed ?? (score.value >= 0.5), score.value)
        }
        /// Each key's verdicts per annotator on a criterion.
        func verdicts(_ criterion: Rubric.Criterion) -> [String: [String: Bool]] {
            var out: [String: [String: Bool]] = [:]
            for label in labels where label.criterion == criterion.name {
                guard case .success(let value) = criterion.value(label.value), let pass = criterion.passes(value)
                else { continue }
                out[label.itemKey, default: [:]][label.annotator] = pass
            }
            return out
        }
        func majority(_ byAnnotator: [String: Bool]) -> Bool? {
            let passes = byAnnotator.values.filter { $0 }.count
            let fails = byAnnotator.count - passes
            return passes == fails ? nil : passes > fails
        }
        func word(_ pass: Bool) -> String { pass ? "pass" : "fail" }

        let byItem = verdicts(chosen)
        let annotators = Set(byItem.values.flatMap(\.keys)).sorted()
        var people: [String] = []
        var judged: [String] = []
        var perAnnotator: [String: (people: [String], judge: [String])] = [:]
        var labelsOnLabelled: [Double] = []
        var judgeOnLabelled: [Double] = []
        var judgeOnOthers: [Double] = []
        var disagreements: [JudgeCalibration.Disagreement] = []
        var ties = 0
        var labelled = 0
        for row in rows {
            guard let verdict = judgePasses(row) else { continue }
            guard let key = keyByAnswer[row.key], let byAnnotator = byItem[key], !byAnnotator.isEmpty else {
                judgeOnOthers.append(verdict.passes ? 1 : 0)
                continue
            }
            labelled += 1
            for (annotator, pass) in byAnnotator {
                perAnnotator[annotator, default: ([], [])].people.append(word(pass))
                perAnnotator[annotator, default: ([], [])].judge.append(word(verdict.passes))
            }
            guard let human = majority(byAnnotator) else {
                // People split evenly: no label to correct the judge with, so the answer counts
                // with the unlabelled ones.
                ties += 1
                judgeOnOthers.append(verdict.passes ? 1 : 0)
                continue
            }
            people.append(word(human))
            judged.append(word(verdict.passes))
            labelsOnLabelled.append(human ? 1 : 0)
            judgeOnLabelled.append(verdict.passes ? 1 : 0)
            if human != verdict.passes {
                disagreements.append(
                    JudgeCalibration.Disagreement(
                        key: key, itemID: row.result.itemID, epoch: row.result.epoch, humanPasses: human,
                        judgePasses: verdict.passes, judgeValue: verdict.value,
                        labels: labels.filter { $0.itemKey == key && $0.criterion == chosen.name }.reduce(into: [:]) {
                            $0[$1.annotator] = $1.value
                        }, input: row.result.input, output: row.shownOutput))
            }
        }

        var calibration = JudgeCalibration(
            run: run, queue: queue.name, scorer: judge, criterion: chosen.name, answers: rows.count,
            labelled: labelled, ties: ties, judgeVersusPeople: nil, judgeVersusAnnotators: [],
            peopleVersusPeople: nil, alpha: nil, annotators: annotators, perCriterion: [],
            disagreements: disagreements, passRate: nil, judgeAlone: nil, peopleAlone: nil)
        if !people.isEmpty {
            calibration.judgeVersusPeople = .init(
                reference: "people", agreement: RaterAgreement(reference: people, rated: judged))
            calibration.passRate = PredictionPoweredMean(
                labels: labelsOnLabelled, predictionsOnLabeled: judgeOnLabelled, predictionsOnUnlabeled: judgeOnOthers)
            calibration.peopleAlone = .wilson(
                successes: labelsOnLabelled.filter { $0 == 1 }.count, n: labelsOnLabelled.count)
            let judgeRows = rows.compactMap { row -> ScoredRow? in
                guard let verdict = judgePasses(row) else { return nil }
                return ScoredRow(
                    itemID: row.result.itemID, epoch: row.result.epoch, values: [judge: verdict.value],
                    passed: [judge: verdict.passes])
            }
            calibration.judgeAlone = RunSummary.summary(judge, rows: judgeRows)?.interval
        }
        calibration.judgeVersusAnnotators = annotators.compactMap { name in
            guard let pair = perAnnotator[name], !pair.people.isEmpty else { return nil }
            return .init(reference: name, agreement: RaterAgreement(reference: pair.people, rated: pair.judge))
        }
        if annotators.count >= 2 {
            let (first, second) = (annotators[0], annotators[1])
            var a: [String] = []
            var b: [String] = []
            for byAnnotator in byItem.values {
                if let x = byAnnotator[first], let y = byAnnotator[second] {
                    a.append(word(x))
                    b.append(word(y))
                }
            }
            if !a.isEmpty {
                calibration.peopleVersusPeople = .init(
                    reference: "\(first) vs \(second)", agreement: RaterAgreement(reference: a, rated: b))
            }
            let units = byItem.keys.sorted()
            let data = annotators.map { name in units.map { unit in byItem[unit]?[name].map { $0 ? 1.0 : 0.0 } } }
            let alpha = Krippendorff.alpha(data, level: .nominal)
            calibration.alpha = alpha.isNaN ? nil : alpha
        }
        let answers = Dictionary(rows.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        for criterion in queue.rubric.criteria where criterion.passFails {
            let verdictsOn = verdicts(criterion)
            var humanWords: [String] = []
            var judgeWords: [String] = []
            for (answerKey, itemKey) in keyByAnswer {
                guard let row = answers[answerKey], let verdict = judgePasses(row),
                    let byAnnotator = verdictsOn[itemKey], let human = majority(byAnnotator)
                else { continue }
                humanWords.append(word(human))
                judgeWords.append(word(verdict.passes))
            }
            if !humanWords.isEmpty {
                calibration.perCriterion.append(
                    .init(
                        reference: criterion.name, agreement: RaterAgreement(reference: humanWords, rated: judgeWords)))
            }
        }
        return calibration
    }
}
