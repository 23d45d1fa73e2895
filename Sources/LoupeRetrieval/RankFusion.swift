import Foundation

/// Reciprocal Rank Fusion (Cormack, Clarke & Büttcher 2009): fused(d) = Σ_r w_r / (k + rank_r(d)),
/// ranks 1-based, a run that misses d adds nothing.
package enum RankFusion {
    package static func reciprocalRank(
        _ runs: [[String]], weights: [Double]? = nil, k: Double = 60
    ) -> [(document: String, score: Double)] {
        var fused: [String: Double] = [:]
        var firstSeen: [String: Int] = [:]
        var order = 0
        for (index, run) in runs.enumerated() {
            let weight = weights?[index] ?? 1
            for (rank, document) in run.enumerated() {
                fused[document, default: 0] += weight / (k + Double(rank + 1))
                if firstSeen[document] == nil {
                    firstSeen[document] = order
                    order += 1
                }
            }
        }
        return fused.map { ($0.key, $0.value) }.sorted {
            $0.1 != $1.1 ? $0.1 > $1.1 : firstSeen[$0.0]! < firstSeen[$1.0]!
        }
    }
}
