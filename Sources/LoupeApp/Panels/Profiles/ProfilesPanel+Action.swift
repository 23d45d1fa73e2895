extension ProfilesPanel {
    /// The Profiles panel's own actions, bound in ``keymap``.
    package enum Action: PanelActionKind, CaseIterable {
        /// Next view of the open profile.
        case nextView
        /// Mark the selected profile as the baseline (again clears it).
        case baseline
        /// Every ProfilerStep, or HTA's default window.
        case allSteps
        case zoomIn
        case zoomOut
        case resetZoom
        /// The lane's next or previous kernel.
        case nextEvent
        case previousEvent
        /// Zoom to the selected kernel.
        case zoomToEvent
        case reload
    }
}
