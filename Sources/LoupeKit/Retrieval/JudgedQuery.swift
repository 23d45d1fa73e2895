import Foundation
import LoupeModels
import LoupeRetrieval
import LoupeStore

/// A query with relevance judgments, and how a ranking did on it.
package struct JudgedQuery: Hashable, Sendable {
    package var source: String
    package var id: String
    package var judgments: [String: Int]
    /// The metrics of the ranking shown (MMR's when ``mmrLambda`` is set), at depth 100.
    package var scores: RetrievalMetrics.Scores
    /// MMR's λ when ``scores`` and ``ranks`` are of the MMR'd list; nil without MMR.
    package var mmrLambda: Float?
    /// Each document's rank in this ranking at depth 100 (its best chunk), from 1.
    package var ranks: [String: Int] = [:]
    /// The titles of the documents judged relevant, for the list of those not retrieved.
    package var titles: [String: String] = [:]
    /// The same metrics for each retriever alone (`bm25`, `dense`, `hybrid`), same query and
    /// settings, no MMR: what switching retriever would change on this query.
    package var byRetriever: [String: RetrievalMetrics.Scores] = [:]

    package init(source: String, id: String, judgments: [String: Int], scores: RetrievalMetrics.Scores) {
        self.source = source
        self.id = id
        self.judgments = judgments
        self.scores = scores
    }

    /// The documents judged relevant that `shown` (the hits on screen) leaves out, most
    /// relevant first, each with its rank deeper in the ranking when it has one.
    package func missed(from shown: Set<String>) -> [(document: String, grade: Int, rank: Int?)] {
        judgments.filter { $0.value > 0 && !shown.contains($0.key) }
            .map { ($0.key, $0.value, ranks[$0.key]) }
            .sorted { ($1.grade, $0.rank ?? .max, $0.document) < ($0.grade, $1.rank ?? .max, $1.document) }
    }
}

/// A query term the index does not have, with the closest one it has.
package struct UnmatchedTerm: Hashable, Sendable {
    package var term: String
    package var suggestion: String?

    package init(term: String, suggestion: String?) {
        self.term = term
        self.suggestion = suggestion
    }
}
