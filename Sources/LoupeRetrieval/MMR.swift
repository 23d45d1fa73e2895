import LoupeTensor

/// Maximal Marginal Relevance (Carbonell & Goldstein 1998): repeatedly take the candidate with
/// the best λ·sim(q, d) − (1 − λ)·max sim(d, chosen).
package enum MMR {
    package static func rerank(
        query: [Float], candidates: [(id: Int, vector: [Float])], k: Int, lambda: Float = 0.7
    ) -> [Int] {
        func dot(_ a: [Float], _ b: [Float]) -> Float { zip(a, b).reduce(0) { $0 + $1.0 * $1.1 } }
        var remaining = candidates
        var chosen: [(id: Int, vector: [Float])] = []
        while chosen.count < k, !remaining.isEmpty {
            var best = 0
            var bestScore = -Float.infinity
            for (index, candidate) in remaining.enumerated() {
                let redundancy = chosen.map { dot($0.vector, candidate.vector) }.max() ?? 0
                let score = lambda * dot(query, candidate.vector) - (1 - lambda) * redundancy
                if score > bestScore {
                    bestScore = score
                    best = index
                }
            }
            chosen.append(remaining.remove(at: best))
        }
        return chosen.map(\.id)
    }
}
