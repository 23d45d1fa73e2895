import LoupeAgents
import LoupeBase

/// An eval suite as its YAML file states it: a dataset, a target that answers each item, and the
/// scorers that judge the answers. Paths are resolved against the suite file's directory.
package struct EvalSuite: Hashable, Sendable {
    package var name: String
    package var description: String?
    /// The suite file, as given.
    package var file: String
    package var dataset: DatasetSpec
    package var target: EvalTarget
    package var scorers: [ScorerSpec]
    /// Trials per item (`--epochs` overrides).
    package var epochs: Int
    /// Items answered at once (`--concurrency` overrides).
    package var concurrency: Int

    package init(
        name: String, description: String? = nil, file: String, dataset: DatasetSpec, target: EvalTarget,
        scorers: [ScorerSpec], epochs: Int = 1, concurrency: Int = 1
    ) {
        self.name = name
        self.description = description
        self.file = file
        self.dataset = dataset
        self.target = target
        self.scorers = scorers
        self.epochs = epochs
        self.concurrency = concurrency
    }

    /// The scorer whose aggregate heads the run in lists: the first one.
    package var headline: String { scorers.first?.name ?? "" }
}

/// Where the items come from: a JSONL file and the fields that hold each part of an item.
package struct DatasetSpec: Hashable, Sendable {
    /// Absolute (or as resolved against the suite's directory).
    package var path: String
    package var idField = "id"
    package var inputField = "input"
    package var targetField = "target"
    /// A field holding the target's stated confidence in [0, 1], for calibration.
    package var confidenceField = "confidence"

    package init(path: String) { self.path = path }
}

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

package struct RetrievalTarget: Hashable, Sendable {
    /// bm25, dense or hybrid.
    package var retriever: String
    package var k = 10
    /// Hits each retriever passes to the metrics (documents are scored at this depth).
    package var depth = 100
    package var stem = false
    package var k1 = 1.2
    package var b = 0.75
    /// The judgments: a TREC qrels file.
    package var qrelsPath: String

    package init(retriever: String, qrelsPath: String) {
        self.retriever = retriever
        self.qrelsPath = qrelsPath
    }
}

/// Which chat provider answers: `offline` (in-process, no network) or `openai` (any
/// OpenAI-compatible server). The key is named by an environment variable, never stored.
package struct ProviderSpec: Hashable, Sendable {
    package var kind = "offline"
    package var baseURL: String?
    package var model: String?
    package var apiKeyEnv = "OPENAI_API_KEY"
    package var stream = true

    package init(kind: String = "offline") { self.kind = kind }
}

package struct AgentTarget: Hashable, Sendable {
    package var provider = ProviderSpec()
    package var maxSteps = 8
    package var maxTokens: Int?
    package var timeout = 300.0

    package init() {}
}

package struct ModelTarget: Hashable, Sendable {
    package var provider: ProviderSpec
    package var system: String?
    package var maxTokens: Int?

    package init(provider: ProviderSpec) { self.provider = provider }
}

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

/// One item of a dataset.
package struct EvalItem: Hashable, Sendable {
    package var id: String
    package var input: String
    /// Accepted answers (empty when the dataset has none, as for retrieval).
    package var targets: [String]
    /// The target's stated confidence, when the dataset gives one.
    package var confidence: Double?
    /// Every other field, for filtering and for scorers that need them.
    package var metadata: [String: JSONValue]
    /// The JSONL line it came from.
    package var line: Int

    package init(
        id: String, input: String, targets: [String] = [], confidence: Double? = nil,
        metadata: [String: JSONValue] = [:], line: Int = 0
    ) {
        self.id = id
        self.input = input
        self.targets = targets
        self.confidence = confidence
        self.metadata = metadata
        self.line = line
    }
}

/// A suite or dataset that cannot be used, with the file and line (and column) that says why.
package struct SuiteError: UserFacingError, Hashable, Sendable {
    /// The suite, dataset or qrels file, with the 1-based line and column when one place is at fault.
    package var location: SourceLocation
    package var message: String

    package init(at location: SourceLocation, _ message: String) {
        self.location = location
        self.message = message
    }

    package init(file: String, line: Int? = nil, column: Int? = nil, _ message: String) {
        self.init(at: SourceLocation(file: file, line: line, column: column), message)
    }

    /// `file:line:column: message`, `file:line: message` or `file: message`.
    package var description: String { "\(location): \(message)" }
}
