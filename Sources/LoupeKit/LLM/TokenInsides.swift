import Foundation
import LoupeAgents
import LoupeBase
import LoupeModels
import LoupeStore

/// Where a local model chose one of a step's generated tokens: the step's recorded prompt
/// (`loupe.llm.prompt_token_ids`) followed by the tokens it generated before that one. The model's
/// last position in ``ids`` is the one whose prediction was the token, so its attention row and
/// its logit lens are what the model read and predicted when it chose it.
///
/// The token fork reads the same context (``AgentService/tokenForkPlan(_:id:at:token:replacement:tokenizer:)``),
/// so a fork, the attention and the lens at a token all start from the same ids.
package struct TokenContext: Hashable, Sendable {
    package var trace: Int64
    /// The span's ordinal in the trace.
    package var span: Int
    /// The generated token's index, from 0, as `loupe trace tokens` numbers them.
    package var token: Int
    /// The prompt, then the tokens generated before ``token``.
    package var ids: [Int32]
    /// How many of ``ids`` are the prompt.
    package var promptCount: Int
    /// The token the model chose there, as the step recorded it (its id absent in the legacy shape).
    package var chosen: GeneratedTokens.Token

    /// The position whose prediction was the token: the last of ``ids``.
    package var query: Int { ids.count - 1 }

    /// The context of token `index` of span `ordinal` of `trace` (stored as `id`), for a purpose
    /// the errors name (`"forked"`, `"read"`).
    ///
    /// - Throws: ``AgentToolError`` saying what is wrong: a span that is not a local model's step
    ///   (no prompt token ids or generated tokens recorded), a token index out of range, an id
    ///   outside the vocabulary of `vocabulary` tokens, or malformed records.
    package init(
        _ trace: Trace, id: Int64, at ordinal: Int, token index: Int, vocabulary: Int, purpose: String = "read"
    ) throws {
        guard trace.spans.indices.contains(ordinal), ordinal > 0 else {
            throw AgentToolError(
                "trace \(id) has no span \(ordinal) to \(purpose == "forked" ? "fork" : "read") at "
                    + "(spans 1…\(trace.spans.count - 1))")
        }
        let span = trace.spans[ordinal]
        let local = "only a step of the local model (loupe agent run --provider local) can be \(purpose) at a token"
        guard span.kind == .llm else {
            throw AgentToolError("span \(ordinal) is a \(span.kind.rawValue) span: \(local)")
        }
        let sequences: [GeneratedTokens]
        do { sequences = try GeneratedTokens.decode(span.attributes, span: span.spanID) } catch {
            throw AgentToolError("trace \(id): \(error.description)")
        }
        guard let generated = sequences.first, !generated.tokens.isEmpty else {
            throw AgentToolError("span \(ordinal) has no generated tokens: \(local)")
        }
        guard let promptValues = span.attributes["loupe.llm.prompt_token_ids"]?.array, !promptValues.isEmpty else {
            throw AgentToolError("span \(ordinal) recorded no prompt tokens (loupe.llm.prompt_token_ids): \(local)")
        }
        var ids: [Int32] = []
        ids.reserveCapacity(promptValues.count + index)
        for (position, value) in promptValues.enumerated() {
            guard let int = value.int, let id = Int32(exactly: int), id >= 0, Int(id) < vocabulary else {
                throw AgentToolError(
                    "span \(ordinal): loupe.llm.prompt_token_ids[\(position)] is not a token id of the model "
                        + "(0..<\(vocabulary)): \(UntrustedText.sanitized(value.compactJSON))")
            }
            ids.append(id)
        }
        let tokens = generated.tokens
        guard tokens.indices.contains(index) else {
            throw AgentToolError(
                "span \(ordinal) generated \(tokens.count) tokens: give a token index 0…\(tokens.count - 1) "
                    + "(loupe trace tokens \(id) --span \(ordinal) numbers them)")
        }
        for (position, token) in tokens[..<index].enumerated() {
            guard let tokenID = token.id, tokenID >= 0, Int(tokenID) < vocabulary else {
                throw AgentToolError("span \(ordinal): token \(position) has no vocabulary id recorded")
            }
            ids.append(tokenID)
        }
        self.trace = id
        self.span = ordinal
        token = index
        self.ids = ids
        promptCount = promptValues.count
        chosen = tokens[index]
    }

    /// The tokens generated before ``token``, which a fork forces again.
    package var generatedBefore: ArraySlice<Int32> { ids[promptCount...] }
}

