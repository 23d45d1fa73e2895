import LoupeTensor

/// Exact nearest neighbours by inner product over unit vectors (cosine), one sgemm per batch of
/// queries.
package struct FlatIndex: Sendable {
    package let dimensions: Int
    package private(set) var vectors: [Float]

    package var count: Int { dimensions == 0 ? 0 : vectors.count / dimensions }

    package init(dimensions: Int, vectors: [Float] = []) {
        precondition(
            vectors.count % max(1, dimensions) == 0, "vectors of \(vectors.count) for \(dimensions) dimensions")
        self.dimensions = dimensions
        self.vectors = vectors
    }

    package mutating func add(_ vector: [Float]) {
        precondition(vector.count == dimensions, "vector of \(vector.count), index of \(dimensions)")
        vectors.append(contentsOf: vector)
    }

    /// Cosine similarity of `query` to every vector.
    package func similarities(_ query: [Float]) -> [Float] {
        precondition(query.count == dimensions, "query of \(query.count), index of \(dimensions)")
        var result = [Float](repeating: 0, count: count)
        guard count > 0 else { return result }
        vectors.withUnsafeBufferPointer { v in
            query.withUnsafeBufferPointer { q in
                result.withUnsafeMutableBufferPointer { r in
                    BLAS.sgemm(
                        m: count, n: 1, k: dimensions, a: v.baseAddress!, lda: dimensions, b: q.baseAddress!, ldb: 1,
                        c: r.baseAddress!, ldc: 1)
                }
            }
        }
        return result
    }

    /// The `k` most similar, best first (ties: lower index first).
    package func search(_ query: [Float], k: Int) -> [(index: Int, score: Float)] {
        let similarities = similarities(query)
        return similarities.indices.sorted {
            similarities[$0] != similarities[$1] ? similarities[$0] > similarities[$1] : $0 < $1
        }.prefix(k).map { ($0, similarities[$0]) }
    }
}
