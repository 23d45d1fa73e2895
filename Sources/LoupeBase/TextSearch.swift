/// Plain-text search without Foundation.
package enum TextSearch {
    /// The non-overlapping grapheme ranges of `needle` in `haystack`, compared case-insensitively
    /// grapheme by grapheme.
    package static func caseInsensitiveMatches(of needle: String, in haystack: [Character]) -> [Range<Int>] {
        let pattern = needle.map { $0.lowercased() }
        guard !pattern.isEmpty, pattern.count <= haystack.count else { return [] }
        let lowered = haystack.map { $0.lowercased() }
        var matches: [Range<Int>] = []
        var start = 0
        while start + pattern.count <= lowered.count {
            if lowered[start..<(start + pattern.count)].elementsEqual(pattern) {
                matches.append(start..<(start + pattern.count))
                start += pattern.count
            } else {
                start += 1
            }
        }
        return matches
    }

    /// True when `needle` occurs in `haystack`, ignoring case.
    package static func containsIgnoringCase(_ haystack: String, _ needle: String) -> Bool {
        needle.isEmpty || !caseInsensitiveMatches(of: needle, in: Array(haystack)).isEmpty
    }
}
