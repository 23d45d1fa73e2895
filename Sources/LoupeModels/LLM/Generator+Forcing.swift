import Foundation
import LoupeBase
import LoupeTensor

/// A generation whose answer began with tokens it was given (a token fork), and whether the
/// grammar held to the end.
package struct ForcedGeneration: Sendable {
    /// The whole answer: the given tokens, each with the model's own distribution at its
    /// position, then the tokens the model chose after them.
    package var generation: Generation
    /// How many of the answer's first tokens were given (an end-of-generation token among them
    /// ends the answer there and is not counted).
    package var forcedCount: Int
    /// The index among the given tokens of the first one the grammar refused; the rest of the
    /// answer was then generated without it. Nil when there was no grammar or it accepted them.
    package var grammarRefusedAt: Int?
}

extension Generator {
    /// Generates after `prompt` with the answer's first tokens fixed to `forced` (teacher forcing),
    /// then lets the model go on from there: "what if it had written this here".
    ///
    /// Each forced token is reported with the model's own log-probability of it and the top
    /// alternatives at its position (``TokenChoice``), as if it had been sampled, so a fork's
    /// tokens read like any generation's; they are read one at a time, as a generation reads its
    /// own, so forcing a greedy answer's own tokens gives back the same log-probabilities.
    /// `options.maxTokens` counts the whole answer, forced tokens included. A grammar
    /// (`options.constraint`) follows the forced tokens while it accepts them; when it refuses
    /// one (a fork into text the grammar never allowed) the rest is generated without it. The
    /// sampler's random stream starts at the first token after the forced ones.
    ///
    /// - Throws: ``ModelError`` for a forced or prompt id outside the vocabulary, or a prompt and
    ///   forced tokens that leave no room in the context.
    package func generate(
        prompt: [Int32], forcing forced: [Int32], options: GenerationOptions, reusing promptCache: inout PromptCache,
        isCancelled: () -> Bool = { false }
    ) throws(ModelError) -> ForcedGeneration {
        // An end-of-generation token among the forced ones ends the answer there.
        let end = forced.firstIndex { tokenizer.endOfGenerationIDs.contains($0) }
        let given = Array(forced.prefix(end ?? forced.count))
        let (context, budget) = try limits(prompt: prompt + given, options: options)
        var rest = options
        var refused: Int?
        if let constraint = options.constraint {
            refused = constraint.refused(given)
            rest.constraint = refused == nil ? constraint.after(given) : nil
        }
        let taken = try promptCache.take(for: prompt, context: context, model: model)
        var cache = taken.0
        let cached = taken.1
        var read = Array(prompt.prefix(cached))
        defer { promptCache.keep(cache, holding: read) }

        let start = DispatchTime.now().uptimeNanoseconds
        let fresh = Array(prompt[cached...])
        var logits = try model.forward(fresh, cache: &cache, logits: .last)
        read += fresh
        // The forced tokens are read one at a time, as a generation reads its own: a pass of
        // several rows quantizes its activations together (q8) and would give each a slightly
        // different distribution than the step it replays.
        var tokens: [GeneratedToken] = []
        tokens.reserveCapacity(given.count)
        for id in given {
            tokens.append(forcedToken(id, logits: logits, top: options.sampling.topLogprobs))
            logits = try model.forward([id], cache: &cache, logits: .last)
            read.append(id)
        }
        let prefilled = DispatchTime.now().uptimeNanoseconds

        // The answer's budget counts the forced tokens; an end-of-generation token among them
        // leaves nothing to continue.
        let left = end == nil ? min(budget, options.maxTokens - given.count) : 0
        var decoding = Decoding(
            prompt: prompt + given, options: rest, budget: max(0, left), tokenizer: tokenizer,
            fileName: model.fileName)
        while !decoding.isFinished {
            if !decoding.tokens.isEmpty && isCancelled() {
                decoding.cancel()
                break
            }
            guard let next = try decoding.choose(logits, onText: { _, _ in }) else { break }
            logits = try model.forward([next], cache: &cache, logits: .last)
            read.append(next)
        }
        decoding.finish(onText: { _, _ in })
        let finished = DispatchTime.now().uptimeNanoseconds
        let continued = decoding.generation(
            prompt: prompt + given, cachedPromptTokens: cached, startNs: prefilled, prefilledNs: prefilled,
            firstChosenNs: prefilled, endNs: finished)

        tokens += continued.tokens
        // The text decoded whole, so a character split between a forced token and the next
        // comes out right; a stop string cut the continuation's own text.
        let text =
            continued.stoppingWord == nil
            ? tokenizer.decode(tokens.map(\.id)) : tokenizer.decode(given) + continued.text
        let stopReason: StopReason = end != nil ? .eos : left <= 0 ? .limit : continued.stopReason
        let timings = GenerationTimings(
            promptTokens: prompt.count, cachedPromptTokens: cached, generatedTokens: tokens.count,
            timeToFirstTokenSeconds: Double(prefilled - start) / 1e9, prefillSeconds: Double(prefilled - start) / 1e9,
            decodeSeconds: Double(finished - prefilled) / 1e9)
        let generation = Generation(
            promptIDs: prompt, tokens: tokens, text: text, stopReason: stopReason,
            stoppingWord: continued.stoppingWord, timings: timings)
        return ForcedGeneration(generation: generation, forcedCount: given.count, grammarRefusedAt: refused)
    }

    /// Token `id` as the choice from `logits` (`[1, vocabulary]`): the model's own
    /// log-probability of it, the entropy and the `top` most likely tokens there.
    private func forcedToken(_ id: Int32, logits: Tensor, top: Int) -> GeneratedToken {
        let choice = logits.storage.withUnsafeBufferPointer { values -> TokenChoice in
            let summary = Sampler.logSoftmaxSummary(values, top: top)
            return TokenChoice(
                token: TokenLogprob(id: id, logprob: values[Int(id)] - summary.logSumExp),
                alternatives: summary.top, entropy: summary.entropy)
        }
        return GeneratedToken(id: id, piece: tokenizer.piece(id), choice: choice)
    }
}
