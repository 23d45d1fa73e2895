import Foundation
import LoupeAgents
import LoupeBase
import Yams

/// Reads a suite's YAML. Every mistake is reported with the file, line and column of the node
/// that holds it, and unknown keys are mistakes (a misspelt `epoch:` must not be ignored).
package enum SuiteParser {
    /// Parses `text`, the contents of `file`; relative paths resolve against `file`'s directory.
    package static func parse(_ text: String, file: String) throws(SuiteError) -> EvalSuite {
        do { return try suite(text, reader: YAMLReader(file: file)) } catch let error as SuiteError {
            throw error
        } catch {
            throw SuiteError(file: file, "\(error)")
        }
    }

    private static func suite(_ text: String, reader: YAMLReader) throws -> EvalSuite {
        let root = try reader.root(text, "the suite")
        let top = try reader.mapping(root, "the suite", allowed: Self.topKeys)
        guard let nameNode = top["name"] else { throw reader.error(root, "the suite needs a name: (name: my-suite)") }
        let name = try reader.string(nameNode, "name")
        guard let datasetNode = top["dataset"] else {
            throw reader.error(root, "the suite needs a dataset: (dataset: items.jsonl)")
        }
        let dataset = try reader.dataset(datasetNode)
        guard let targetNode = top["target"] else {
            throw reader.error(root, "the suite needs a target: (retrieval, agent or model)")
        }
        let target = try reader.target(targetNode)
        guard let scorersNode = top["scorers"] else { throw reader.error(root, "the suite needs scorers: a list") }
        let scorers = try reader.scorers(scorersNode, target: target)
        var suite = EvalSuite(
            name: name, description: try top["description"].map { try reader.string($0, "description") },
            file: reader.file, dataset: dataset, target: target, scorers: scorers)
        if let node = top["epochs"] { suite.epochs = try reader.int(node, "epochs", atLeast: 1, atMost: 1_000) }
        if let node = top["concurrency"] {
            suite.concurrency = try reader.int(node, "concurrency", atLeast: 1, atMost: 1_024)
        }
        return suite
    }

    static let topKeys: Set = ["name", "description", "dataset", "target", "scorers", "epochs", "concurrency"]
}

/// The suite's own nodes: dataset, target, provider and scorers.
extension YAMLReader {
    func dataset(_ node: Node) throws -> DatasetSpec {
        if case .scalar = node { return DatasetSpec(path: try path(node, "dataset")) }
        let fields = try mapping(node, "dataset", allowed: ["path", "id", "input", "target", "confidence"])
        guard let pathNode = fields["path"] else { throw error(node, "the dataset needs a path") }
        var spec = DatasetSpec(path: try path(pathNode, "dataset path"))
        if let node = fields["id"] { spec.idField = try string(node, "dataset id field") }
        if let node = fields["input"] { spec.inputField = try string(node, "dataset input field") }
        if let node = fields["target"] { spec.targetField = try string(node, "dataset target field") }
        if let node = fields["confidence"] { spec.confidenceField = try string(node, "dataset confidence field") }
        return spec
    }

