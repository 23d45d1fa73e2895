import Foundation
import LoupeBase
import LoupeTensor

/// What a generation may do: how tokens are chosen, how many, and where it stops.
package struct GenerationOptions: Sendable, Equatable {
    package var sampling = SamplingOptions()
    /// The most tokens to generate.
    package var maxTokens = 256
    /// Strings that end the answer when they appear in it (not included in the text).
    package var stops: [String] = []
    /// The context to allocate (tokens); nil: the prompt and `maxTokens`, within the model's.
    package var context: Int?
    /// A grammar the answer must stay in (tool calls, a JSON schema): tokens it refuses are never
    /// chosen (``Sampler/choose(_:history:allowing:)``); nil: any token.
    package var constraint: GrammarConstraint?
    /// Prompt-lookup speculative decoding (``PromptLookup``); nil: one token per pass. The tokens,
    /// their log-probabilities and where generation stops are the same either way (see
    /// ``Generator/generate(prompt:options:reusing:isCancelled:onText:)``).
    package var speculation: SpeculationOptions?

    package init() {}
}

/// Why generation ended, in llama-server's words (`stop_type`).
package enum StopReason: String, Sendable, Codable {
    /// The model produced an end-of-generation token (`<|im_end|>`, `<|endoftext|>`).
    case eos
    /// `maxTokens` tokens, or the context, ran out.
    case limit
    /// A stop string appeared.
    case word
    /// The caller asked to stop (ctrl+c).
    case cancelled
}

/// One generated token: its id, its text, and how sure the model was of it.
package struct GeneratedToken: Sendable, Equatable {
    package var id: Int32
    /// The token's own text (a byte fragment of a character shows as its bytes' replacement).
    package var piece: String
    package var choice: TokenChoice
}

/// How long a generation took, the way llama.cpp's `timings` report it.
package struct GenerationTimings: Sendable, Equatable, Codable {
    package var promptTokens: Int
    /// The prompt's first tokens whose keys and values a ``PromptCache`` already held (an earlier
    /// chat turn's): only the rest were prefilled.
    package var cachedPromptTokens = 0
    package var generatedTokens: Int
    /// From the start to the first generated token chosen: the prefill and one sampling.
    package var timeToFirstTokenSeconds: Double
    package var prefillSeconds: Double
    /// The decode steps after the first token (each one forward pass of one token and a choice).
    package var decodeSeconds: Double

    /// The prompt tokens this generation read (those the cache did not hold already).
    package var prefilledTokens: Int { promptTokens - cachedPromptTokens }

    package var prefillTokensPerSecond: Double {
        prefillSeconds > 0 ? Double(prefilledTokens) / prefillSeconds : 0
    }
    /// Tokens after the first over the time their steps took (the first one comes with the prefill).
    package var decodeTokensPerSecond: Double {
        decodeSeconds > 0 && generatedTokens > 1 ? Double(generatedTokens - 1) / decodeSeconds : 0
    }
}

/// A finished generation.
package struct Generation: Sendable {
    package var promptIDs: [Int32]
    package var tokens: [GeneratedToken]
    /// The answer's text: every token's bytes decoded, cut before a stop string.
    package var text: String
    package var stopReason: StopReason
    /// The stop string that ended it (``StopReason/word``).
    package var stoppingWord: String?
    package var timings: GenerationTimings
    /// What speculative decoding drafted and the model accepted; nil when it was off.
    package var speculation: SpeculationCounts?
}

/// A sequence's key/value cache and the tokens it holds, kept from one generation to the next (a
/// chat's turns): a prompt that starts with the same tokens prefills only the rest.
///
/// The cache holds the prompt and every generated token that was read back (not the last one,
/// which no pass read). A new prompt keeps the longest common prefix (at least one token is
/// always read again, for its logits) and forgets the rest.
package struct PromptCache: Sendable {
    /// The tokens whose keys and values `cache` holds, in order.
    package private(set) var tokens: [Int32] = []
    var cache: LlamaKVCache?

    package init() {}

    /// Forgets everything (a new conversation).
    package mutating func reset() {
        tokens = []
        cache = nil
    }

    /// A cache for `prompt` in a context of `context` tokens, holding the longest prefix of
    /// `prompt` it can reuse (short of its last token); returns it and that prefix's length.
    mutating func take(for prompt: [Int32], context: Int, model: LlamaModel) throws(ModelError)
        -> (LlamaKVCache, Int)
    {
        var shared = 0
        let limit = min(tokens.count, prompt.count - 1)
        while shared < limit && tokens[shared] == prompt[shared] { shared += 1 }
        guard shared > 0, var kept = cache else {
            reset()
            return (try model.makeCache(context: context), 0)
        }
        cache = nil
        kept.truncate(to: shared)
        tokens.removeSubrange(shared...)
        return (kept.resized(capacity: context), shared)
    }

    /// Keeps `cache`, which holds `tokens`, for the next generation.
    mutating func keep(_ cache: LlamaKVCache, holding tokens: [Int32]) {
        precondition(cache.count == tokens.count, "a cache of \(cache.count) tokens kept as \(tokens.count)")
        self.cache = cache
        self.tokens = tokens
    }
}

