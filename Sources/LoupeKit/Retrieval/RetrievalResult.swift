/// The hits of a query, with each retriever's own top k for the side-by-side view.
package struct RetrievalResult: Hashable, Sendable {
    package var hits: [RetrievalService.Hit]
    package var bm25Top: [RetrievalService.Hit]
    package var denseTop: [RetrievalService.Hit]
    /// The query's judgments and metrics when it is a judged query.
    package var judged: JudgedQuery?
    /// Query terms BM25 cannot match (not in any chunk), each with a "did you mean".
    package var unmatched: [UnmatchedTerm]
    /// The precision the query and the chunks were embedded at (`fp32`, `int8`), when a dense
    /// ranking was made.
    package var embeddingPrecision: String?

    package init(
        hits: [RetrievalService.Hit], bm25Top: [RetrievalService.Hit], denseTop: [RetrievalService.Hit],
        judged: JudgedQuery? = nil, unmatched: [UnmatchedTerm] = [], embeddingPrecision: String? = nil
    ) {
        self.hits = hits
        self.bm25Top = bm25Top
        self.denseTop = denseTop
        self.judged = judged
        self.unmatched = unmatched
        self.embeddingPrecision = embeddingPrecision
    }
}