    func target(_ node: Node) throws -> EvalTarget {
        let kinds = try mapping(node, "target", allowed: ["retrieval", "agent", "model"])
        guard kinds.count == 1, let (kind, body) = kinds.first else {
            throw error(node, "the target names exactly one of retrieval, agent or model")
        }
        switch kind {
        case "retrieval":
            let fields = try mapping(
                body, "the retrieval target", allowed: ["retriever", "k", "depth", "stem", "k1", "b", "qrels"])
            guard let qrels = fields["qrels"] else {
                throw error(body, "a retrieval target needs qrels: FILE (TREC format)")
            }
            var target = RetrievalTarget(retriever: "hybrid", qrelsPath: try path(qrels, "qrels"))
            if let node = fields["retriever"] {
                target.retriever = try string(node, "retriever")
                guard ["bm25", "dense", "hybrid"].contains(target.retriever) else {
                    throw error(node, "retriever '\(target.retriever)': use bm25, dense or hybrid")
                }
            }
            if let node = fields["k"] { target.k = try int(node, "k", atLeast: 1) }
            if let node = fields["depth"] { target.depth = try int(node, "depth", atLeast: 1) }
            if let node = fields["stem"] { target.stem = try bool(node, "stem") }
            if let node = fields["k1"] { target.k1 = try double(node, "k1") }
            if let node = fields["b"] { target.b = try double(node, "b") }
            return .retrieval(target)
        case "agent":
            let fields = try mapping(
                body, "the agent target",
                allowed: Self.providerKeys.union(["provider", "max_steps", "max_tokens", "timeout"]))
            var target = AgentTarget()
            target.provider = try provider(body, fields)
            if let node = fields["max_steps"] { target.maxSteps = try int(node, "max_steps", atLeast: 1) }
            if let node = fields["max_tokens"] { target.maxTokens = try int(node, "max_tokens", atLeast: 1) }
            if let node = fields["timeout"] { target.timeout = try double(node, "timeout") }
            return .agent(target)
        default:
            let fields = try mapping(
                body, "the model target", allowed: Self.providerKeys.union(["provider", "system", "max_tokens"]))
            var target = ModelTarget(provider: try provider(body, fields))
            guard target.provider.kind == "openai" || target.provider.kind == "local" else {
                throw error(body, "a model target calls a model: provider: openai (a server) or local (SmolLM2)")
            }
            if let node = fields["system"] { target.system = try string(node, "system") }
            if let node = fields["max_tokens"] { target.maxTokens = try int(node, "max_tokens", atLeast: 1) }
            return .model(target)
        }
    }

    static let providerKeys: Set = ["base_url", "model", "api_key_env", "stream"]

    func provider(_ node: Node, _ fields: [String: Node]) throws -> ProviderSpec {
        var spec = ProviderSpec()
        if let node = fields["provider"] {
            spec.kind = try string(node, "provider").lowercased()
            if spec.kind == "openai-compatible" { spec.kind = "openai" }
            guard ["offline", "local", "openai"].contains(spec.kind) else {
                throw error(node, "provider '\(spec.kind)': use offline, local or openai")
            }
        }
        if let node = fields["base_url"] {
            let url = try string(node, "base_url")
            guard url.hasPrefix("http://") || url.hasPrefix("https://") else {
                throw error(node, "base_url \(URLCredentials.redacted(url, placeholder: "***")): not an http(s) URL")
            }
            spec.baseURL = url
        }
        if let node = fields["model"] { spec.model = try string(node, "model") }
        if let node = fields["api_key_env"] { spec.apiKeyEnv = try string(node, "api_key_env") }
        if let node = fields["stream"] { spec.stream = try bool(node, "stream") }
        return spec
    }

    func scorers(_ node: Node, target: EvalTarget) throws -> [ScorerSpec] {
        guard case .sequence(let sequence) = node, !sequence.isEmpty else {
            throw error(node, "scorers must be a list with at least one scorer")
        }
        var out: [ScorerSpec] = []
        for entry in sequence {
            let spec = try scorer(entry)
            let isRetrieval = { if case .retrieval = target { true } else { false } }()
            if spec.kind.isRetrievalMetric != isRetrieval {
                throw error(
                    entry,
                    isRetrieval
                        ? "a retrieval target is scored by ndcg@K, map, mrr, recall@K or precision@K"
                        : "'\(spec.name)' scores rankings: use it with a retrieval target")
            }
            guard !out.contains(where: { $0.name == spec.name }) else {
                throw error(entry, "two scorers are named '\(spec.name)': give one another name with as: NAME")
            }
            out.append(spec)
        }
        return out
    }

