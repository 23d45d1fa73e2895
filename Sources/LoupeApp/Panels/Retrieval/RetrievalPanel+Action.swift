extension RetrievalPanel {
    /// The Retrieval panel's own actions, bound in ``keymap``.
    package enum Action: PanelActionKind {
        /// Type a query, or pick one with ↑/↓ (enter searches, esc cancels).
        case edit
        /// Next retriever: hybrid, BM25, dense (the list re-ranks).
        case retriever
        /// BM25 stemming on or off (Porter).
        case stem
        /// MMR diversity re-ranking on or off.
        case mmr
        /// Next view: hits, BM25 and dense side by side.
        case view
    }
}
