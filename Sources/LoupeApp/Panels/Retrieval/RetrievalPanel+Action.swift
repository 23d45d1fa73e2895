extension RetrievalPanel {
    /// The Retrieval panel's own actions, bound in ``keymap``.
    package enum Action: PanelActionKind, CaseIterable {
        /// Type a query, or pick one with ↑/↓ (enter searches, esc cancels).
        case edit
        /// Next retriever: hybrid, BM25, dense (the list re-ranks).
        case retriever
        /// BM25 stemming on or off (Porter).
        case stem
        /// MMR diversity re-ranking on or off.
        case mmr
        /// Next view: hits, BM25 and dense side by side, the relevant documents not retrieved.
        case view
        /// Show more or fewer hits (depth k: 10, 20, 50, 100).
        case deeper, shallower
        /// MMR's λ up or down by 0.1 (1 is pure relevance, 0 pure diversity).
        case lambdaUp, lambdaDown
        /// The HNSW recall/QPS curves kept by `bench hnsw --record`.
        case curves
    }
}
