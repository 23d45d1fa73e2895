/// Analytic work of each kernel for a shape: floating-point operations and bytes moved
/// (Float32 operands read once, results written once), so a roofline can place it.
package struct KernelCost: Hashable, Sendable {
    package var flops: Double
    package var bytes: Double

    /// `x[rows, inputs] · wᵀ[inputs, outputs] + bias`: 2·rows·inputs·outputs multiply-adds plus
    /// the bias; reads x, w and the bias-filled output, writes the output.
    package static func linear(rows: Int, inputs: Int, outputs: Int) -> KernelCost {
        let r = Double(rows)
        let i = Double(inputs)
        let o = Double(outputs)
        return KernelCost(flops: 2 * r * i * o + r * o, bytes: 4 * (r * i + i * o + 2 * r * o + o))
    }

    /// Self-attention over sequences of `lengths`, each head: QKᵀ (2T²d), softmax (~5T²: max,
    /// subtract, exp, sum, scale), P·V (2T²d); reads Q, K, V, writes the context, the T×T scores
    /// staying in cache.
    package static func attention(lengths: [Int], heads: Int, headSize: Int) -> KernelCost {
        var flops = 0.0
        var bytes = 0.0
        for length in lengths {
            let t = Double(length)
            let d = Double(headSize)
            flops += Double(heads) * (4 * t * t * d + 5 * t * t)
            bytes += Double(heads) * 4 * (4 * t * d)
        }
        return KernelCost(flops: flops, bytes: bytes)
    }

    /// Layer normalisation of `rows × columns`: ~7 operations an element; reads and writes it.
    package static func layerNorm(rows: Int, columns: Int) -> KernelCost {
        let n = Double(rows * columns)
        return KernelCost(flops: 7 * n, bytes: 8 * n + 8 * Double(columns))
    }

    /// GELU of `count` elements (erf polynomial and exp: ~25 operations an element).
    package static func gelu(count: Int) -> KernelCost {
        KernelCost(flops: 25 * Double(count), bytes: 8 * Double(count))
    }

    /// Elementwise `x += y` of `count` elements.
    package static func add(count: Int) -> KernelCost {
        KernelCost(flops: Double(count), bytes: 12 * Double(count))
    }

    /// Embedding lookup: word + position + type rows summed for `tokens` tokens.
    package static func embedding(tokens: Int, hidden: Int) -> KernelCost {
        let n = Double(tokens * hidden)
        return KernelCost(flops: 2 * n, bytes: 16 * n)
    }
}

extension OperationProfile {
    /// `measure` with a ``KernelCost``.
    @inline(__always)
    package static func measure<T>(_ profile: OperationProfile?, _ name: String, _ cost: KernelCost, _ body: () -> T)
        -> T
    {
        measure(profile, name, flops: cost.flops, bytes: cost.bytes, body)
    }
}