extension GeneratedTokens.Token: Hashable {
    package func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(text)
        hasher.combine(logprob)
    }
}

/// SmolLM2's attention when it chose a token: for every layer and query head, the row of the
/// context's last position (the one that predicted the token) over every earlier position. One
/// teacher-forced probe of the float path keeps those rows only, so a context of thousands of
/// tokens costs 270 rows, not 270 matrices.
package struct TokenAttention: Hashable, Sendable {
    package var context: TokenContext
    /// Each position's token text, as the tokenizer spells it.
    package var tokens: [String]
    package var layers: Int
    package var heads: Int
    /// The key/value head each query head reads (grouped-query attention).
    package var keyValueHeads: [Int]
    /// `[layer][head][key]` flattened, over every position of the context (causal: none is later
    /// than the query, which is the last).
    package var rows: [Float]

    /// How many positions the query reads: the whole context.
    package var count: Int { tokens.count }

    /// One head's attention over the context.
    package func row(layer: Int, head: Int) -> ArraySlice<Float> {
        let start = (layer * heads + head) * count
        return rows[start..<(start + count)]
    }

    /// The row's entropy in bits: low for a head that reads one token, up to log2(count) for one
    /// that spreads evenly.
    package func entropy(layer: Int, head: Int) -> Double {
        row(layer: layer, head: head).reduce(0.0) { total, p in p > 0 ? total - Double(p) * log2(Double(p)) : total }
    }

    /// How sharply a head reads: 1 − entropy / log2(count), 1 for one key, 0 for an even spread.
    package func focus(layer: Int, head: Int) -> Double {
        count < 2 ? 1 : max(0, 1 - entropy(layer: layer, head: head) / log2(Double(count)))
    }

    /// The `limit` positions a head attends to most, most first (ties by position).
    package func top(layer: Int, head: Int, limit: Int) -> [(key: Int, probability: Float)] {
        let row = row(layer: layer, head: head)
        return row.indices.map { ($0 - row.startIndex, row[$0]) }
            .sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0 < $1.0 }
            .prefix(limit).map { (key: $0.0, probability: $0.1) }
    }

    /// Runs SmolLM2 (`generator`, the float path) once over `context.ids`, keeping the last
    /// position's attention row in every layer and head (``LlamaModel/probe(_:_:)``, the probe
    /// `loupe attention --model smollm2` reads).
    package init(context: TokenContext, generator: Generator) throws(ModelError) {
        let model = generator.model
        let configuration = model.configuration
        let layers = configuration.layers
        let query = context.query
        let probe = try model.probe(
            context.ids, LlamaProbeRequest(attentionLayers: Set(0..<layers), attentionQueries: [query]))
        var rows: [Float] = []
        rows.reserveCapacity(layers * configuration.heads * context.ids.count)
        for layer in 0..<layers {
            for head in 0..<configuration.heads {
                rows += probe.attentionRow(layer: layer, head: head, query: query) ?? []
            }
        }
        self.context = context
        tokens = context.ids.map { generator.tokenizer.piece($0) }
        self.layers = layers
        heads = configuration.heads
        keyValueHeads = (0..<configuration.heads).map(model.keyValueHead(of:))
        self.rows = rows
    }
}

