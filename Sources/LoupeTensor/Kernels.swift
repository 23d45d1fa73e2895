import CKernels
import Glibc

/// The elementwise and row-wise kernels of a transformer layer. Each works in place on a
/// tensor's buffer and allocates nothing.
package enum Kernels {
    /// `x · wᵀ + bias` for `x` of shape `[…, in]`, `weight` `[out, in]` (PyTorch's Linear
    /// layout), `bias` `[out]`; one sgemm.
    package static func linear(_ x: Tensor, weight: Tensor, bias: Tensor?) -> Tensor {
        let inputs = x.columns
        let outputs = weight.shape[0]
        precondition(weight.shape == [outputs, inputs], "weight \(weight.shape) does not take rows of \(inputs)")
        let rows = x.rows
        // The bias is written into every row first and sgemm adds the product to it (beta = 1),
        // which saves a separate pass over the output.
        var result: Tensor
        if let bias {
            precondition(bias.count == outputs, "bias of \(bias.count) for \(outputs) outputs")
            var storage = [Float]()
            storage.reserveCapacity(rows * outputs)
            for _ in 0..<rows { storage.append(contentsOf: bias.storage) }
            result = Tensor(shape: Array(x.shape.dropLast()) + [outputs], storage: storage)
        } else {
            result = Tensor(zeros: Array(x.shape.dropLast()) + [outputs])
        }
        x.storage.withUnsafeBufferPointer { a in
            weight.storage.withUnsafeBufferPointer { w in
                result.storage.withUnsafeMutableBufferPointer { c in
                    BLAS.sgemm(
                        m: rows, n: outputs, k: inputs, a: a.baseAddress!, lda: inputs, b: w.baseAddress!, ldb: inputs,
                        transposeB: true, c: c.baseAddress!, ldc: outputs, beta: bias == nil ? 0 : 1
                    )
                }
            }
        }
        return result
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

    /// Layer normalisation of every row: `(x − mean) / √(var + eps) · gamma + beta`.
    package static func layerNorm(_ x: inout Tensor, gamma: Tensor, beta: Tensor, epsilon: Float) {
        let columns = x.columns
        gamma.storage.withUnsafeBufferPointer { g in
            beta.storage.withUnsafeBufferPointer { b in
                x.storage.withUnsafeMutableBufferPointer { values in
                    for row in 0..<(values.count / max(1, columns)) {
                        let base = row * columns
                        var sum: Float = 0
                        for column in 0..<columns { sum += values[base + column] }
                        let mean = sum / Float(columns)
                        var squares: Float = 0
                        for column in 0..<columns {
                            let d = values[base + column] - mean
                            squares += d * d
                        }
                        let scale = 1 / (squares / Float(columns) + epsilon).squareRoot()
                        for column in 0..<columns {
                            values[base + column] = (values[base + column] - mean) * scale * g[column] + b[column]
                        }
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
