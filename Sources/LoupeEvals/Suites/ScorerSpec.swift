import LoupeAgents
import LoupeBase

/// One scorer of a suite: its kind, its parameters, and the name its scores go under.
package struct ScorerSpec: Hashable, Sendable {
    package enum Kind: Hashable, Sendable {
        // Retrieval metrics, per query, from the ranking and the judgments (k: the cut-off).
        case ndcg(Int)
        case averagePrecision, reciprocalRank
        case recall(Int)
        case precision(Int)
        // Answer scorers.
        case exact, normalizedExact, contains
        case regex(String)
        case tokenF1(threshold: Double?)
        case numeric(tolerance: Double, relative: Bool)
        case jsonSchema(JSONValue)
        case embedding(threshold: Double)
        case judge(provider: ProviderSpec, prompt: String)

        package var isRetrievalMetric: Bool {
            switch self {
            case .ndcg, .averagePrecision, .reciprocalRank, .recall, .precision: true
            default: false
            }
        }
    }

    package var name: String
    package var kind: Kind

    package init(name: String, kind: Kind) {
        self.name = name
        self.kind = kind
    }
}