    func scorer(_ node: Node) throws -> ScorerSpec {
        let kind: String
        var fields: [String: Node] = [:]
        var paramsNode = node
        switch node {
        case .scalar(let scalar): kind = scalar.string
        case .mapping(let mapping):
            guard mapping.count == 1, let (key, value) = mapping.first, let name = key.string else {
                throw error(node, "a scorer is a name, or one name with its settings (token_f1: {threshold: 0.5})")
            }
            kind = name
            paramsNode = value
            if case .scalar(let scalar) = value, scalar.string.isEmpty || value.null != nil {
                fields = [:]
            } else {
                fields = try self.mapping(
                    value, "scorer \(name)",
                    allowed: Self.providerKeys.union([
                        "as", "threshold", "tolerance", "relative", "pattern", "schema", "prompt", "provider",
                    ]))
            }
        default: throw error(node, "a scorer is a name, or one name with its settings")
        }
        func need(_ key: String) throws -> Node {
            guard let node = fields[key] else { throw error(paramsNode, "scorer \(kind) needs \(key):") }
            return node
        }
        let parsed: ScorerSpec.Kind
        let lower = kind.lowercased()
        if let cut = Self.cutoff(lower, "ndcg@") {
            parsed = .ndcg(cut)
        } else if let cut = Self.cutoff(lower, "recall@") {
            parsed = .recall(cut)
        } else if let cut = Self.cutoff(lower, "precision@") {
            parsed = .precision(cut)
        } else {
            switch lower {
            case "map": parsed = .averagePrecision
            case "mrr": parsed = .reciprocalRank
            case "exact": parsed = .exact
            case "normalized_exact", "normalised_exact": parsed = .normalizedExact
            case "contains": parsed = .contains
            case "regex":
                let node = try need("pattern")
                let pattern = try string(node, "pattern")
                do { _ = try NSRegularExpression(pattern: pattern) } catch {
                    throw self.error(node, "pattern \(pattern) is not a valid regular expression")
                }
                parsed = .regex(pattern)
            case "token_f1":
                parsed = .tokenF1(threshold: try fields["threshold"].map { try double($0, "threshold") })
            case "numeric":
                parsed = .numeric(
                    tolerance: try fields["tolerance"].map { try double($0, "tolerance") } ?? 1e-6,
                    relative: try fields["relative"].map { try bool($0, "relative") } ?? false)
            case "json_schema":
                let node = try need("schema")
                parsed = .jsonSchema(try json(node))
            case "embedding":
                parsed = .embedding(threshold: try fields["threshold"].map { try double($0, "threshold") } ?? 0.8)
            case "judge":
                let prompt = try string(try need("prompt"), "prompt")
                guard prompt.contains("{output}") else {
                    throw error(
                        fields["prompt"]!, "the judge prompt must contain {output} (and may use {input}, {target})")
                }
                var provider = try self.provider(paramsNode, fields)
                if fields["provider"] == nil { provider.kind = "openai" }
                guard provider.kind == "openai" else {
                    throw error(paramsNode, "a judge is a model: provider: openai (with base_url and model)")
                }
                parsed = .judge(provider: provider, prompt: prompt)
            default:
                throw error(
                    node,
                    "unknown scorer '\(kind)' (known: exact, normalized_exact, contains, regex, token_f1, numeric, "
                        + "json_schema, embedding, judge; for retrieval ndcg@K, map, mrr, recall@K, precision@K)")
            }
        }
        let name = try fields["as"].map { try string($0, "as") } ?? lower
        return ScorerSpec(name: name, kind: parsed)
    }

    static func cutoff(_ text: String, _ prefix: String) -> Int? {
        guard text.hasPrefix(prefix), let k = Int(text.dropFirst(prefix.count)), k > 0 else { return nil }
        return k
    }

    /// A YAML node as JSON (for schemas).
    func json(_ node: Node) throws -> JSONValue {
        switch node {
        case .scalar(let scalar):
            if scalar.style == .plain {
                if node.null != nil { return .null }
                if let bool = node.bool { return .bool(bool) }
                if let int = node.int { return .number(Double(int)) }
                if let double = node.float { return .number(double) }
            }
            return .string(scalar.string)
        case .sequence(let sequence):
            var out: [JSONValue] = []
            for item in sequence { out.append(try json(item)) }
            return .array(out)
        case .mapping(let mapping):
            var out: JSONObject = [:]
            for (key, value) in mapping {
                guard let name = key.string else { throw error(key, "schema keys must be text") }
                out[name] = try json(value)
            }
            return .object(out)
        case .alias: throw error(node, "aliases are not supported here")
        }
    }
}
