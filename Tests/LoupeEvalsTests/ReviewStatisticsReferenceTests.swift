import Foundation
import LoupeBase
import Testing

@testable import LoupeEvals

/// The review loop's statistics against scikit-learn, statsmodels, krippendorff, ppi_python,
/// choix and scipy on the fixed datasets of `scripts/reference/review_stats.py` (its output is
/// the fixture). Closed forms agree to 1e-9 relative; iterative ones (Bradley–Terry, root
/// finding) to the tolerance stated at each test.
@Suite struct ReviewStatisticsReferenceTests {
    static let reference: JSONValue = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/reference-review-stats.json")
        return try! JSONValue.parse(Data(contentsOf: url))
    }()

    static func numbers(_ value: JSONValue?) -> [Double] { value?.array?.compactMap(\.number) ?? [] }
    static func strings(_ value: JSONValue?) -> [String] { value?.array?.compactMap(\.string) ?? [] }
    static func outcomes(_ value: JSONValue?) -> [(a: String, b: String, score: Double)] {
        (value?.array ?? []).map { (a: $0["a"]!.string!, b: $0["b"]!.string!, score: $0["score"]!.number!) }
    }

    /// |ours − theirs| ≤ max(relative · |theirs|, absolute).
    static func close(_ ours: Double, _ theirs: Double?, relative: Double = 1e-9, absolute: Double = 0) -> Bool {
        guard let theirs else { return false }
        return abs(ours - theirs) <= Swift.max(relative * abs(theirs), absolute)
    }

    // MARK: Cohen's kappa

    @Test func kappaMatchesScikitLearnAndItsStandardErrorMatchesStatsmodels() {
        for row in Self.reference["kappa"]!.array! {
            let name = row["name"]!.string!
            let agreement = RaterAgreement(reference: Self.strings(row["reference"]), rated: Self.strings(row["rated"]))
            #expect(agreement.categories == Self.strings(row["categories"]), "\(name)")
            #expect(agreement.confusion == row["confusion"]!.array!.map { Self.numbers($0).map { Int($0) } }, "\(name)")
            #expect(agreement.n == Int(row["n"]!.number!))
            #expect(Self.close(agreement.accuracy, row["accuracy"]!.number), "\(name)")
            #expect(Self.close(agreement.expectedAgreement, row["expected_agreement"]!.number), "\(name)")
            #expect(Self.close(agreement.kappa, row["kappa"]!.number), "\(name)")
            #expect(Self.close(agreement.kappaStandardError, row["std_kappa"]!.number), "\(name)")
            // statsmodels' bounds, cut to kappa's range [−1, 1] (sklearn-example's upper is 1.219).
            #expect(Self.close(agreement.kappaInterval.lower, row["lower"]!.number.map { max(-1, $0) }), "\(name)")
            #expect(Self.close(agreement.kappaInterval.upper, row["upper"]!.number.map { min(1, $0) }), "\(name)")
            #expect(
                agreement.kappaInterval.estimate == agreement.kappa && agreement.kappaInterval.method == "asymptotic")
        }
    }

    @Test func theConfusionMatrixHasTheReferenceInRowsAndTheRatedRaterInColumns() {
        let agreement = RaterAgreement(reference: ["ok", "ok", "bad", "ok"], rated: ["ok", "bad", "bad", "good"])
        #expect(agreement.categories == ["bad", "good", "ok"])
        // The human said "ok" three times; the judge answered "bad", "good" and "ok" to those.
        #expect(agreement.confusion == [[1, 0, 0], [0, 0, 0], [1, 1, 1]])
        #expect(agreement.accuracy == 0.5)
    }

    @Test func perfectAgreementIsKappaOneAndCompleteDisagreementIsMinusOne() {
        let perfect = RaterAgreement(reference: ["a", "b", "b", "c"], rated: ["a", "b", "b", "c"])
        #expect(perfect.kappa == 1 && perfect.accuracy == 1)
        // Its standard error is 0: an asymptotic interval would be the point [1, 1], a certainty
        // four items cannot give, so there is none.
        #expect(perfect.kappaStandardError == 0)
        #expect(perfect.kappaInterval.lower.isNaN && perfect.kappaInterval.upper.isNaN)
        // Two raters who always swap two equally common labels: p₀ = 0, pₑ = ½.
        let swapped = RaterAgreement(reference: ["a", "b", "a", "b"], rated: ["b", "a", "b", "a"])
        #expect(abs(swapped.kappa - -1) < 1e-15)
        #expect(swapped.expectedAgreement == 0.5)
    }

    @Test func kappaIsUndefinedWhenBothRatersUseOneLabelOrThereAreNoItems() {
        let single = RaterAgreement(reference: ["pass", "pass"], rated: ["pass", "pass"])
        #expect(single.accuracy == 1 && single.expectedAgreement == 1)
        #expect(single.kappa.isNaN && single.kappaInterval.lower.isNaN)
        let empty = RaterAgreement(reference: [], rated: [])
        #expect(empty.n == 0 && empty.kappa.isNaN && empty.accuracy.isNaN && empty.categories.isEmpty)
        // One rater constant, the other not: chance agreement is below 1 and kappa is 0 (scikit-learn: 0.0).
        let constantJudge = RaterAgreement(reference: ["a", "b", "a"], rated: ["a", "a", "a"])
        #expect(abs(constantJudge.kappa) < 1e-15)
    }

    // MARK: Krippendorff's alpha

    @Test func krippendorffsAlphaMatchesTheKrippendorffPackage() {
        var compared = 0
        for row in Self.reference["krippendorff"]!.array! {
            let data = row["data"]!.array!.map { $0.array!.map(\.number) }
            for (level, expected) in row["alpha"]!.object! {
                let alpha = Krippendorff.alpha(data, level: Krippendorff.Level(rawValue: level)!)
                #expect(Self.close(alpha, expected.number), "\(row["name"]!.string!) \(level)")
                compared += 1
            }
        }
        #expect(compared == 10)
    }

    @Test func krippendorffsAlphaIsOneForAgreementAndUndefinedWithoutVariation() {
        let agreeing: [[Double?]] = [[1, 2, 3, nil], [1, 2, 3, 4], [nil, 2, 3, 4]]
        for level in Krippendorff.Level.allCases { #expect(Krippendorff.alpha(agreeing, level: level) == 1) }
        #expect(Krippendorff.alpha([[1, 1, 1], [1, 1, nil]], level: .nominal).isNaN)
        // No unit rated twice: nothing to compare.
        #expect(Krippendorff.alpha([[1, nil], [nil, 2]], level: .interval).isNaN)
        // A NaN rating is missing, like nil.
        let withNaN: [[Double?]] = [[1, 2, 3, .nan], [1, 2, 3, 4], [nil, 2, 3, 4]]
        #expect(Krippendorff.alpha(withNaN, level: .interval) == 1)
    }

    // MARK: Prediction-powered inference

    @Test func predictionPoweredMeansMatchPPIPython() {
        for row in Self.reference["ppi"]!.array! {
            let name = row["name"]!.string!
            let ppi = PredictionPoweredMean(
                labels: Self.numbers(row["labels"]), predictionsOnLabeled: Self.numbers(row["predictions_labeled"]),
                predictionsOnUnlabeled: Self.numbers(row["predictions_unlabeled"]))
            #expect(Self.close(ppi.lambda, row["lambda"]!.number, absolute: 1e-15), "\(name)")
            let expectations: [(Interval, String)] = [
                (ppi.estimate, ""), (ppi.untuned, "untuned_"), (ppi.classical, "classical_"), (ppi.naive, "naive_"),
            ]
            for (interval, prefix) in expectations {
                let estimateKey = prefix.isEmpty ? "estimate" : prefix + "estimate"
                #expect(Self.close(interval.estimate, row[estimateKey]!.number), "\(name) \(estimateKey)")
                #expect(Self.close(interval.lower, row[prefix + "lower"]!.number), "\(name) \(prefix)lower")
                #expect(Self.close(interval.upper, row[prefix + "upper"]!.number), "\(name) \(prefix)upper")
            }
            #expect(ppi.labeledCount == Int(row["n"]!.number!) && ppi.unlabeledCount == Int(row["N"]!.number!))
            #expect(ppi.estimate.n == ppi.labeledCount + ppi.unlabeledCount && ppi.classical.n == ppi.labeledCount)
        }
    }

    @Test func aGoodJudgeNarrowsTheIntervalAndAConstantOneIsIgnored() {
        let row = Self.reference["ppi"]!.array!.first { $0["name"]!.string! == "continuous" }!
        let ppi = PredictionPoweredMean(
            labels: Self.numbers(row["labels"]), predictionsOnLabeled: Self.numbers(row["predictions_labeled"]),
            predictionsOnUnlabeled: Self.numbers(row["predictions_unlabeled"]))
        #expect(ppi.estimate.halfWidth < ppi.classical.halfWidth * 0.8)
        // The judge is biased upward by about 0.06; the naive interval inherits it, PPI does not.
        #expect(ppi.naive.estimate - ppi.estimate.estimate > 0.03)

        let labels: [Double] = [1, 0, 1, 1, 0, 1]
        let constant = PredictionPoweredMean(
            labels: labels, predictionsOnLabeled: [Double](repeating: 1, count: 6),
            predictionsOnUnlabeled: [Double](repeating: 1, count: 50))
        #expect(constant.lambda == 0)
        #expect(constant.estimate.estimate == constant.classical.estimate)
        #expect(abs(constant.estimate.halfWidth - constant.classical.halfWidth) < 1e-15)
        // λ = 1 on a constant judge is the labels' mean too: mean(Y − 1) + 1.
        #expect(abs(constant.untuned.estimate - 4.0 / 6) < 1e-15)

        let nothingUnlabeled = PredictionPoweredMean(
            labels: labels, predictionsOnLabeled: labels, predictionsOnUnlabeled: [])
        #expect(nothingUnlabeled.estimate.estimate.isNaN && !nothingUnlabeled.classical.estimate.isNaN)
    }

    // MARK: Bradley–Terry and win rates

    @Test func bradleyTerryMatchesChoixsMaximumLikelihood() {
        let row = Self.reference["bradley_terry"]!
        let systems = Self.strings(row["systems"])
        let model = BradleyTerry(systems: systems, outcomes: Self.outcomes(row["games"]))
        #expect(model.converged && model.games == 60)
        #expect(abs(model.strengths.reduce(0, +)) < 1e-12)
        // Both are iterative (choix's I-LSR and MM stopped at 1e-13 in L1): 1e-9 absolute on log-strengths.
        for (ours, theirs) in zip(model.strengths, Self.numbers(row["strengths"])) {
            #expect(abs(ours - theirs) < 1e-9)
        }
        for (ours, theirs) in zip(model.strengths, Self.numbers(row["strengths_mm"])) {
            #expect(abs(ours - theirs) < 1e-9)
        }
    }

    @Test func winRatesCountTiesAsHalfAndMatchStatsmodelsWilson() {
        let row = Self.reference["bradley_terry"]!
        let table = WinRate.table(systems: Self.strings(row["systems"]), outcomes: Self.outcomes(row["games"]))
        let expected = row["win_rates"]!.array!
        #expect(table.count == expected.count)
        for (ours, theirs) in zip(table, expected) {
            #expect(ours.system == theirs["a"]!.string! && ours.opponent == theirs["b"]!.string!)
            #expect(ours.wins == Int(theirs["wins"]!.number!) && ours.losses == Int(theirs["losses"]!.number!))
            #expect(ours.ties == Int(theirs["ties"]!.number!))
            #expect(Self.close(ours.rate.estimate, theirs["rate"]!.number))
            #expect(Self.close(ours.rate.lower, theirs["lower"]!.number), "\(ours.system) over \(ours.opponent)")
            #expect(Self.close(ours.rate.upper, theirs["upper"]!.number), "\(ours.system) over \(ours.opponent)")
        }
    }

    @Test func twoSystemsStrengthsAreTheLogOddsOfTheirScores() {
        // A won 3, lost 1, tied 2: A scored 4 of 6, so s_A − s_B = log(4 / 2).
        let games: [(a: String, b: String, score: Double)] = [
            ("A", "B", 1), ("B", "A", 0), ("A", "B", 1), ("A", "B", 0), ("A", "B", 0.5), ("B", "A", 0.5),
        ]
        let model = BradleyTerry(systems: ["A", "B"], outcomes: games)
        #expect(model.converged)
        #expect(abs(model.strength(of: "A")! - log(2) / 2) < 1e-12)
        #expect(abs(model.strength(of: "B")! + log(2) / 2) < 1e-12)
        #expect(abs(model.probability("A", beats: "B") - 2.0 / 3) < 1e-12)
        let rate = WinRate(of: "B", over: "A", outcomes: games)
        #expect(rate.wins == 1 && rate.losses == 3 && rate.ties == 2 && rate.rate.estimate == 2.0 / 6)
    }

    @Test func anUnbeatenSystemHasNoFiniteStrength() {
        // Nobody won or tied against A: its maximum-likelihood strength is +∞.
        let games: [(a: String, b: String, score: Double)] = [("A", "B", 1), ("B", "C", 0.5), ("C", "A", 0)]
        let model = BradleyTerry(systems: ["A", "B", "C"], outcomes: games)
        #expect(!model.converged && model.strengths.allSatisfy(\.isNaN))
        // A tie counts as scoring: once B ties A, every group has scored against the rest.
        let connected = BradleyTerry(systems: ["A", "B", "C"], outcomes: games + [("A", "B", 0.5)])
        #expect(connected.converged && connected.strengths.allSatisfy(\.isFinite))
        #expect(WinRate(of: "A", over: "C", outcomes: games).rate.upper == 1)
    }

    // MARK: Power planning

    @Test func theNoncentralTMatchesScipy() {
        for row in Self.reference["noncentral_t_cdf"]!.array! {
            let p = PowerPlan.noncentralTCDF(
                row["t"]!.number!, degrees: row["df"]!.number!, noncentrality: row["nc"]!.number!)
            #expect(Self.close(p, row["p"]!.number, absolute: 1e-14), "\(row)")
        }
    }

    @Test func pairedTTestPowerMatchesStatsmodels() {
        for row in Self.reference["power"]!.array! {
            let power = PowerPlan.power(
                difference: row["effect_size"]!.number!, sdOfDifferences: 1, n: Int(row["n"]!.number!),
                alpha: row["alpha"]!.number!)
            #expect(Self.close(power, row["power"]!.number), "\(row)")
        }
    }

    @Test func itemsNeededIsStatsmodelsSolutionRoundedUp() {
        for row in Self.reference["items_needed"]!.array! {
            let (difference, sd) = (row["difference"]!.number!, row["sd"]!.number!)
            let (alpha, power) = (row["alpha"]!.number!, row["power"]!.number!)
            let n = PowerPlan.itemsNeeded(difference: difference, sdOfDifferences: sd, alpha: alpha, power: power)
            #expect(n == Int(row["items_needed"]!.number!), "\(row)")
            #expect(n == Int(row["nobs_solved"]!.number!.rounded(.up)))
            // The smallest such n: one item fewer falls short.
            #expect(PowerPlan.power(difference: difference, sdOfDifferences: sd, n: n, alpha: alpha) >= power)
            #expect(PowerPlan.power(difference: difference, sdOfDifferences: sd, n: n - 1, alpha: alpha) < power)
        }
    }

    @Test func theMinimumDetectableEffectInvertsThePowerFunction() {
        for row in Self.reference["minimum_detectable_effect"]!.array! {
            let (n, sd) = (Int(row["n"]!.number!), row["sd"]!.number!)
            let (alpha, power) = (row["alpha"]!.number!, row["power"]!.number!)
            let effect = PowerPlan.minimumDetectableEffect(n: n, sdOfDifferences: sd, alpha: alpha, power: power)
            // Against the root solved to 1e-15 on statsmodels' power function.
            #expect(Self.close(effect, row["effect_tight"]!.number), "\(row)")
            // statsmodels' own solve_power stops its brentq at xtol 1e-5 on the effect size.
            #expect(abs(effect - row["effect_solved"]!.number!) <= 1e-5 * sd, "\(row)")
            #expect(
                PowerPlan.itemsNeeded(difference: effect * (1 + 1e-9), sdOfDifferences: sd, alpha: alpha, power: power)
                    == n)
        }
        // The shifted-t approximation PairedComparison reports is close to the exact figure.
        let exact = PowerPlan.minimumDetectableEffect(n: 50, sdOfDifferences: 0.25)
        let approximate = PairedComparison.minimumDetectableEffect(sd: 0.25, n: 50)
        #expect(abs(approximate - exact) / exact < 0.03 && approximate != exact)
    }

    @Test func pairedPassFailSpreadAndEpochDesignEffectMatchTheirDefinitions() {
        for row in Self.reference["paired_binary_sd"]!.array! {
            let sd = PowerPlan.sdOfPairedDifferences(
                passRateA: row["pass_rate_a"]!.number!, passRateB: row["pass_rate_b"]!.number!,
                correlation: row["correlation"]!.number!)
            #expect(Self.close(sd, row["sd"]!.number), "\(row)")
        }
        for row in Self.reference["epoch_adjusted_sd"]!.array! {
            let sd = PowerPlan.epochAdjustedSD(
                sd: row["sd"]!.number!, epochs: Int(row["epochs"]!.number!),
                intraItemCorrelation: row["rho"]!.number!)
            #expect(Self.close(sd, row["adjusted"]!.number), "\(row)")
        }
        // pA = 0.9, pB = 0.5 cannot correlate 0.9: both pass at most half the time, so B − A is
        // −1 w.p. 0.4 and 0 otherwise, variance 0.4 − 0.4².
        let cut = PowerPlan.sdOfPairedDifferences(passRateA: 0.9, passRateB: 0.5, correlation: 0.9)
        #expect(abs(cut - 0.24.squareRoot()) < 1e-15)
        #expect(PowerPlan.sdOfPairedDifferences(passRateA: 0.7, passRateB: 0.7, correlation: 1) == 0)
    }
}
