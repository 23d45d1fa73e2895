/// Clustered unit vectors for measuring a vector index without a corpus: `bench hnsw --synthetic`
/// and the tests that drive it write the same set.
package enum SyntheticVectors {
    /// Unit vectors around `clusters` centres drawn from one xorshift stream: each centre's
    /// coordinates uniform in [0, 1), each vector its centre plus uniform noise of 0.35.
    package static func clustered(_ count: Int, dimensions: Int, clusters: Int, seed: UInt64) -> [[Float]] {
        var state = seed | 1
        func next() -> Float {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return Float(state >> 40) / Float(1 << 24)
        }
        let centres = (0..<clusters).map { _ in (0..<dimensions).map { _ in next() } }
        return (0..<count).map { index in
            let row = centres[index % clusters].map { $0 + 0.35 * next() }
            let norm = max(row.reduce(0) { $0 + $1 * $1 }.squareRoot(), 1e-12)
            return row.map { $0 / norm }
        }
    }
}
