extension TracesPanel {
    /// The Traces panel's own actions, bound in ``keymap``.
    package enum Action: PanelActionKind, CaseIterable {
        /// Next step with an error.
        case error
        /// Next tool call.
        case tool
        /// The step's raw source payload on or off.
        case raw
        /// Play or pause: step forward on a timer.
        case play
        /// Play faster (2, 1, 0.5, 0.25, 0.1 s a step).
        case faster
        /// Play slower.
        case slower
        /// Mark this trace to compare with another.
        case mark
        /// Compare this trace with the marked one (diff view).
        case diff
        /// Fork at this step: edit the tool result or the user message, continue offline.
        case fork
        /// Fork at this step with the text in `$EDITOR` (long tool results, multi-line messages).
        case forkInEditor
        /// Sort the traces by the next column (start, duration, steps, tokens, cost, errors).
        case sort
        /// Reverse the sort.
        case reverse
        /// Reload the trace list.
        case reload
        /// Next or previous span of any kind (agent, chain, workflow, scorer …) in the tree.
        case nextSpan, previousSpan
        /// The Sessions view on or off: traces grouped by session, conversation or thread.
        case sessions
        /// The step's MiniLM forward pass (an agent's search) on the roofline.
        case roofline
        /// The conversation a model call was sent: earlier messages folded to a line each, or whole.
        case conversation
        /// The generated tokens of a local model's step, shaded by probability, on or off.
        case tokens
        /// The next or previous uncertain token (low-confidence or near-tie) of the step.
        case nextUncertain, previousUncertain
        /// SmolLM2's attention, or its logit lens, where the token view's cursor token was chosen.
        case attention, lens
        /// The SmolLM2 SAE features active where the token view's cursor token was chosen
        /// (`sae at`), over the token view as `a` and `l` open theirs.
        case features
    }
}
