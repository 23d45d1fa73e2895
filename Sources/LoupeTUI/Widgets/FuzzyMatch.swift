/// Subsequence matching with a score, for the command palette (in the spirit of fzf): every
/// query character must appear in order, the first at the start of a word (so "sae" does not
/// find "workspace init" through the s inside "workspace"); consecutive runs, word starts and an
/// early first hit score higher.
package enum FuzzyMatch {
    /// A match: its score (higher is better) and the grapheme offsets that matched.
    package struct Result: Hashable, Sendable {
        package var score: Int
        package var positions: [Int]
    }

    /// Matches `query` against `candidate`, case-insensitively; nil when it does not match.
    /// An empty query matches everything with score 0.
    ///
    /// Each occurrence of the query's first character is tried as the start of a greedy
    /// alignment and the best-scoring one wins, so "check" finds the word in "workspace check"
    /// rather than the `c` inside "workspace". O(candidate × query).
    package static func match(_ query: String, in candidate: String) -> Result? {
        let needle = Array(query.lowercased().filter { $0 != " " })
        guard !needle.isEmpty else { return Result(score: 0, positions: []) }
        let haystack = Array(candidate.lowercased())
        var best: Result?
        for start in haystack.indices where haystack[start] == needle[0] && isWordStart(start, in: haystack) {
            guard let result = align(needle, in: haystack, from: start) else { break }
            if result.score > (best?.score ?? Int.min) { best = result }
        }
        return best
    }

    private static func align(_ needle: [Character], in haystack: [Character], from start: Int) -> Result? {
        var positions: [Int] = []
        var score = 0
        var queryIndex = 0
        var previous = -2
        var index = start
        while index < haystack.count, queryIndex < needle.count {
            if haystack[index] == needle[queryIndex] {
                positions.append(index)
                score += 1
                if index == previous + 1 { score += 8 }
                if isWordStart(index, in: haystack) { score += 6 }
                previous = index
                queryIndex += 1
            }
            index += 1
        }
        guard queryIndex == needle.count else { return nil }
        score -= positions[0] / 4
        score -= haystack.count / 16
        return Result(score: score, positions: positions)
    }

    /// True when `index` starts a word: the first character, or one after a non-alphanumeric.
    private static func isWordStart(_ index: Int, in haystack: [Character]) -> Bool {
        index == 0 || !(haystack[index - 1].isLetter || haystack[index - 1].isNumber)
    }
}
