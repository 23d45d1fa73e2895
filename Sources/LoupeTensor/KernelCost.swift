/// Analytic work of each kernel for a shape: floating-point operations and bytes moved
/// (Float32 operands read once, results written once), so a roofline can place it.
package struct KernelCost: Hashable, Sendable {
    /// Operations of `precision`: floating-point ones for `FP32`, integer multiplies and adds for
    /// `INT8`.
    package var flops: Double
    package var bytes: Double
    /// The roof the operations are judged against: `FP32` or `INT8`.
    package var precision: String

    package init(flops: Double, bytes: Double, precision: String = "FP32") {
        self.flops = flops
        self.bytes = bytes
        self.precision = precision
    }

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

    /// `LN(x + residual)` of `rows × columns` in one pass: the add and ~7 operations an element;
    /// reads x and the residual, writes x.
    package static func addLayerNorm(rows: Int, columns: Int) -> KernelCost {
        let n = Double(rows * columns)
        return KernelCost(flops: 8 * n, bytes: 12 * n + 8 * Double(columns))
    }

    /// GELU of `count` elements (erf polynomial and exp: ~25 operations an element).
    package static func gelu(count: Int) -> KernelCost {
        KernelCost(flops: 25 * Double(count), bytes: 8 * Double(count))
    }

    /// Elementwise `x += y` of `count` elements.
    package static func add(count: Int) -> KernelCost {
        KernelCost(flops: Double(count), bytes: 12 * Double(count))
    }

    /// The floating-point operations of one vectorised `exp` (clamp 2, scale 1, round 1,
    /// reduction 4, degree-6 polynomial 12).
    package static let expFlops = 20.0

    /// `a[m, k] · b[k, n]`: 2mnk; each matrix read or written once.
    package static func matmul(m: Int, n: Int, k: Int) -> KernelCost {
        let (m, n, k) = (Double(m), Double(n), Double(k))
        return KernelCost(flops: 2 * m * n * k, bytes: 4 * (m * k + k * n + m * n))
    }

    /// `a[m, k] · dequant(w[n, k])ᵀ` with int8 weights: 2mnk (the widening and scaling of the
    /// weights is not counted); the weights move as one byte each plus a Float32 scale a row.
    package static func matmulInt8(m: Int, n: Int, k: Int) -> KernelCost {
        let (m, n, k) = (Double(m), Double(n), Double(k))
        return KernelCost(flops: 2 * m * n * k, bytes: 4 * m * k + n * k + 4 * n + 4 * m * n)
    }

    /// `quant(a[m, k]) · quant(w[n, k])ᵀ` in int8 with int32 sums (dynamic quantisation): 2mnk
    /// integer operations; a is read as Float32 to quantise it, written and read again as bytes,
    /// the weights move as one byte each plus a scale and a column sum a row, C is written once.
    package static func int8Linear(m: Int, n: Int, k: Int) -> KernelCost {
        let (m, n, k) = (Double(m), Double(n), Double(k))
        return KernelCost(flops: 2 * m * n * k, bytes: 6 * m * k + n * k + 8 * n + 4 * m * n, precision: "INT8")
    }

    /// Row softmax of `rows × columns`. Bytes are the passes' traffic at the level holding a row
    /// (rows longer than L2 do not stay in it between passes): three-pass reads 3 times and
    /// writes twice (max; exp written; scaled), online reads twice and writes once.
    package static func softmax(rows: Int, columns: Int, online: Bool) -> KernelCost {
        let n = Double(rows * columns)
        return online
            ? KernelCost(flops: (4 + 2 * expFlops) * n, bytes: 12 * n)
            : KernelCost(flops: (4 + expFlops) * n, bytes: 20 * n)
    }

    /// Single-head attention, T × d, by `method`: 4T²d for the two products, (5 + exp) T² for
    /// the softmax. Bytes per the FlashAttention paper's IO analysis: materialising writes the
    /// T × T scores and reads them back (7 passes with our three-pass softmax, 3 with the online
    /// one); the tiled form reads Q once, K and V once per block of `queryBlock` rows, and
    /// writes O once.
    package static func attention(length: Int, headSize: Int, materialisedPasses: Int?, queryBlock: Int = 48)
        -> KernelCost
    {
        let t = Double(length)
        let d = Double(headSize)
        let flops = 4 * t * t * d + (5 + expFlops) * t * t
        guard let passes = materialisedPasses else {
            let blocks = (t / Double(queryBlock)).rounded(.up)
            return KernelCost(flops: flops, bytes: 4 * (2 * t * d + 2 * t * d * blocks))
        }
        return KernelCost(flops: flops, bytes: 4 * (4 * t * d) + 4 * t * t * Double(passes))
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
