import LoupeTensor

/// The analytic work of each operation of the forward pass (``LlamaModel/forward(_:caches:logits:profile:)``),
/// for the Roofline panel: FLOPs from the shapes, bytes as each operand read once and each result
/// written once (float32 activations, the weights as the file stores them).
extension LlamaModel {
    /// The operations a profiled forward pass records, by the names it records them under.
    package enum Operation: String, Sendable, CaseIterable {
        /// The token rows looked up (and, in `.q8`, dequantized from Q8_0).
        case embedding = "embedding"
        /// The two RMSNorms of every layer and the final one.
        case rmsNorm = "rmsnorm"
        /// Q, K and V in one product.
        case queryKeyValue = "q·k·v"
        case rope = "rope"
        /// The new keys and values copied into the cache.
        case cacheAppend = "kv append"
        /// Scores, causal softmax and the weighted values, every head.
        case attention = "attention"
        /// The attention output projection.
        case attentionOutput = "attn output"
        /// The two residual additions of every layer.
        case residual = "residual add"
        /// Gate and up in one product.
        case gateUp = "gate·up"
        case swiGLU = "swiglu"
        case down = "down"
        /// The language-model head over the rows that get logits.
        case head = "head"

        /// The products, which run in 8-bit integers in `.q8` (judged against the INT8 roof).
        package var isProduct: Bool {
            switch self {
            case .queryKeyValue, .attentionOutput, .gateUp, .down, .head: true
            default: false
            }
        }
    }

    /// `rows` embedding rows: the embedding's blocks dequantized (one multiply an element) into
    /// float rows, in both precisions.
    func embeddingCost(rows: Int) -> KernelCost {
        let n = Double(rows * configuration.width)
        let stored = Double(embeddingTensor.byteCount) / Double(embeddingTensor.elementCount)
        return KernelCost(flops: n, bytes: n * (stored + 4))
    }

    /// RMSNorm of `rows × width`: a square and an add per element for the mean, two multiplies
    /// (the scale and the weight); reads the rows and the weight, writes the rows.
    func rmsNormCost(rows: Int) -> KernelCost {
        let width = Double(configuration.width)
        let n = Double(rows) * width
        return KernelCost(flops: 4 * n, bytes: 8 * n + 4 * width)
    }

    /// RoPE on each row's Q and K heads: 6 operations a pair (4 multiplies, 2 adds); reads and
    /// writes those columns.
    func ropeCost(rows: Int) -> KernelCost {
        let rotated = Double(rows * (configuration.heads + configuration.keyValueHeads))
        let pairs = Double(configuration.ropeDimensions / 2)
        return KernelCost(flops: 6 * rotated * pairs, bytes: 8 * rotated * Double(configuration.headSize))
    }

    /// The new keys and values copied into the cache: read and written once, no arithmetic.
    func cacheAppendCost(rows: Int) -> KernelCost {
        KernelCost(flops: 0, bytes: 16 * Double(rows * configuration.keyValueWidth))
    }

    /// Causal attention of each sequence's new rows: the row at position p sees p + 1 keys; per
    /// head and seen key, 2d for the score, 2d for the weighted value and ~5 for the softmax
    /// (max, subtract, exp, sum, scale). Bytes: Q read and the context written once, and each
    /// sequence's cached keys and values (all its positions) read once.
    func attentionCost(_ batch: Batch) -> KernelCost {
        let d = Double(configuration.headSize)
        var seen = 0.0
        var cached = 0.0
        for (past, length) in zip(batch.past, batch.lengths) where length > 0 {
            let (p, t) = (Double(past), Double(length))
            seen += t * p + t * (t + 1) / 2
            cached += p + t
        }
        let width = Double(configuration.width)
        let rows = Double(batch.rows)
        return KernelCost(
            flops: Double(configuration.heads) * seen * (4 * d + 5),
            bytes: 8 * rows * width + 8 * cached * Double(configuration.keyValueWidth))
    }

    /// `silu(gate) · up` of `rows × feedForwardWidth`: an exp and 4 operations an element (negate,
    /// add, divide, multiply); reads gate and up, writes the product.
    func swiGLUCost(rows: Int) -> KernelCost {
        let n = Double(rows * configuration.feedForwardWidth)
        return KernelCost(flops: (KernelCost.expFlops + 4) * n, bytes: 12 * n)
    }
}

extension LlamaLinear {
    /// The product's work for `tokens` rows: 2 operations per weight and row. Float: a matmul's
    /// (``KernelCost/matmul(m:n:k:)``). Quantized: integer operations, the stacked parts' weights
    /// read once as stored, the input quantized once (read as float, written as 8-bit blocks:
    /// 4 + 1.5 bytes an element, as ``QuantizedMatrix/cost(tokens:)``), the outputs written.
    func cost(tokens: Int) -> KernelCost {
        switch self {
        case .float(let matrix):
            return KernelCost.matmul(m: tokens, n: matrix.rows, k: matrix.columns)
        case .quantized(let parts):
            let (t, k, n) = (Double(tokens), Double(parts[0].columns), Double(outputs))
            let weights = Double(parts.reduce(0) { $0 + $1.weightByteCount })
            return KernelCost(flops: 2 * t * k * n, bytes: weights + t * k * (4 + 1.5) + 4 * t * n, precision: "INT8")
        }
    }
}
