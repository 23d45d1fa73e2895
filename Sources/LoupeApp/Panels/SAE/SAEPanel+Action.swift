extension SAEPanel {
    /// The SAE panel's own actions, bound in ``keymap``.
    package enum Action: PanelActionKind, CaseIterable {
        /// Sort features by density, max, label, number; on a SmolLM2 SAE's card, steer the next
        /// generation with the feature (the : line with `sae steer`, a prompt to type).
        case sort
        /// Reverse the feature order.
        case reverse
        /// Card: type a test text; enter runs its model (MiniLM or SmolLM2) + the SAE on it, shaded by the feature.
        case test
        /// Label the feature (stored in the workspace; empty removes it).
        case label
        /// Export the feature's card as JSON (sae-<id>-feature-<n>.json).
        case export
        /// Card: the previous feature in the list.
        case previous
        /// Card: the next feature in the list.
        case next
        /// Training curves of the SAE (live while it trains) or back to its features.
        case training
        /// Next SAE in the workspace.
        case model
        /// Train: opens the : line with this SAE's settings (or --resume when it stopped early).
        case train
        /// Reload the SAEs.
        case reload
        /// Show or hide the dense (on more than 10% of tokens) and dead features.
        case hide
    }
}
