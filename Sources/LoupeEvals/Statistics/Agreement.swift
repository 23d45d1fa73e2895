import Foundation

/// How well two raters agree on categorical labels for the same items: in the review loop, a
/// human (the reference) and an LLM judge (rated). Cohen's kappa corrects the raw agreement for
/// what two raters with these label frequencies would reach by chance.
///
/// Degenerate inputs: with no items every figure is NaN. When both raters used one and the same
/// category on every item, chance agreement is 1 and kappa is 0/0: NaN, as scikit-learn's
/// `cohen_kappa_score` returns by default (accuracy is still 1).
package struct RaterAgreement: Hashable, Sendable, Codable {
    /// Every label either rater used, sorted: the order of `confusion`'s rows and columns.
    package var categories: [String]
    /// `confusion[i][j]`: items the reference labelled `categories[i]` and the rated rater
    /// `categories[j]` (rows reference, columns rated; the diagonal is agreement).
    package var confusion: [[Int]]
    package var n: Int
    /// Observed agreement: the fraction of items with the same label, p₀.
    package var accuracy: Double
    /// Agreement expected by chance from the two raters' label frequencies, pₑ = Σᵢ rowᵢ · columnᵢ / n².
    package var expectedAgreement: Double
    /// Cohen's (unweighted) kappa, (p₀ − pₑ) / (1 − pₑ): 1 is perfect agreement, 0 chance level.
    package var kappa: Double
    /// The asymptotic standard error of kappa (Fleiss, Cohen and Everitt 1969), as statsmodels'
    /// `cohens_kappa(table).std_kappa` computes it.
    package var kappaStandardError: Double
    /// Kappa ± z · its standard error, method "asymptotic", cut to [−1, 1] (statsmodels' is not
    /// cut: past ±1 it claims values kappa cannot take). Where the standard error is 0 (every
    /// label agrees, as three agreeing items do) the asymptotic interval says nothing: it would be
    /// the point itself, a certainty no sample gives, so its bounds are NaN and views say
    /// "no interval" instead of [1, 1].
    package var kappaInterval: Interval

    /// - Parameters:
    ///   - reference: the reference rater's label for each item (the human).
    ///   - rated: the other rater's label for the same items, in the same order (the judge).
    ///   - confidence: the interval's coverage.
    package init(reference: [String], rated: [String], confidence: Double = 0.95) {
        precondition(reference.count == rated.count, "both raters must label the same items")
        categories = Set(reference).union(rated).sorted()
        let index = Dictionary(uniqueKeysWithValues: categories.enumerated().map { ($1, $0) })
        let k = categories.count
        var confusion = [[Int]](repeating: [Int](repeating: 0, count: k), count: k)
        for (r, j) in zip(reference, rated) { confusion[index[r]!][index[j]!] += 1 }
        self.confusion = confusion
        n = reference.count
        let z = Distributions.normalQuantile(1 - (1 - confidence) / 2)
        guard n > 0 else {
            (accuracy, expectedAgreement, self.kappa, kappaStandardError) = (.nan, .nan, .nan, .nan)
            kappaInterval = Interval(estimate: .nan, lower: .nan, upper: .nan, method: "asymptotic", n: 0)
            return
        }

        let total = Double(n)
        let rowCounts = confusion.map { $0.reduce(0, +) }
        let columnCounts = (0..<k).map { j in confusion.reduce(0) { $0 + $1[j] } }
        let agreeing = (0..<k).reduce(0) { $0 + confusion[$1][$1] }
        // In integers, so "chance agreement is exactly 1" is decided without rounding.
        let chanceProducts = (0..<k).reduce(0) { $0 + rowCounts[$1] * columnCounts[$1] }
        accuracy = Double(agreeing) / total
        expectedAgreement = Double(chanceProducts) / (total * total)
        guard chanceProducts != n * n else {
            (self.kappa, kappaStandardError) = (.nan, .nan)
            kappaInterval = Interval(estimate: .nan, lower: .nan, upper: .nan, method: "asymptotic", n: n)
            return
        }
        let pe = expectedAgreement
        let kappa = (accuracy - pe) / (1 - pe)
        self.kappa = kappa

        // statsmodels' "Simple" kappa variance, term for term.
        let rows = rowCounts.map { Double($0) / total }
        let columns = columnCounts.map { Double($0) / total }
        var termA = 0.0
        var termB = 0.0
        for i in 0..<k {
            let pii = Double(confusion[i][i]) / total
            let factor = 1 - (rows[i] + columns[i]) * (1 - kappa)
            termA += pii * factor * factor
            for j in 0..<k where j != i {
                let marginSum = columns[i] + rows[j]
                termB += Double(confusion[i][j]) / total * marginSum * marginSum
            }
        }
        termB *= (1 - kappa) * (1 - kappa)
        let termC = (kappa - pe * (1 - kappa)) * (kappa - pe * (1 - kappa))
        let variance = (termA + termB - termC) / ((1 - pe) * (1 - pe)) / total
        // At perfect agreement the variance is 0 up to rounding, which can land just below it.
        kappaStandardError = Swift.max(0, variance).squareRoot()
        kappaInterval =
            kappaStandardError > 0
            ? Interval(
                estimate: kappa, lower: kappa - z * kappaStandardError, upper: kappa + z * kappaStandardError,
                method: "asymptotic", n: n
            ).clamped(to: -1...1)
            : Interval(estimate: kappa, lower: .nan, upper: .nan, method: "asymptotic", n: n)
    }
}

