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
    /// Where the given tokens left the grammar, when one was set and refused one of them: the
    /// rest of the answer was generated without it. Nil when there was no grammar or it
    /// accepted them all (it then held to the end).
    package var grammarLeft: GrammarDeparture?

    /// The index among the given tokens (and in the answer: they come first) of the first one
    /// the grammar refused.
    package var grammarRefusedAt: Int? { grammarLeft?.index }
}

/// The forced token a grammar refused, said plainly for the fork's result and its trace.
package struct GrammarDeparture: Sendable, Equatable {
    /// Its index in the answer.
    package var index: Int
    package var token: Int32
    /// Its text (model output: sanitize before printing).
    package var text: String

    /// One sentence for a span attribute and a command's summary.
    package var summary: String {
        "the forced token \(index) (\(JSONValue.string(text).compactJSON)) is outside the grammar: "
            + "the answer left it there and went on unconstrained"
    }
}

extension Generator {
    /// Generates after `prompt` with the answer's first tokens fixed to `forced` (teacher forcing),
    /// then lets the model go on from there: "what if it had written this here".
    ///
    /// Each forced token is reported with the model's own log-probability of it and the top
    /// alternatives at its position (``TokenChoice``), as if it had been sampled, so a fork's
    /// tokens read like any generation's; they are read one at a time, as a generation reads its
    /// own, so forcing a greedy answer's own tokens gives back the same log-probabilities.
    /// `options.maxTokens` counts the whole answer, forced tokens included. The sampler's random
    /// stream starts at the first token after the forced ones.
    ///
    /// A grammar (`options.constraint`) follows the forced tokens while it accepts them, and the
    /// model's continuation is then constrained as any generation's is. When the grammar refuses
    /// a forced token (a fork into text it never allows, such as prose where a tool call must
    /// begin, or a tool name it does not know), the forced tokens are still honoured: the fork
    /// asked what the model does after them. The rest is generated without the grammar, and the
    /// result says so (``ForcedGeneration/grammarLeft``: which token, its text), for the fork's
    /// trace and its command to show. The grammar is not resumed later: it describes whole
    /// replies, a reply that left it has no state to resume from, and forcing the model back
    /// into a call it had not begun would hide the very continuation the fork asked for.
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
        var left: GrammarDeparture?
        if let constraint = options.constraint {
            if let index = constraint.refused(given) {
                left = GrammarDeparture(index: index, token: given[index], text: tokenizer.piece(given[index]))
                rest.constraint = nil
            } else {
                rest.constraint = constraint.after(given)
            }
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
        let remaining = end == nil ? min(budget, options.maxTokens - given.count) : 0
        var decoding = Decoding(
            prompt: prompt + given, options: rest, budget: max(0, remaining), tokenizer: tokenizer,
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
        let stopReason: StopReason = end != nil ? .eos : remaining <= 0 ? .limit : continued.stopReason
        let timings = GenerationTimings(
            promptTokens: prompt.count, cachedPromptTokens: cached, generatedTokens: tokens.count,
            timeToFirstTokenSeconds: Double(prefilled - start) / 1e9, prefillSeconds: Double(prefilled - start) / 1e9,
            decodeSeconds: Double(finished - prefilled) / 1e9)
        let generation = Generation(
            promptIDs: prompt, tokens: tokens, text: text, stopReason: stopReason,
            stoppingWord: continued.stoppingWord, timings: timings)
        return ForcedGeneration(generation: generation, forcedCount: given.count, grammarLeft: left)
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
