/// The hits of a query, with each retriever's own top k for the side-by-side view.
package struct RetrievalResult: Hashable, Sendable {
    package var hits: [RetrievalService.Hit]
    package var bm25Top: [RetrievalService.Hit]
    package var denseTop: [RetrievalService.Hit]
    /// The query's judgments and metrics when it is a judged query.
    package var judged: JudgedQuery?

    package init(
        hits: [RetrievalService.Hit], bm25Top: [RetrievalService.Hit], denseTop: [RetrievalService.Hit],
        judged: JudgedQuery? = nil
    ) {
        self.hits = hits
        self.bm25Top = bm25Top
        self.denseTop = denseTop
        self.judged = judged
    }
}
