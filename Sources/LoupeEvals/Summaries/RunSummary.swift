package struct RunSummary: Hashable, Sendable, Codable {
    /// The statistics' revision: a run stores its summary when it completes, and a summary stored
    /// by an earlier revision (or before revisions, when the key is missing and decoding fails) is
    /// computed again from the rows, so a corrected interval reaches old runs too. 2: a pass rate
    /// over epochs is Wilson over the effective trials; a count's interval is not cut at 1.
    package static let currentRevision = 2
    package var revision = Self.currentRevision
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

    /// One scorer's statistics over `rows` (nil when no row has its score): what every view of a
    /// run's scorer shows, the Evals panel's and the judge calibration's alike.
    package static func summary(_ scorer: String, rows: [ScoredRow]) -> ScorerSummary? {
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
        if binary {
            // A pass rate: Wilson over the items, or over the effective number of trials when
            // items ran several epochs.
            interval =
                repeated
                ? .clusteredProportion(perItem)
                : .wilson(successes: perItem.filter { $0[0] == 1 }.count, n: perItem.count)
        } else {
            let mean = repeated ? Interval.clustered(perItem) : .studentT(perItem.map { $0[0] })
            interval = domain(of: perItem.joined()).map { mean.clamped(to: $0) } ?? mean
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

    /// The range a scorer's values cannot leave, where the values say so: every scorer Loupe
    /// runs (retrieval metrics, token F1, cosines, judges' grades) scores in [0, 1], and a t
    /// interval over few items can reach past it, so it is cut there. A scorer with a value
    /// outside [0, 1] (an imported count like Inspect's `tool_calls_used`) has no known bound,
    /// and its interval is left whole: cutting a count's interval at 1 would exclude its mean.
    package static func domain(of values: some Sequence<Double>) -> ClosedRange<Double>? {
        values.allSatisfy { $0 >= 0 && $0 <= 1 } ? 0...1 : nil
    }
}
