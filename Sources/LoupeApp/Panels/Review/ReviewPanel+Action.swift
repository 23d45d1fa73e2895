extension ReviewPanel {
    /// The Review panel's own actions, bound in ``keymap``.
    package enum Action: PanelActionKind {
        /// Item: the verdict a rubric key stands for (an option, true or false, a digit).
        case label(String)
        /// Item: write the note (the rubric's text criterion) on a line.
        case note
        /// Item: skip it (it comes back after the rest); calibration: the next scorer.
        case skip
        /// Item: take back the last label.
        case undo
        /// Item: the previous item of the queue.
        case previous
        /// Item: the next item of the queue.
        case next
        /// Item: scroll the context a page down.
        case page
        /// Item: open the item's trace in Traces.
        case trace
        /// Item: keep it as a dataset item (the `dataset add` line on the : line to edit).
        case keep
        /// The queue's run: its scorer against the people's labels.
        case calibrate
        /// Back to the queue list.
        case back
        /// Read the queues again.
        case reload
    }
}
