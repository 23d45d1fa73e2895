extension EvalsPanel {
    /// The Evals panel's own actions, bound in ``keymap``.
    package enum Action: PanelActionKind, CaseIterable {
        /// Run the selected suite.
        case run
        /// Re-run the failed and errored answers of the selected run.
        case rerun
        /// Cancel the running eval (its answers are kept; r resumes it).
        case cancel
        /// Mark the selected run as the baseline.
        case baseline
        /// Compare the selected run with the baseline.
        case compare
        /// Export the run as eval-run-N.csv and eval-run-N.json.
        case export
        /// Keep the answer as a dataset item: the `dataset add` line to edit and run.
        case keep
        /// Answers: show all, failed, errors or passed.
        case filter
        /// Answers: sort by item, worst, best, slowest.
        case sort
        /// Open the answer's trace (Traces) or ranking (Retrieval); ctrl+o comes back.
        case evidence
        /// Reload the runs.
        case reload
    }
}
