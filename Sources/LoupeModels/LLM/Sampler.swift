import Foundation
import LoupeBase

/// How the next token is chosen from a step's logits.
///
/// The order is vLLM's and Hugging Face's logits processors: the repetition penalty, then the
/// temperature, then top-k, top-p and min-p on the tempered distribution, then a draw. A
/// temperature of 0 is greedy (the highest penalised logit; ties go to the lower id).
package struct SamplingOptions: Sendable, Equatable {
    /// 0: greedy; otherwise logits are divided by it before the filters and the draw.
    package var temperature: Float = 0
    /// Keep only the `topK` most likely tokens (0: off).
    package var topK: Int = 0
    /// Keep the smallest set of most likely tokens whose mass reaches `topP` (1: off).
    package var topP: Float = 1
    /// Drop tokens less likely than `minP` × the most likely one's probability (0: off).
    package var minP: Float = 0
    /// CTRL's penalty on tokens seen in the last `repetitionWindow` tokens: a positive logit is
    /// divided by it, a negative one multiplied (1: off).
    package var repetitionPenalty: Float = 1
    /// How many of the latest tokens the penalty looks at (llama.cpp's `penalty_last_n`).
    package var repetitionWindow: Int = 64
    /// The draw's seed: the same seed, prompt and options give the same tokens.
    package var seed: UInt64 = 0
    /// How many alternatives to keep beside each chosen token, with their log-probabilities.
    package var topLogprobs: Int = 0

    package init() {}

    /// Greedy decoding with `alternatives` alternatives kept.
    package static func greedy(alternatives: Int = 0) -> SamplingOptions {
        var options = SamplingOptions()
        options.topLogprobs = alternatives
        return options
    }

    /// The first option out of range, said plainly; nil when all are usable.
    package var problem: String? {
        if !temperature.isFinite || temperature < 0 { return "temperature \(temperature): use 0 (greedy) or more" }
        if topK < 0 { return "top-k \(topK): use 0 (off) or more" }
        if !(topP > 0 && topP <= 1) { return "top-p \(topP): use a value in (0, 1]" }
        if !(minP >= 0 && minP < 1) { return "min-p \(minP): use a value in [0, 1)" }
        if !repetitionPenalty.isFinite || repetitionPenalty <= 0 {
            return "repetition penalty \(repetitionPenalty): use a positive value (1 is off)"
        }
        if repetitionWindow < 0 { return "repetition window \(repetitionWindow): use 0 or more" }
        if topLogprobs < 0 || topLogprobs > 20 { return "top logprobs \(topLogprobs): use 0 to 20" }
        return nil
    }
}

/// A token and its log-probability under the model.
package struct TokenLogprob: Sendable, Equatable, Codable {
    package var id: Int32
    package var logprob: Float

    package init(id: Int32, logprob: Float) {
        self.id = id
        self.logprob = logprob
    }
}

/// The token a step chose, with its log-probability and the most likely alternatives.
///
/// Log-probabilities are the model's own (a log-softmax of the raw logits, before the penalty,
/// the temperature and the filters), as vLLM reports by default (`raw_logprobs`): they say how
/// sure the model was, whatever sampler drew the token.
package struct TokenChoice: Sendable, Equatable {
    package var token: TokenLogprob
    /// The `topLogprobs` most likely tokens, most likely first (the chosen one may be among them).
    package var alternatives: [TokenLogprob]
    /// The distribution's entropy in nats.
    package var entropy: Float
}

