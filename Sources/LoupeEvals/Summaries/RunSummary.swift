/// One scored answer, as the statistics need it: the item, the epoch, and each scorer's value
/// (and pass/fail where the scorer has one).
package struct ScoredRow: Hashable, Sendable {
    package var itemID: String
    package var epoch: Int
    package var values: [String: Double]
    package var passed: [String: Bool]
    package var confidence: Double?
    package var latencySeconds: Double?
    package var errored: Bool

    package init(
        itemID: String, epoch: Int, values: [String: Double], passed: [String: Bool] = [:], confidence: Double? = nil,
        latencySeconds: Double? = nil, errored: Bool = false
    ) {
        self.itemID = itemID
        self.epoch = epoch
        self.values = values
        self.passed = passed
        self.confidence = confidence
        self.latencySeconds = latencySeconds
        self.errored = errored
    }
}

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

package struct RunSummary: Hashable, Sendable, Codable {
    package var scorers: [ScorerSummary]
    package var items: Int
    package var rows: Int
    package var errors: Int
    package var epochs: Int
    /// Median latency of an answer, with its bootstrap interval.
    package var medianLatency: Interval?

    package init(rows: [ScoredRow], scorers names: [String]) {
        let itemIDs = Set(rows.map(\.itemID))
        items = itemIDs.count
        self.rows = rows.count
        errors = rows.filter(\.errored).count
        epochs = rows.map(\.epoch).max() ?? 0
        let latencies = rows.compactMap(\.latencySeconds)
        medianLatency =
            latencies.isEmpty
            ? nil
            : Interval.bootstrap(latencies) { values in Interval.percentile(values.sorted(), 0.5) }
        scorers = names.compactMap { Self.summary($0, rows: rows) }
    }

    static func summary(_ scorer: String, rows: [ScoredRow]) -> ScorerSummary? {
        let scored = rows.filter { $0.values[scorer] != nil }
        guard !scored.isEmpty else { return nil }
        let binary = scored.allSatisfy { $0.passed[scorer] != nil }
        func value(_ row: ScoredRow) -> Double {
            binary ? (row.passed[scorer]! ? 1 : 0) : row.values[scorer]!
        }
        var byItem: [String: [Double]] = [:]
        var order: [String] = []
        for row in scored {
            if byItem[row.itemID] == nil { order.append(row.itemID) }
            byItem[row.itemID, default: []].append(value(row))
        }
        // In item order, so the bootstrap's draws do not depend on the order answers were stored in.
        let perItem = order.sorted().map { byItem[$0]! }
        let repeated = perItem.contains { $0.count > 1 }
        let interval: Interval
        // Every scorer's value lies in [0, 1]: a t interval over few items can reach past it and is
        // cut there (Wilson's never does).
        if repeated {
            interval = .clustered(perItem).clamped(to: 0...1)
        } else if binary {
            interval = .wilson(successes: perItem.filter { $0[0] == 1 }.count, n: perItem.count)
        } else {
            interval = .studentT(perItem.map { $0[0] }).clamped(to: 0...1)
        }
        let means = perItem.map { $0.reduce(0, +) / Double($0.count) }
        var passAtK: [ScorerSummary.PassAt] = []
        if binary && repeated {
            passAtK = PassAtK.curves(perItem.map { ($0.count, $0.filter { $0 == 1 }.count) }).map {
                ScorerSummary.PassAt(k: $0.k, passAt: $0.passAt, passHat: $0.passHat)
            }
        }
        var calibration: Calibration?
        let confident = scored.filter { $0.confidence != nil }
        if binary && !confident.isEmpty {
            calibration = Calibration(confidences: confident.map { $0.confidence! }, outcomes: confident.map(value))
        }
        return ScorerSummary(
            scorer: scorer, binary: binary, interval: interval, bootstrap: .bootstrap(means), items: perItem.count,
            rows: scored.count, passAtK: passAtK, calibration: calibration)
    }
}

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
