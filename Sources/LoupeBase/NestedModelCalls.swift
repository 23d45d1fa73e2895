/// Which model-call spans a trace's totals leave out because a span below them describes the same
/// call: one rule for the importers (a whole trace), the store (a trace that grows from its stored
/// columns, by every path) and the trace view, so that tokens, cost, steps and the model usage
/// table count each call once whichever way the spans arrived.
///
/// A call can be recorded twice in one trace. An agent framework's span for a model call (the
/// OpenAI Agents SDK's generation span through OpenInference, LangChain's LLM run) is the parent,
/// through W3C `traceparent`, of the span the model's server records for the same request (`loupe
/// serve`'s chat span, an instrumented HTTP client's); both carry the call's token usage. The rule:
/// a model call's usage and step count only when no span below it also carries usage for a model
/// call. The innermost span wins because it is the one nearest the model: the server counted the
/// tokens it read and wrote, while the caller's figure is what the server told it (or the caller's
/// own estimate), and the innermost span is the one with the prompt's tokens and log-probabilities.
/// A caller's span whose call has no inner record (a hosted API) keeps counting.
///
/// Langfuse and Phoenix sum the usage of every generation (LLM span) of a trace, so there a call
/// recorded at two levels counts twice (strands-agents/sdk-python#1267 is that report against
/// Langfuse over OpenTelemetry); Loupe shows both spans in the tree but counts the call once.
package enum NestedModelCalls {
    /// For each span (`ids`, `parents`, `isModelCall` and `carriesUsage` of equal lengths), whether
    /// it is a model call with a model call carrying usage among its descendants: the spans whose
    /// usage and step a trace's totals leave out. A parent not among `ids` ends the walk up; a
    /// cycle of parents is walked once and makes no span its own descendant. O(spans).
    package static func outer(
        ids: [String], parents: [String?], isModelCall: [Bool], carriesUsage: [Bool]
    ) -> [Bool] {
        var outer = [Bool](repeating: false, count: ids.count)
        guard ids.indices.contains(where: { isModelCall[$0] && carriesUsage[$0] }) else { return outer }
        var index: [String: Int] = [:]
        index.reserveCapacity(ids.count)
        for (i, id) in ids.enumerated() where index[id] == nil { index[id] = i }
        // A span walked up from once has had all its ancestors marked: later walks stop there.
        var walked = [Bool](repeating: false, count: ids.count)
        for start in ids.indices where isModelCall[start] && carriesUsage[start] {
            var parent = parents[start]
            while let id = parent, let above = index[id], above != start {
                if isModelCall[above] { outer[above] = true }
                if walked[above] { break }
                walked[above] = true
                parent = parents[above]
            }
        }
        return outer
    }

    /// Whether a span's usage says anything: input or output tokens, or a cost.
    package static func carriesUsage(inputTokens: Int?, outputTokens: Int?, cost: Double?) -> Bool {
        inputTokens != nil || outputTokens != nil || cost != nil
    }
}