/// Krippendorff's alpha: agreement among any number of raters, tolerating missing ratings, at
/// a chosen level of measurement. 1 − observed disagreement / disagreement expected by chance,
/// over the coincidences of values within units (Krippendorff 2011, "Computing Krippendorff's
/// Alpha-Reliability"); matches the `krippendorff` package's `alpha(reliability_data:...)`.
package enum Krippendorff {
    /// How far apart two values are: the level of measurement of the ratings.
    package enum Level: String, Hashable, Sendable, Codable, CaseIterable {
        /// Labels: any two different values disagree equally.
        case nominal
        /// Ranks: the distance between two values grows with how many pairable values lie between them.
        case ordinal
        /// Scores: squared difference.
        case interval
        /// Scores with a true zero: squared difference relative to the sum.
        case ratio
    }

    /// Alpha for `data[rater][unit]`, nil (or NaN) where a rater did not rate a unit.
    ///
    /// Units with fewer than two ratings carry no pairs and are ignored. The value domain is
    /// the sorted set of values present. Where the package raises (fewer than two distinct
    /// values, or no unit rated twice) this returns NaN. O(units · values²).
    package static func alpha(_ data: [[Double?]], level: Level) -> Double {
        guard let unitCount = data.first?.count else { return .nan }
        precondition(data.allSatisfy { $0.count == unitCount }, "every rater needs one entry per unit")
        func present(_ value: Double?) -> Double? {
            guard let value, !value.isNaN else { return nil }
            return value
        }
        let values = Set(data.joined().compactMap(present)).sorted()
        let v = values.count
        guard v > 1 else { return .nan }
        let index = Dictionary(uniqueKeysWithValues: values.enumerated().map { ($1, $0) })

        // The coincidence matrix: each unit's ordered pairs of values from different raters,
        // weighted 1 / (ratings in the unit − 1).
        var coincidences = [Double](repeating: 0, count: v * v)
        var counts = [Int](repeating: 0, count: v)
        for unit in 0..<unitCount {
            for c in counts.indices { counts[c] = 0 }
            var ratings = 0
            for rater in data.indices {
                if let value = present(data[rater][unit]) {
                    counts[index[value]!] += 1
                    ratings += 1
                }
            }
            guard ratings > 1 else { continue }
            let weight = 1 / Double(ratings - 1)
            for a in 0..<v where counts[a] > 0 {
                for b in 0..<v where counts[b] > 0 {
                    let pairs = counts[a] * counts[b] - (a == b ? counts[a] : 0)
                    coincidences[a * v + b] += Double(pairs) * weight
                }
            }
        }
        let pairable = (0..<v).map { a in (0..<v).reduce(0.0) { $0 + coincidences[a * v + $1] } }
        let total = pairable.reduce(0, +)
        guard total > 0 else { return .nan }

        // Prefix sums of the pairable counts, for the ordinal distance.
        var cumulative = [0.0]
        for count in pairable { cumulative.append(cumulative.last! + count) }
        func distance(_ a: Int, _ b: Int) -> Double {
            switch level {
            case .nominal:
                return a == b ? 0 : 1
            case .ordinal:
                let (low, high) = (Swift.min(a, b), Swift.max(a, b))
                let between = cumulative[high + 1] - cumulative[low] - (pairable[low] + pairable[high]) / 2
                return between * between
            case .interval:
                return (values[a] - values[b]) * (values[a] - values[b])
            case .ratio:
                let sum = values[a] + values[b]
                return sum == 0 ? 0 : (values[a] - values[b]) * (values[a] - values[b]) / (sum * sum)
            }
        }
        var observed = 0.0
        var expected = 0.0
        for a in 0..<v {
            for b in 0..<v {
                let d = distance(a, b)
                observed += coincidences[a * v + b] * d
                let chancePairs = pairable[a] * pairable[b] - (a == b ? pairable[a] : 0)
                expected += chancePairs / (total - 1) * d
            }
        }
        return 1 - observed / expected
    }
}
