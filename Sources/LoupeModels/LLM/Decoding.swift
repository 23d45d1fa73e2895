import LoupeBase
import LoupeTensor

/// One sequence's choices after its prompt: each step's logits in, the token to read next out,
/// until an end-of-generation token, a stop string or the token budget ends it.
///
/// It holds everything per sequence that is not the model's: the sampler's random state, the
/// grammar's matcher, the text decoder and the stop strings. ``Generator`` runs one over a
/// sequence's own cache; a batching scheduler runs many, one per sequence of a shared forward
/// pass, and each then chooses exactly as it would alone (the same seed gives the same tokens).
package struct Decoding: Sendable {
    /// The tokens chosen so far (an end-of-generation token is not one of them).
    package private(set) var tokens: [GeneratedToken] = []
    /// The text made final so far, without a stop string.
    package private(set) var text = ""
    /// Choices made, the one that ended generation included.
    package private(set) var steps = 0
    /// True once generation has ended (see ``stopReason``).
    package private(set) var isFinished: Bool
    /// Why generation ended (``StopReason/limit`` until it has).
    package private(set) var stopReason = StopReason.limit
    /// The stop string that ended it.
    package private(set) var stoppingWord: String?

    private let tokenizer: BPETokenizer
    private let fileName: String
    private let budget: Int
    private var sampler: Sampler
    private var matcher: TokenMatcher?
    private var decoder: BPETokenizer.StreamDecoder
    private var stops: StopStrings
    private var history: [Int32]
    private var released = false

    /// - Parameters:
    ///   - prompt: the prompt's ids (the repetition penalty looks back into them).
    ///   - budget: the most tokens to generate (the options' limit within the context left).
    ///   - fileName: the model's file, named by errors.
    package init(
        prompt: [Int32], options: GenerationOptions, budget: Int, tokenizer: BPETokenizer, fileName: String
    ) {
        self.tokenizer = tokenizer
        self.fileName = fileName
        self.budget = budget
        sampler = Sampler(options.sampling)
        matcher = options.constraint?.start()
        decoder = BPETokenizer.StreamDecoder(tokenizer)
        stops = StopStrings(options.stops)
        history = prompt
        isFinished = budget <= 0
    }

    /// Chooses a token from the logits of the step after the last token read (`[1, vocabulary]`),
    /// reporting the text it makes final to `onText`; returns the token to read next,
    /// or nil when generation has ended.
    ///
    /// - Throws: ``ModelError`` when the grammar allows no token.
    package mutating func choose(
        _ logits: Tensor, onText: (String, GeneratedToken?) -> Void
    ) throws(ModelError) -> Int32? {
        try choose(logits, row: 0, onText: onText)
    }

    /// `choose(_:onText:)` from row `row` of `logits` (`[rows, vocabulary]`): a verification
    /// pass's logits after each of a draft's tokens, chosen from in turn.
    package mutating func choose(
        _ logits: Tensor, row: Int, onText: (String, GeneratedToken?) -> Void
    ) throws(ModelError) -> Int32? {
        precondition(!isFinished, "a choice after generation ended")
        precondition(row >= 0 && row < logits.rows, "row \(row) of \(logits.rows) rows of logits")
        steps += 1
        let width = logits.columns
        let choice: TokenChoice
        if let current = matcher {
            let allowed = logits.storage.withUnsafeBufferPointer {
                sampler.choose(
                    UnsafeBufferPointer(rebasing: $0[(row * width)..<((row + 1) * width)]), history: history,
                    allowing: current.stepChecker())
            }
            guard let allowed else {
                throw ModelError(file: fileName, message: "the grammar allows no token after \(text.debugDescription)")
            }
            choice = allowed
            matcher?.accept(allowed.token.id)
        } else {
            choice = logits.storage.withUnsafeBufferPointer {
                sampler.choose(UnsafeBufferPointer(rebasing: $0[(row * width)..<((row + 1) * width)]), history: history)
            }
        }
        let id = choice.token.id
        if tokenizer.endOfGenerationIDs.contains(id) {
            return end(.eos)
        }
        let token = GeneratedToken(id: id, piece: tokenizer.piece(id), choice: choice)
        tokens.append(token)
        history.append(id)
        let (released, stop) = stops.feed(decoder.append(id))
        text += released
        onText(released, token)
        if let stop {
            stoppingWord = stop
            return end(.word)
        }
        return tokens.count < budget ? id : end(.limit)
    }

    /// The prompt and the tokens chosen so far: what a prompt-lookup draft searches.
    package var sequence: [Int32] { history }

    /// Tokens still allowed before the budget ends generation.
    package var remaining: Int { budget - tokens.count }

    /// Ends generation before its next choice (the caller asked to stop).
    package mutating func cancel() {
        _ = end(.cancelled)
    }

    /// Releases the text held back (an incomplete character, a possible stop string's start) to
    /// `onText` with a nil token, once generation has ended; a stop string found in it ends the
    /// text there. Call once.
    package mutating func finish(onText: (String, GeneratedToken?) -> Void) {
        precondition(isFinished && !released, "finish before generation ended, or twice")
        released = true
        guard stoppingWord == nil else { return }
        let (held, stop) = stops.feed(decoder.finish())
        let rest = held + (stop == nil ? stops.finish() : "")
        if let stop {
            stopReason = .word
            stoppingWord = stop
        }
        text += rest
        if !rest.isEmpty { onText(rest, nil) }
    }

    /// The generation, once ended and finished, with its timings from the clock readings (in
    /// nanoseconds of one monotonic clock) of its start, the end of its prefill, its first
    /// choice and its end.
    package func generation(
        prompt: [Int32], cachedPromptTokens: Int, startNs: UInt64, prefilledNs: UInt64, firstChosenNs: UInt64,
        endNs: UInt64
    ) -> Generation {
        precondition(released, "the generation of a sequence not finished")
        let timings = GenerationTimings(
            promptTokens: prompt.count, cachedPromptTokens: cachedPromptTokens, generatedTokens: tokens.count,
            timeToFirstTokenSeconds: Double(firstChosenNs - startNs) / 1e9,
            prefillSeconds: Double(prefilledNs - startNs) / 1e9, decodeSeconds: Double(endNs - firstChosenNs) / 1e9)
        return Generation(
            promptIDs: prompt, tokens: tokens, text: text, stopReason: stopReason, stoppingWord: stoppingWord,
            timings: timings)
    }

    private mutating func end(_ reason: StopReason) -> Int32? {
        isFinished = true
        stopReason = reason
        return nil
    }
}
