extension AttentionPanel {
    /// The Attention panel's own actions, bound in ``keymap``.
    package enum Action: PanelActionKind, CaseIterable {
        /// Type a sentence, or pick one with ↑/↓ (enter analyses it, esc cancels).
        case edit
        /// Sentence pair: a second sentence, [CLS] A [SEP] B [SEP] (tab switches, p again for one).
        case pair
        /// Next view: grid, head, head lines (BertViz), head table, embedding lens.
        case view
        /// Head table: sort by the next column.
        case sort
        /// Head table: reverse the sort.
        case reverse
        /// Previous head.
        case previousHead
        /// Next head.
        case nextHead
        /// Export the current head as CSV (attention-L<l>-H<h>.csv).
        case export
        /// Head, head lines and neuron views: one head, the layer's mean (heads overlaid in the
        /// lines view), every head's mean, or rollout.
        case aggregate
        /// Export the current head as JSON, with its statistics (attention-L<l>-H<h>.json).
        case exportJSON
        /// Switch the model: MiniLM ↔ SmolLM2.
        case model
        /// SmolLM2's grid: shade by the next head statistic.
        case statistic
    }
}