/// The logit lens where a token was chosen: what each layer's residual stream at the context's
/// last position would predict through the final norm and the head (``LlamaModel/logitLens(_:positions:top:)``,
/// the lens `loupe lens` prints), and how likely each layer found the token the model chose.
package struct TokenLens: Hashable, Sendable {
    /// One vocabulary entry and its log-probability at one layer.
    package struct Prediction: Hashable, Sendable {
        package var id: Int32
        package var text: String
        package var logprob: Double

        package var probability: Double { Foundation.exp(logprob) }
    }

    /// One layer's reading: 0 the token embeddings, l + 1 the stream leaving layer l (the last is
    /// the model's own prediction).
    package struct Layer: Hashable, Sendable {
        package var layer: Int
        package var top: [Prediction]
        /// The chosen token at this layer; nil when the step recorded no id for it.
        package var chosen: Prediction?
    }

    package var context: TokenContext
    package var precision: LlamaPrecision
    package var layers: [Layer]

    /// The precision as the commands spell it (`f32`, `q8`).
    package var precisionName: String { precision.rawValue }

    /// Runs the lens of `generator` at the context's last position, the chosen token appended so
    /// each layer's log-probability of it is read too (the model is causal: the appended token
    /// changes nothing before it).
    package init(context: TokenContext, generator: Generator, precision: LlamaPrecision, top: Int) throws(ModelError) {
        let tokenizer = generator.tokenizer
        let ids = context.ids + (context.chosen.id.map { [$0] } ?? [])
        let cells = try generator.model.logitLens(ids, positions: [context.query], top: top)
        func prediction(_ entry: TokenLogprob) -> Prediction {
            Prediction(id: entry.id, text: tokenizer.piece(entry.id), logprob: Double(entry.logprob))
        }
        self.context = context
        self.precision = precision
        layers = cells.map { Layer(layer: $0.layer, top: $0.top.map(prediction), chosen: $0.next.map(prediction)) }
    }
}

/// Reads a local model's step at one generated token: its context from the trace, then
/// SmolLM2's attention or logit lens there. What `a` and `l` in the Traces panel's token view
/// ask, and what `loupe attention --model smollm2` and `loupe lens` print with `--trace`,
/// `--span` and `--token`.
///
/// Thread-safety: any thread; the model is loaded once by the library, the trace read through
/// the workspace's pool.
package struct TokenInsidesBrowser: Sendable {
    private let service: TraceService
    private let models: ModelLibrary

    package init(tables: TraceTables, models: ModelLibrary) {
        service = TraceService(tables: tables)
        self.models = models
    }

    package init(workspace: Workspace, models: ModelLibrary) {
        self.init(tables: TraceTables(workspace), models: models)
    }

    /// The context of token `token` of span `span` in trace `trace`.
    ///
    /// - Throws: ``AgentToolError`` for a step or token that has none (see ``TokenContext``),
    ///   `ModelError` when SmolLM2 is not here.
    package func context(trace: Int64, span: Int, token: Int, precision: LlamaPrecision = .f32) throws -> (
        TokenContext, Generator
    ) {
        let generator = try models.smolLM2(precision: precision)
        let context = try TokenContext(
            try service.trace(trace), id: trace, at: span, token: token, vocabulary: generator.tokenizer.count)
        return (context, generator)
    }

    /// SmolLM2's attention (float path) where it chose the token.
    package func attention(trace: Int64, span: Int, token: Int) throws -> TokenAttention {
        let (context, generator) = try self.context(trace: trace, span: span, token: token)
        return try TokenAttention(context: context, generator: generator)
    }

    /// The logit lens where the model chose the token: the `top` most likely tokens per layer.
    package func lens(
        trace: Int64, span: Int, token: Int, top: Int = 5, precision: LlamaPrecision = .f32
    ) throws -> TokenLens {
        let (context, generator) = try self.context(trace: trace, span: span, token: token, precision: precision)
        return try TokenLens(context: context, generator: generator, precision: precision, top: top)
    }
}
