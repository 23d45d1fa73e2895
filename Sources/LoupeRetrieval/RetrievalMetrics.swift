import Foundation

/// IR metrics with trec_eval's semantics (research notes §4), so figures match pytrec_eval/ranx:
/// a run is sorted by score descending with ties broken by document id descending (string
/// order); gains are the qrels' relevance as-is (linear, ≤ 0 counts 0); R counts judged docs
/// with rel ≥ `relevanceLevel`; unjudged docs are non-relevant; means are over every query in
/// the qrels (trec_eval -c), a query with no run scoring 0.
package enum RetrievalMetrics {
    /// One query's figures.
    package struct Scores: Hashable, Sendable, Codable {
        package var ndcg: [Int: Double] = [:]
        package var precision: [Int: Double] = [:]
        package var recall: [Int: Double] = [:]
        /// Average precision over the whole run (trec_eval `map`).
        package var averagePrecision: Double = 0
        /// 1 / rank of the first relevant document (trec_eval `recip_rank`).
        package var reciprocalRank: Double = 0

        package init(averagePrecision: Double = 0, reciprocalRank: Double = 0) {
            self.averagePrecision = averagePrecision
            self.reciprocalRank = reciprocalRank
        }
    }

    /// trec_eval's order of a run: score descending, then document id descending.
    package static func sorted(_ run: [(document: String, score: Double)]) -> [(document: String, score: Double)] {
        run.sorted { $0.score != $1.score ? $0.score > $1.score : $0.document > $1.document }
    }

    package static func evaluate(
        run: [(document: String, score: Double)], qrels: [String: Int], cutoffs: [Int] = [10, 100],
        relevanceLevel: Int = 1
    ) -> Scores {
        let ranked = sorted(run).map(\.document)
        let relevantCount = qrels.values.filter { $0 >= relevanceLevel }.count
        var scores = Scores()
        var hits = 0
        var precisionSum = 0.0
        for (index, document) in ranked.enumerated() where (qrels[document] ?? 0) >= relevanceLevel {
            hits += 1
            precisionSum += Double(hits) / Double(index + 1)
            if scores.reciprocalRank == 0 { scores.reciprocalRank = 1 / Double(index + 1) }
        }
        scores.averagePrecision = relevantCount == 0 ? 0 : precisionSum / Double(relevantCount)
        let ideal = qrels.values.filter { $0 > 0 }.sorted(by: >)
        for k in cutoffs {
            let top = ranked.prefix(k)
            let relevantInTop = top.filter { (qrels[$0] ?? 0) >= relevanceLevel }.count
            scores.precision[k] = Double(relevantInTop) / Double(k)
            scores.recall[k] = relevantCount == 0 ? 0 : Double(relevantInTop) / Double(relevantCount)
            let dcg = top.enumerated().reduce(0.0) { sum, item in
                sum + Double(max(0, qrels[item.element] ?? 0)) / log2(Double(item.offset + 2))
            }
            let idcg = ideal.prefix(k).enumerated().reduce(0.0) {
                $0 + Double($1.element) / log2(Double($1.offset + 2))
            }
            scores.ndcg[k] = idcg == 0 ? 0 : dcg / idcg
        }
        return scores
    }

    /// The mean of each figure over `queries` (every query in the qrels; a missing one is 0).
    package static func mean(_ perQuery: [String: Scores], queries: [String], cutoffs: [Int] = [10, 100]) -> Scores {
        var mean = Scores()
        let n = Double(max(1, queries.count))
        for query in queries {
            let s = perQuery[query] ?? Scores()
            mean.averagePrecision += s.averagePrecision / n
            mean.reciprocalRank += s.reciprocalRank / n
            for k in cutoffs {
                mean.ndcg[k, default: 0] += (s.ndcg[k] ?? 0) / n
                mean.precision[k, default: 0] += (s.precision[k] ?? 0) / n
                mean.recall[k, default: 0] += (s.recall[k] ?? 0) / n
            }
        }
        return mean
    }
}
