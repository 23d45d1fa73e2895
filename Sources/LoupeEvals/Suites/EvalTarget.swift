import LoupeAgents
import LoupeBase

/// What answers an item.
package enum EvalTarget: Hashable, Sendable {
    /// A retrieval configuration, scored against relevance judgments (qrels).
    case retrieval(RetrievalTarget)
    /// Loupe's agent with a provider and limits, on question/answer items.
    case agent(AgentTarget)
    /// One chat-completions call per item.
    case model(ModelTarget)

    package var kind: String {
        switch self {
        case .retrieval: "retrieval"
        case .agent: "agent"
        case .model: "model"
        }
    }
}
