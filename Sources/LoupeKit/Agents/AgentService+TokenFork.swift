import Foundation
import LoupeAgents
import LoupeBase
import LoupeModels
import LoupeStore
import Synchronization

extension AgentService {
    /// What a token fork puts at the forked token: one of the alternatives the model considered
    /// there, or text typed in its place.
    package enum TokenReplacement: Hashable, Sendable {
        /// The `k`-th alternative, from 1, as `loupe trace tokens` and the token view list them
        /// (most likely first; the chosen token may be among them).
        case alternative(Int)
        /// Text that replaces the answer from that token on: its tokens are forced, then the
        /// model goes on.
        case text(String)

        /// As the fork's metadata and the command's summary say it.
        package var label: String {
            switch self {
            case .alternative(let k): "alternative \(k)"
            case .text(let text): "text \(JSONValue.string(text).compactJSON)"
            }
        }
    }

    /// Where a token fork happens and what it changes, read from the parent's span: the prompt,
    /// the tokens forced, the forked token's text before and after, and the sampling it used.
    package struct TokenForkPlan: Sendable, Equatable {
        package var fork: LocalModelProvider.Fork
        /// The token the model chose there, and what replaces it (the alternative's text or the
        /// typed text).
        package var original: String
        package var replacement: String
        /// The step's temperature and seed, as it recorded them (`gen_ai.request.*`).
        package var sampling: SamplingOptions
    }

    /// The plan to fork span `ordinal` of `parent` (trace `parentID`) at generated token `index`
    /// (from 0, as `loupe trace tokens` numbers them) with `replacement`.
    ///
    /// - Throws: ``AgentToolError`` saying what is wrong: a span that is not a local model's step
    ///   (no prompt token ids or generated tokens recorded), a token index or alternative out of
    ///   range, an alternative that is the chosen token, an empty text, or malformed records.
    package static func tokenForkPlan(
        _ parent: Trace, id parentID: Int64, at ordinal: Int, token index: Int, replacement: TokenReplacement,
        tokenizer: BPETokenizer
    ) throws -> TokenForkPlan {
        let context = try TokenContext(
            parent, id: parentID, at: ordinal, token: index, vocabulary: tokenizer.count, purpose: "forked")
        let span = parent.spans[ordinal]
        var forced = Array(context.generatedBefore)
        let chosen = context.chosen
        let replacementText: String
        switch replacement {
        case .alternative(let k):
            let count = chosen.alternatives.count
            guard count > 0 else { throw AgentToolError("token \(index) of span \(ordinal) has no alternatives") }
            guard (1...count).contains(k) else {
                throw AgentToolError("token \(index) of span \(ordinal) has \(count) alternatives: choose 1…\(count)")
            }
            let alternative = chosen.alternatives[k - 1]
            guard let id = alternative.id else {
                throw AgentToolError("alternative \(k) of token \(index) has no vocabulary id recorded")
            }
            guard id != chosen.id else {
                throw AgentToolError(
                    "alternative \(k) of token \(index) (\(Self.quoted(alternative.text))) is the token the "
                        + "model chose: choose another")
            }
            forced.append(id)
            replacementText = alternative.text
        case .text(let text):
            let ids = tokenizer.encode(text)
            guard !ids.isEmpty else { throw AgentToolError("give some text to put at token \(index)") }
            forced += ids
            replacementText = text
        }
        var sampling = SamplingOptions.greedy()
        if let temperature = span.attributes["gen_ai.request.temperature"]?.number {
            sampling.temperature = Float(temperature)
        }
        if let seed = span.attributes["gen_ai.request.seed"]?.number, seed >= 0, seed < 1.8e19 {
            sampling.seed = UInt64(seed)
        }
        return TokenForkPlan(
            fork: LocalModelProvider.Fork(
                prompt: Array(context.ids[..<context.promptCount]), forced: forced, tokenIndex: index),
            original: chosen.text,
            replacement: replacementText, sampling: sampling)
    }

    /// Forks trace `parentID` at generated token `index` of its model call `ordinal`: SmolLM2
    /// reads the step's recorded prompt, is made to write the step's tokens before `index` and
    /// then `replacement` (teacher forcing), and goes on with the step's sampling; the run then
    /// continues from that step with the local model and the workspace's tools. The fork is a
    /// new trace linked to its parent at that span (as a span fork is) and that token (its
    /// metadata's `fork_token`, `fork_choice`), under its parent's limits with `limits` in their
    /// place.
    ///
    /// - Throws: ``AgentToolError`` for a span or token that cannot be forked (see
    ///   ``tokenForkPlan(_:id:at:token:replacement:tokenizer:)``), `ModelError` when SmolLM2 is
    ///   not here.
    package func fork(
        _ parentID: Int64, at ordinal: Int, token index: Int, replacement: TokenReplacement,
        limits: AgentLimits.Overrides,
        reporter: JobReporter = .detached(), onStep: (Int64, Trace) -> Void = { _, _ in }
    ) throws -> (id: Int64, trace: Trace, plan: TokenForkPlan) {
        let parent = try TraceService(tables: TraceTables(database)).trace(parentID)
        let generator = try models.smolLM2()
        let plan = try Self.tokenForkPlan(
            parent, id: parentID, at: ordinal, token: index, replacement: replacement, tokenizer: generator.tokenizer)
        let local = LocalModelProvider(generator: generator, sampling: plan.sampling)
        let provider = TokenForkProvider(local: local, fork: plan.fork)
        let target = parent.spans[ordinal]
        let kept = Array(parent.spans[..<ordinal])
        let metadata: JSONObject = [
            "fork_token": .number(Double(index)), "fork_choice": .string(replacement.label),
            "fork_original": .string(plan.original), "fork_replacement": .string(plan.replacement),
        ]
        let forked = try continueFork(
            parent, id: parentID, at: ordinal, kept: kept, messages: target.input, provider: provider,
            limits: limits, metadata: metadata,
            name:
                "token #\(index) \(Self.quoted(plan.original))→\(Self.quoted(plan.replacement)) · fork of \(parent.name)",
            reporter: reporter, onStep: onStep)
        return (forked.id, forked.trace, plan)
    }

    /// A token's text in quotes, control characters made visible: how forks name tokens.
    package static func quoted(_ text: String) -> String { "\"" + UntrustedText.sanitized(text) + "\"" }
}

/// The local model for a token fork's run: its first call is the forked step (the recorded
/// prompt, the forced tokens, then the model), every later one an ordinary local call.
final class TokenForkProvider: ChatProvider {
    let local: LocalModelProvider
    let fork: LocalModelProvider.Fork
    private let pending = Mutex(true)

    init(local: LocalModelProvider, fork: LocalModelProvider.Fork) {
        self.local = local
        self.fork = fork
    }

    var label: String { local.label }
    var model: String { local.model }

    func complete(_ request: ChatRequest, onText: @escaping @Sendable (String) -> Void) throws(ProviderError)
        -> ChatResponse
    {
        let first = pending.withLock { (pending: inout Bool) -> Bool in
            defer { pending = false }
            return pending
        }
        return try local.complete(request, forking: first ? fork : nil, onText: onText)
    }
}
