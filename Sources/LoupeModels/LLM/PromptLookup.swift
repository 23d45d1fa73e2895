/// Speculative decoding's settings: where drafts come from and how long they may be.
package struct SpeculationOptions: Sendable, Equatable {
    /// The most tokens one draft proposes (transformers' `prompt_lookup_num_tokens`).
    package var draftTokens = 10
    /// The longest n-gram matched; shorter ones, down to `minimumNgram`, are tried in turn.
    package var maximumNgram = 3
    package var minimumNgram = 1

    package init(draftTokens: Int = 10) {
        self.draftTokens = draftTokens
    }

    /// The first setting out of range, said plainly; nil when all are usable.
    package var problem: String? {
        if draftTokens < 1 || draftTokens > 64 { return "draft tokens \(draftTokens): use 1 to 64" }
        if minimumNgram < 1 || maximumNgram < minimumNgram {
            return "n-gram sizes \(minimumNgram)…\(maximumNgram): use 1 ≤ minimum ≤ maximum"
        }
        return nil
    }
}

/// What speculation did over one generation: how many tokens were proposed and how many of them
/// the model itself chose (the acceptance rate), in how many forward passes.
package struct SpeculationCounts: Sendable, Equatable, Codable {
    /// Draft tokens read by verification passes.
    package var drafted = 0
    /// Draft tokens the sampler chose in turn (each saved one decode pass).
    package var accepted = 0
    /// Forward passes after the prefill (a plain generation of n tokens takes n − 1).
    package var passes = 0
    /// Passes that carried a draft (a lookup that found nothing reads one token, as plain decoding).
    package var draftedPasses = 0

    package init() {}

    /// Accepted over drafted tokens; 0 when nothing was drafted.
    package var acceptanceRate: Double { drafted > 0 ? Double(accepted) / Double(drafted) : 0 }
}

/// Prompt-lookup drafts (Saxena's "prompt lookup decoding", transformers'
/// `prompt_lookup_num_tokens`, llama.cpp's `lookup` example): the sequence's last n tokens are
/// found earlier in it (the prompt and what has been generated), and the tokens that followed
/// that earlier occurrence are proposed as the continuation. No second model: an edit, a quote or
/// code that repeats the prompt gets long drafts the model accepts, and a verification pass of
/// k + 1 tokens costs little more than one decode step, since decode is bound by reading weights.
package struct PromptLookup: Sendable {
    package let options: SpeculationOptions

    package init(_ options: SpeculationOptions) {
        self.options = options
    }

    /// At most `limit` tokens proposed to follow `history`, empty when none of its last n-grams
    /// (n from ``SpeculationOptions/maximumNgram`` down) occurs earlier in it.
    ///
    /// The most recent earlier occurrence wins (transformers takes the first): when the answer
    /// has drifted from the prompt, the latest match follows the answer's own wording. O(length
    /// × n) per call, a few microseconds for prompts of hundreds of tokens.
    package func draft(after history: [Int32], limit: Int) -> [Int32] {
        let limit = min(limit, options.draftTokens)
        guard limit > 0 else { return [] }
        let count = history.count
        for n in stride(from: min(options.maximumNgram, count - 1), through: options.minimumNgram, by: -1) {
            let suffix = count - n
            // An occurrence starting at `start` ends before the suffix's own start can follow.
            var start = suffix - 1
            while start >= 0 {
                if matches(history, at: start, suffix: suffix, length: n) {
                    let from = start + n
                    return Array(history[from..<min(from + limit, count)])
                }
                start -= 1
            }
        }
        return []
    }

    private func matches(_ history: [Int32], at start: Int, suffix: Int, length: Int) -> Bool {
        for offset in 0..<length where history[start + offset] != history[suffix + offset] { return false }
        return true
    }
}
