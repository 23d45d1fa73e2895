/// Two runs compared scorer by scorer on the items both answered (epochs averaged within an item),
/// with Benjamini-Hochberg adjusted p-values across the scorers.
package struct RunComparison: Hashable, Sendable, Codable {
    package struct Metric: Hashable, Sendable, Codable {
        package var scorer: String
        package var paired: PairedComparison
        /// The p-value adjusted for the number of scorers compared (BH).
        package var adjustedPValue: Double
        package var significant: Bool { adjustedPValue < 0.05 }
    }

    package var metrics: [Metric]

    package init(a: [ScoredRow], b: [ScoredRow], scorers: [String]) {
        var compared: [(String, PairedComparison)] = []
        for scorer in scorers {
            func values(_ rows: [ScoredRow]) -> [String: [Double]] {
                var out: [String: [Double]] = [:]
                for row in rows {
                    if let passed = row.passed[scorer] {
                        out[row.itemID, default: []].append(passed ? 1 : 0)
                    } else if let value = row.values[scorer] {
                        out[row.itemID, default: []].append(value)
                    }
                }
                return out
            }
            let left = values(a)
            let right = values(b)
            guard !left.isEmpty, !right.isEmpty, Set(left.keys).intersection(right.keys).count > 0 else { continue }
            compared.append((scorer, PairedComparison(a: left, b: right)))
        }
        let adjusted = MultipleComparisons.benjaminiHochberg(compared.map(\.1.pValue))
        metrics = zip(compared, adjusted).map { Metric(scorer: $0.0.0, paired: $0.0.1, adjustedPValue: $0.1) }
    }
}