/// Chooses tokens from logits (``SamplingOptions``); one sampler per sequence, since it holds
/// the draw's random state.
package struct Sampler: Sendable {
    package let options: SamplingOptions
    private var random: SplitMix64

    package init(_ options: SamplingOptions) {
        self.options = options
        random = SplitMix64(seed: options.seed)
    }

    /// Chooses the next token from `logits` (one per vocabulary entry); `history` is the sequence
    /// so far (prompt and generated tokens), which the repetition penalty reads.
    package mutating func choose(_ logits: UnsafeBufferPointer<Float>, history: some Collection<Int32>) -> TokenChoice {
        let summary = Self.logSoftmaxSummary(logits, top: options.topLogprobs)
        let id = draw(logits, history: history)
        let logprob = logits[Int(id)] - summary.logSumExp
        return TokenChoice(
            token: TokenLogprob(id: id, logprob: logprob), alternatives: summary.top, entropy: summary.entropy)
    }

    /// `choose(_:history:)` among the tokens `allows` accepts (a grammar's): the draw is made as
    /// usual and kept when allowed; otherwise tokens are checked in order of likelihood (as
    /// llama.cpp's grammar sampler does), every one within the draw's reach (30 tempered nats of
    /// the best allowed; greedy: the best allowed alone), and the draw is made again among them.
    /// Log-probabilities stay the model's own. Nil when no token is allowed.
    package mutating func choose(
        _ logits: UnsafeBufferPointer<Float>, history: some Collection<Int32>, allowing allows: (Int32) -> Bool
    ) -> TokenChoice? {
        let summary = Self.logSoftmaxSummary(logits, top: options.topLogprobs)
        var values = penalised(logits, history: history)
        var id = pick(values)
        if !allows(id) {
            guard mask(&values, allowing: allows) else { return nil }
            id = pick(values)
        }
        return TokenChoice(
            token: TokenLogprob(id: id, logprob: logits[Int(id)] - summary.logSumExp), alternatives: summary.top,
            entropy: summary.entropy)
    }

    /// Sets to -∞ every token `allows` refuses or that lies beyond the draw's reach of the best
    /// allowed one; false when none is allowed. The 64 most likely are checked first, in order;
    /// then one pass finds the best allowed token (checking only tokens above the best so far)
    /// and, when sampling, a second keeps the allowed ones within reach of it. No sort of the
    /// vocabulary.
    private func mask(_ values: inout [Float], allowing allows: (Int32) -> Bool) -> Bool {
        let reach: Float = options.temperature == 0 ? 0 : 30 * options.temperature
        var best = -Float.infinity
        for index in Self.topIndices(values, count: 64) where values[index] > best && allows(Int32(index)) {
            best = values[index]
            break
        }
        for index in values.indices where values[index] > best && allows(Int32(index)) { best = values[index] }
        guard best > -Float.infinity else { return false }
        for index in values.indices {
            let value = values[index]
            if value == -Float.infinity { continue }
            if !(best - value <= reach && allows(Int32(index))) { values[index] = -.infinity }
        }
        return true
    }

    /// The indices of the `count` largest values, largest first (ties: lower index first).
    private static func topIndices(_ values: [Float], count: Int) -> [Int] {
        var best: [Int] = []
        best.reserveCapacity(count + 1)
        for (index, value) in values.enumerated() {
            if best.count == count, let last = best.last, value <= values[last] { continue }
            let at = best.firstIndex { values[$0] < value } ?? best.count
            best.insert(index, at: at)
            if best.count > count { best.removeLast() }
        }
        return best
    }

    /// The log of the softmax's denominator, its entropy, and the `top` most likely tokens.
    package static func logSoftmaxSummary(_ logits: UnsafeBufferPointer<Float>, top: Int) -> (
        logSumExp: Float, entropy: Float, top: [TokenLogprob]
    ) {
        var maximum = -Float.infinity
        for value in logits where value > maximum { maximum = value }
        var sum: Double = 0
        var weighted: Double = 0
        for value in logits {
            let shifted = Double(value - maximum)
            let e = exp(shifted)
            sum += e
            weighted += e * shifted
        }
        let logSumExp = maximum + Float(log(sum))
        // H = log Σe − Σ e·x / Σ e, with x the logits less their maximum.
        let entropy = Float(log(sum) - weighted / sum)
        var best: [TokenLogprob] = []
        if top > 0 {
            best.reserveCapacity(top + 1)
            for (index, value) in logits.enumerated() {
                if best.count == top, let last = best.last, value <= last.logprob { continue }
                let entry = TokenLogprob(id: Int32(index), logprob: value)
                let at = best.firstIndex { $0.logprob < value } ?? best.count
                best.insert(entry, at: at)
                if best.count > top { best.removeLast() }
            }
            for i in best.indices { best[i].logprob -= logSumExp }
        }
        return (logSumExp, entropy, best)
    }

    private mutating func draw(_ logits: UnsafeBufferPointer<Float>, history: some Collection<Int32>) -> Int32 {
        pick(penalised(logits, history: history))
    }

    private func penalised(_ logits: UnsafeBufferPointer<Float>, history: some Collection<Int32>) -> [Float] {
        // The logits with the penalty applied once to each token of the window: one copy of the
        // row, where a lookup per token would sit on every decode step's path.
        var values = Array(logits)
        if options.repetitionPenalty != 1 && options.repetitionWindow > 0 {
            var seen = Set<Int32>()
            for id in history.suffix(options.repetitionWindow) where id >= 0 && Int(id) < values.count {
                guard seen.insert(id).inserted else { continue }
                let value = values[Int(id)]
                values[Int(id)] = value > 0 ? value / options.repetitionPenalty : value * options.repetitionPenalty
            }
        }
        return values
    }

    /// Draws from penalised logits (-∞ for tokens left out).
    private mutating func pick(_ values: [Float]) -> Int32 {
        if options.temperature == 0 {
            var best = 0
            var bestValue = -Float.infinity
            for index in 0..<values.count where values[index] > bestValue {
                best = index
                bestValue = values[index]
            }
            return Int32(best)
        }
        // Tempered logits. Tokens more than 30 nats below the best (each under 1e-13 of its
        // probability, 5e-9 of it over the whole vocabulary) are left out before sorting.
        let inverse = 1 / options.temperature
        var maximum = -Float.infinity
        for index in 0..<values.count { maximum = max(maximum, values[index] * inverse) }
        var candidates: [(id: Int32, logit: Float)] = []
        for index in 0..<values.count {
            let value = values[index] * inverse
            if value >= maximum - 30 { candidates.append((Int32(index), value)) }
        }
        candidates.sort { $0.logit > $1.logit || ($0.logit == $1.logit && $0.id < $1.id) }
        if options.topK > 0 && candidates.count > options.topK {
            candidates.removeLast(candidates.count - options.topK)
        }
        var probabilities = candidates.map { Double(exp($0.logit - maximum)) }
        var total = probabilities.reduce(0, +)
        if options.topP < 1 {
            var mass: Double = 0
            var keep = probabilities.count
            for (index, p) in probabilities.enumerated() {
                mass += p / total
                if mass >= Double(options.topP) {
                    keep = index + 1
                    break
                }
            }
            probabilities.removeLast(probabilities.count - keep)
            total = probabilities.reduce(0, +)
        }
        if options.minP > 0, let first = probabilities.first {
            let floor = first * Double(options.minP)
            let keep = probabilities.firstIndex { $0 < floor } ?? probabilities.count
            probabilities.removeLast(probabilities.count - keep)
            total = probabilities.reduce(0, +)
        }
        let u = random.uniform() * total
        var running: Double = 0
        for (index, p) in probabilities.enumerated() {
            running += p
            if u < running { return candidates[index].id }
        }
        return candidates[probabilities.count - 1].id
    }
}
