import CKernels
import Glibc

/// The elementwise and row-wise kernels of a transformer layer. Each works in place on a
/// tensor's buffer and allocates nothing.
package enum Kernels {
    /// `x · wᵀ + bias` for `x` of shape `[…, in]`, `weight` `[out, in]` (PyTorch's Linear
    /// layout), `bias` `[out]`; one sgemm. The bias is written into every row first and sgemm adds
    /// the product to it (beta = 1), which saves a separate pass over the output.
    package static func linear(_ x: Tensor, weight: Tensor, bias: Tensor?) -> Tensor {
        var result = Tensor(zeros: Array(x.shape.dropLast()) + [weight.shape[0]])
        linear(x, rows: 0..<x.rows, weight: weight, bias: bias, into: &result, at: 0)
        return result
    }

    /// `x[rows] · wᵀ + bias` for a block of `x`'s rows (viewed as `rows × in`), written into
    /// the rows of `output` (`[…, out]`) starting at `outputRow`: a feed-forward layer run a
    /// block of rows at a time keeps its wide intermediate in cache.
    package static func linear(
        _ x: Tensor, rows: Range<Int>, weight: Tensor, bias: Tensor?, into output: inout Tensor, at outputRow: Int
    ) {
        let inputs = x.columns
        let outputs = weight.shape[0]
        precondition(weight.shape == [outputs, inputs], "weight \(weight.shape) does not take rows of \(inputs)")
        precondition(
            rows.upperBound <= x.rows && output.columns == outputs, "rows \(rows) of \(x.shape) into \(output.shape)")
        precondition(outputRow + rows.count <= output.rows, "row \(outputRow) + \(rows.count) past \(output.shape)")
        guard !rows.isEmpty else { return }
        x.storage.withUnsafeBufferPointer { a in
            weight.storage.withUnsafeBufferPointer { w in
                output.storage.withUnsafeMutableBufferPointer { c in
                    let out = c.baseAddress! + outputRow * outputs
                    if let bias {
                        precondition(bias.count == outputs, "bias of \(bias.count) for \(outputs) outputs")
                        bias.storage.withUnsafeBufferPointer { b in
                            for row in 0..<rows.count {
                                (out + row * outputs).update(from: b.baseAddress!, count: outputs)
                            }
                        }
                    }
                    BLAS.sgemm(
                        m: rows.count, n: outputs, k: inputs, a: a.baseAddress! + rows.lowerBound * inputs, lda: inputs,
                        b: w.baseAddress!, ldb: inputs, transposeB: true, c: out, ldc: outputs,
                        beta: bias == nil ? 0 : 1)
                }
            }
        }
    }

    /// Adds `vector` (length `columns`) to every row.
    package static func addRowVector(_ x: inout Tensor, _ vector: Tensor) {
        let columns = x.columns
        precondition(vector.count == columns, "vector of \(vector.count) for rows of \(columns)")
        vector.storage.withUnsafeBufferPointer { v in
            x.storage.withUnsafeMutableBufferPointer { values in
                for row in 0..<(values.count / max(1, columns)) {
                    let base = row * columns
                    for column in 0..<columns { values[base + column] += v[column] }
                }
            }
        }
    }

    /// `x += other`, elementwise.
    package static func add(_ x: inout Tensor, _ other: Tensor) {
        precondition(x.shape == other.shape, "shapes \(x.shape) and \(other.shape) differ")
        other.storage.withUnsafeBufferPointer { o in
            x.storage.withUnsafeMutableBufferPointer { values in
                for index in values.indices { values[index] += o[index] }
            }
        }
    }

    /// Layer normalisation of every row, `(x − mean) / √(var + eps) · gamma + beta`, after adding
    /// `residual` when one is given (the transformer's `LN(x + sublayer(x))` in one pass over
    /// memory); the C kernel, two-pass variance, AVX2 + FMA when the CPU has them.
    package static func layerNorm(
        _ x: inout Tensor, adding residual: Tensor? = nil, gamma: Tensor, beta: Tensor, epsilon: Float
    ) {
        let columns = x.columns
        precondition(gamma.count == columns && beta.count == columns, "gamma/beta for rows of \(columns)")
        if let residual { precondition(residual.shape == x.shape, "shapes \(x.shape) and \(residual.shape) differ") }
        let rows = x.count / max(1, columns)
        gamma.storage.withUnsafeBufferPointer { g in
            beta.storage.withUnsafeBufferPointer { b in
                x.storage.withUnsafeMutableBufferPointer { values in
                    if let residual {
                        residual.storage.withUnsafeBufferPointer { r in
                            loupe_add_layernorm(
                                values.baseAddress, r.baseAddress, g.baseAddress, b.baseAddress, rows, columns, epsilon)
                        }
                    } else {
                        loupe_add_layernorm(
                            values.baseAddress, nil, g.baseAddress, b.baseAddress, rows, columns, epsilon)
                    }
                }
            }
        }
    }

    /// The exact-form GELU, `½x(1 + erf(x/√2))`, as BERT uses it, through the C kernel
    /// (erf by Abramowitz & Stegun 7.1.26, |error| ≤ 1.5e-7; AVX2 + FMA when the CPU has them).
    /// A Swift SIMD16 version measured slower than libm's scalar `erff` on this target (the
    /// generic x86-64 lowering splits it into SSE and lane-by-lane loops); clang vectorises
    /// the same arithmetic in C.
    package static func gelu(_ x: inout Tensor) {
        x.storage.withUnsafeMutableBufferPointer { values in
            loupe_gelu_f32(values.baseAddress, values.count)
        }
    }

    /// Multi-head scaled dot-product attention over a padded batch, every sequence and head in
    /// one C kernel (scores tiled through a matmul micro-kernel, softmax on the tile, `P · V`
    /// written straight into the head's columns): `qkv` is the fused projection
    /// `[B, width, 3 · heads · headSize]` (Q, K, V as column blocks); the result is
    /// `[B, width, heads · headSize]`, with rows past a sequence's length zero.
    ///
    /// - Parameters:
    ///   - probabilities: when given, called with each sequence's weights `[heads, length, length]`
    ///     (for capture); nil keeps them in the kernel's tile only.
    ///   - form: the widest form to run where no weights are asked for: `.fp32`, or Q, K, V and the
    ///     weights rounded to bf16 on AVX-512 BF16 registers or AMX tiles, narrowed to what the CPU
    ///     has (`loupe_attention_heads_bf16`; the int8 encoder's).
    package static func attention(
        qkv: Tensor, lengths: [Int], heads: Int, headSize: Int,
        probabilities: ((_ sequence: Int, _ weights: Tensor) -> Void)? = nil,
        widest: CPUKernels.InstructionSet = .avx512, form: AttentionForm = .fp32
    ) -> Tensor {
        let width = qkv.shape[1]
        let hidden = heads * headSize
        precondition(qkv.shape.count == 3 && qkv.columns == 3 * hidden, "qkv \(qkv.shape) for \(heads) heads")
        var context = Tensor(zeros: [qkv.shape[0], width, hidden])
        qkv.storage.withUnsafeBufferPointer { qkvp in
            context.storage.withUnsafeMutableBufferPointer { cp in
                for (b, length) in lengths.enumerated() {
                    let q = qkvp.baseAddress! + b * width * 3 * hidden
                    var weights = [Float](repeating: 0, count: probabilities == nil ? 0 : heads * length * length)
                    let status = weights.withUnsafeMutableBufferPointer { wp -> Int32 in
                        guard length > 0 else { return 0 }
                        if form != .fp32 && probabilities == nil {
                            return loupe_attention_heads_bf16(
                                length, heads, headSize, 3 * hidden, q, q + hidden, q + 2 * hidden,
                                cp.baseAddress! + b * width * hidden, hidden, form.level)
                        }
                        return loupe_attention_heads_isa(
                            length, heads, headSize, 3 * hidden, q, q + hidden, q + 2 * hidden,
                            cp.baseAddress! + b * width * hidden, hidden, probabilities == nil ? nil : wp.baseAddress,
                            widest.level)
                    }
                    precondition(status == 0, "attention: out of memory for \(length) tokens")
                    probabilities?(b, Tensor(shape: [heads, length, length], storage: weights))
                }
            }
        }
        return context
    }

    /// The forms of `attention` without captured weights (`loupe_attention_form`), widest last:
    /// fp32, and Q, K, V and the weights rounded to bf16 (scores, softmax and sums in fp32) on
    /// AVX-512 BF16 registers (`vdpbf16ps`) or AMX tiles (`tdpbf16ps`). The bf16 forms need a head
    /// of 32; the int8 encoder runs its attention in the process's widest.
    package enum AttentionForm: String, CaseIterable, Sendable {
        case fp32, avx512, amx

        var level: loupe_attention_form {
            switch self {
            case .fp32: LOUPE_ATTENTION_FP32
            case .avx512: LOUPE_ATTENTION_BF16_AVX512
            case .amx: LOUPE_ATTENTION_BF16_AMX
            }
        }

        init(_ form: loupe_attention_form) {
            switch form {
            case LOUPE_ATTENTION_BF16_AMX: self = .amx
            case LOUPE_ATTENTION_BF16_AVX512: self = .avx512
            default: self = .fp32
            }
        }

        /// The form that runs here for heads of `headSize` when this is the widest asked for.
        package func usable(headSize: Int) -> AttentionForm {
            AttentionForm(loupe_attention_usable_form(headSize, level))
        }

        /// The widest form the int8 encoder's attention takes in this process: AMX unless set (to
        /// compare the forms on one machine), narrowed to what the CPU has.
        package static var processWidest: AttentionForm {
            get { AttentionForm(loupe_attention_widest()) }
            set { loupe_attention_set_widest(newValue.level) }
        }
    }

    /// Softmax of each row of a `rows × columns` block starting at `base`, in place, over the
    /// first `valid` columns; columns past `valid` (padding) get probability 0.
    package static func softmaxRows(_ values: UnsafeMutablePointer<Float>, rows: Int, columns: Int, valid: Int) {
        for row in 0..<rows {
            let line = values + row * columns
            var maximum = -Float.infinity
            for column in 0..<valid { maximum = max(maximum, line[column]) }
            var sum: Float = 0
            for column in 0..<valid {
                let e = expf(line[column] - maximum)
                line[column] = e
                sum += e
            }
            let inverse = 1 / sum
            for column in 0..<valid { line[column] *= inverse }
            for column in valid..<columns { line[column] = 0 }
        }
    }
}
