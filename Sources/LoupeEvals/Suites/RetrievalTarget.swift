import LoupeAgents
import LoupeBase

package struct RetrievalTarget: Hashable, Sendable {
    /// bm25, dense or hybrid.
    package var retriever: String
    package var k = 10
    /// Hits each retriever passes to the metrics (documents are scored at this depth).
    package var depth = 100
    package var stem = false
    package var k1 = 1.2
    package var b = 0.75
    /// The judgments: a TREC qrels file.
    package var qrelsPath: String

    package init(retriever: String, qrelsPath: String) {
        self.retriever = retriever
        self.qrelsPath = qrelsPath
    }
}
