import Foundation
import LoupeModels
import LoupeRetrieval
import LoupeStore

/// A query with relevance judgments, and how a ranking did on it.
package struct JudgedQuery: Hashable, Sendable {
    package var source: String
    package var id: String
    package var judgments: [String: Int]
    package var scores: RetrievalMetrics.Scores

    package init(source: String, id: String, judgments: [String: Int], scores: RetrievalMetrics.Scores) {
        self.source = source
        self.id = id
        self.judgments = judgments
        self.scores = scores
    }

}
