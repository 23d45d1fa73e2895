extension ReviewPanel {
    /// The Review panel's own actions, bound in ``keymap``.
    package enum Action: PanelActionKind, CaseIterable {
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

extension ReviewPanel {
    /// Item: the verdict a rubric key stands for (an option, true or false, a digit). Apart from
    /// ``Action`` because its keys come from the open queue's rubric, not from a fixed list.
    package struct Label: PanelActionKind {
        /// The rubric key, as the rubric spells it.
        package var key: String

        package init(_ key: String) { self.key = key }
    }
}
