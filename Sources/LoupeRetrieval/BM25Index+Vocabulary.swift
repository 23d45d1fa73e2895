extension BM25Index {
    /// The indexed term closest to `term` by edit distance (insertions, deletions, substitutions
    /// and swaps of neighbours, each 1), at most `maxDistance` away (default: one edit per four
    /// characters, at least one); ties go to the term in more documents, then the smaller one.
    /// Nil when `term` is indexed itself or nothing is that close: the "did you mean" of a query
    /// word that matches nothing.
    package func closestTerm(to term: String, maxDistance: Int? = nil) -> String? {
        guard postings[term] == nil else { return nil }
        let target = Array(term.unicodeScalars)
        let limit = maxDistance ?? max(1, target.count / 4)
        var best: (distance: Int, documents: Int, term: String)?
        for (candidate, list) in postings {
            let scalars = Array(candidate.unicodeScalars)
            guard abs(scalars.count - target.count) <= limit else { continue }
            guard let distance = Self.editDistance(target, scalars, atMost: limit) else { continue }
            let key = (distance, -list.count, candidate)
            if best.map({ key < ($0.distance, -$0.documents, $0.term) }) ?? true {
                best = (distance, list.count, candidate)
            }
        }
        return best?.term
    }

    /// Optimal string alignment distance between `a` and `b`, or nil when it exceeds `limit`
    /// (rows stop early once every cell is past it).
    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar], atMost limit: Int) -> Int? {
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) <= limit ? max(a.count, b.count) : nil }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            var rowMinimum = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { value = min(value, previous2[j - 2] + 1) }
                current[j] = value
                rowMinimum = min(rowMinimum, value)
            }
            if rowMinimum > limit { return nil }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count] <= limit ? previous[b.count] : nil
    }
}