/// Generates text with a model and its tokenizer, one token at a time, streaming the text as it
/// becomes final (never part of a character, never part of a stop string).
package struct Generator: Sendable {
    package let model: LlamaModel
    package let tokenizer: BPETokenizer
    /// How a conversation becomes a prompt (the file's own template).
    package let template: ChatTemplate

    package init(model: LlamaModel, tokenizer: BPETokenizer, template: ChatTemplate) {
        self.model = model
        self.tokenizer = tokenizer
        self.template = template
    }

    /// The prompt ids of a conversation, with the turn that asks for the assistant's reply.
    package func prompt(_ messages: [ChatMessage]) throws(ModelError) -> [Int32] {
        try template.encode(messages, addGenerationPrompt: true, with: tokenizer)
    }

    /// The context a generation after `prompt` takes (tokens, the prompt's included) and the most
    /// tokens it may generate in it.
    ///
    /// - Throws: ``ModelError`` for options out of range, an empty prompt, an id outside the
    ///   vocabulary, or a prompt that leaves no room in the context.
    package func limits(prompt: [Int32], options: GenerationOptions) throws(ModelError) -> (context: Int, budget: Int) {
        if let problem = options.sampling.problem ?? options.speculation?.problem {
            throw ModelError(file: model.fileName, message: problem)
        }
        guard !prompt.isEmpty else { throw ModelError(file: model.fileName, message: "the prompt has no tokens") }
        let vocabulary = model.configuration.vocabularySize
        if let bad = prompt.first(where: { $0 < 0 || Int($0) >= vocabulary }) {
            throw ModelError(
                file: model.fileName, message: "token id \(bad) is outside the vocabulary (0..<\(vocabulary))")
        }
        let limit = model.configuration.contextLength
        let context = min(options.context ?? (prompt.count + max(options.maxTokens, 1)), limit)
        guard prompt.count < context else {
            throw ModelError(
                file: model.fileName,
                message:
                    "a prompt of \(prompt.count) tokens leaves no room to generate in a context of \(context) tokens"
                    + (context < limit ? " (ask for a larger context, up to \(limit))" : ""))
        }
        return (context, min(options.maxTokens, context - prompt.count))
    }

    /// Generates after `prompt` (token ids, chat template already applied where wanted).
    ///
    /// - Parameters:
    ///   - isCancelled: asked before each decode step; true ends generation (``StopReason/cancelled``).
    ///   - onText: the text each token makes final, with the token (its text may be empty while
    ///     a character or a possible stop string is incomplete); the rest comes with a nil token
    ///     at the end.
    /// - Throws: ``ModelError`` for an empty prompt, a prompt that leaves no room in the context,
    ///   or an id outside the vocabulary.
    package func generate(
        prompt: [Int32], options: GenerationOptions, isCancelled: () -> Bool = { false },
        onText: (String, GeneratedToken?) -> Void = { _, _ in }
    ) throws(ModelError) -> Generation {
        var fresh = PromptCache()
        return try generate(
            prompt: prompt, options: options, reusing: &fresh, isCancelled: isCancelled, onText: onText)
    }

    /// `generate(prompt:options:isCancelled:onText:)` reading only the part of `prompt` that
    /// `promptCache` does not hold already (a chat's earlier turns), and leaving in it the prompt
    /// and the answer for the next turn. In `.f32` the logits are a fresh prefill's within float
    /// rounding (attention sums the same terms in blocks of other sizes); in `.q8` that rounding
    /// can flip an activation's 8-bit level, and they agree within q8's own noise (PromptCacheTests).
    package func generate(
        prompt: [Int32], options: GenerationOptions, reusing promptCache: inout PromptCache,
        isCancelled: () -> Bool = { false }, onText: (String, GeneratedToken?) -> Void = { _, _ in }
    ) throws(ModelError) -> Generation {
        let (context, budget) = try limits(prompt: prompt, options: options)
        let taken = try promptCache.take(for: prompt, context: context, model: model)
        var cache = taken.0
        let cached = taken.1
        var read = Array(prompt.prefix(cached))
        defer { promptCache.keep(cache, holding: read) }
        var decoding = Decoding(
            prompt: prompt, options: options, budget: budget, tokenizer: tokenizer, fileName: model.fileName)

        let start = DispatchTime.now().uptimeNanoseconds
        let fresh = Array(prompt[cached...])
        var logits = try model.forward(fresh, cache: &cache, logits: .last)
        read += fresh
        let prefilled = DispatchTime.now().uptimeNanoseconds
        var firstChosen = prefilled
        var counts: SpeculationCounts?
        if let speculation = options.speculation, !decoding.isFinished {
            let next = try decoding.choose(logits, onText: onText)
            firstChosen = DispatchTime.now().uptimeNanoseconds
            counts = try speculate(
                after: next, lookup: PromptLookup(speculation), decoding: &decoding, cache: &cache, read: &read,
                isCancelled: isCancelled, onText: onText)
        }
        while !decoding.isFinished {
            if !decoding.tokens.isEmpty && isCancelled() {
                decoding.cancel()
                break
            }
            let next = try decoding.choose(logits, onText: onText)
            if decoding.steps == 1 { firstChosen = DispatchTime.now().uptimeNanoseconds }
            guard let next else { break }
            logits = try model.forward([next], cache: &cache, logits: .last)
            read.append(next)
        }
        decoding.finish(onText: onText)
        var generation = decoding.generation(
            prompt: prompt, cachedPromptTokens: cached, startNs: start, prefilledNs: prefilled,
            firstChosenNs: firstChosen, endNs: DispatchTime.now().uptimeNanoseconds)
        generation.speculation = counts
        return generation
    }

    /// Decodes after the chosen token `next` until `decoding` ends, each pass reading the token
    /// to read next and a prompt-lookup draft after it, and returns what was drafted and accepted.
    ///
    /// A pass over `[next] + draft` gives logits after each of its tokens. The sampler chooses
    /// from them in turn, exactly as it would one step at a time: while its choice is the draft's
    /// next token, that token was read already and the following row holds the logits after it;
    /// the first choice that differs is read by the next pass, and the cache forgets the draft's
    /// rest (``LlamaKVCache/truncate(to:)``). Since each choice sees the logits of the same
    /// tokens as plain decoding (within float rounding: a pass of many rows adds in other
    /// orders), the tokens, log-probabilities, stops, grammar and budget behave as in plain
    /// decoding, at any temperature and seed: for a draft of fixed tokens, drawing from the
    /// model and comparing accepts each draft token with the model's probability of it, as
    /// speculative sampling's rule min(1, p/q) does when q puts all its mass on the draft.
    private func speculate(
        after first: Int32?, lookup: PromptLookup, decoding: inout Decoding, cache: inout LlamaKVCache,
        read: inout [Int32], isCancelled: () -> Bool, onText: (String, GeneratedToken?) -> Void
    ) throws(ModelError) -> SpeculationCounts {
        var counts = SpeculationCounts()
        var pending = first
        // The draft's length adapts as transformers' "heuristic" schedule does for assisted
        // generation: two more after a draft accepted whole, one fewer after a rejection (at
        // least 1, at most the option's). Drafting is free here, but every draft row is a row of
        // the verifying pass, so a prompt the answer strays from should not cost ten rows a step.
        var length = lookup.options.draftTokens
        while let next = pending {
            if isCancelled() {
                decoding.cancel()
                break
            }
            // Every draft token the sampler accepts is a token generated, and the pass's last row
            // chooses one more: a longer draft than the budget leaves would be read for nothing.
            let room = min(decoding.remaining - 1, cache.remaining - 1)
            let draft = lookup.draft(after: decoding.sequence, limit: min(room, length))
            let logits = try model.forward([next] + draft, cache: &cache, logits: .all)
            read.append(next)
            // The draft's rejected rest is forgotten however the pass ends, a grammar's refusal
            // included: the cache kept for the next turn holds exactly `read`.
            defer { cache.truncate(to: read.count) }
            counts.passes += 1
            counts.drafted += draft.count
            if !draft.isEmpty { counts.draftedPasses += 1 }
            pending = nil
            var acceptedHere = 0
            for row in 0...draft.count {
                guard let chosen = try decoding.choose(logits, row: row, onText: onText) else { break }
                if row < draft.count && chosen == draft[row] {
                    counts.accepted += 1
                    acceptedHere += 1
                    read.append(chosen)
                } else {
                    pending = chosen
                    break
                }
            }
            if !draft.isEmpty {
                length =
                    acceptedHere == draft.count
                    ? min(lookup.options.draftTokens, length + 2) : max(1, length - 1)
            }
        }
        return counts
    }
}
