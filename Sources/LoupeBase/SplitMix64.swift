import Foundation

/// SplitMix64: a small, fast, seedable generator (Steele et al. 2014). Every seeded random
/// stream in Loupe comes from it: bootstrap resampling (evals), an SAE's initialisation and
/// batch order, the benchmarks' synthetic data. A seed gives the same stream on every machine.
package struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A double uniform in [0, 1) from the top 53 bits.
    package mutating func uniform() -> Double { Double(next() >> 11) / Double(1 << 53) }

    /// A standard normal by Box-Muller (one of the pair; the other is dropped so that the stream
    /// depends only on how many normals were drawn).
    package mutating func normal() -> Float {
        let u = max(uniform(), 1e-300)
        let v = uniform()
        return Float((-2 * log(u)).squareRoot() * cos(2 * .pi * v))
    }
}
