extension RooflinePanel {
    /// The Roofline panel's own actions, bound in ``keymap``.
    package enum Action: PanelActionKind, CaseIterable {
        /// Next machine profile (this CPU, imported GPUs).
        case profile
        /// Next precision to plot (FP32, FP64, FP16…).
        case precision
        /// Sort the table by the next column.
        case sort
        /// Reverse the sort.
        case reverse
        /// Export the points and ceilings as CSV (roofline-<profile>-<precision>.csv).
        case export
        /// Reload the roofs and kernels from the workspace.
        case reload
        /// Mark the selected kernel's import or run as the baseline (again clears it).
        case baseline
    }
}
