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
