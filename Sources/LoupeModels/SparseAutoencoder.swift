import Foundation
import LoupeTensor

/// A sparse autoencoder over activation vectors: `z = σ(W_encᵀ(x − b_dec) + b_enc)`,
/// `x̂ = W_decᵀ z + b_dec`, with σ either TopK (OpenAI, Gao et al. 2024: keep the k largest
/// pre-activations, then ReLU) or ReLU with an L1 penalty scaled by each decoder row's norm
/// (Anthropic, April 2024). Matrices are row-major `[Float]`: the encoder is `inputs × width`
/// (x · W_enc), the decoder `width × inputs` (row j is feature j's direction). Products go
/// through OpenBLAS.
package struct SparseAutoencoder: Hashable, Sendable {
    package enum Activation: Hashable, Sendable {
        /// TopK with an auxiliary loss: the `auxK` largest pre-activations of dead latents
        /// reconstruct the residual, weighted by `auxCoefficient`.
        case topK(k: Int, auxK: Int, auxCoefficient: Float)
        /// ReLU with `l1 · Σ_j z_j ‖W_dec[j]‖`.
        case relu(l1: Float)
    }

    package var inputs: Int
    package var width: Int
    package var activation: Activation
    package var encoder: [Float]
    package var encoderBias: [Float]
    package var decoder: [Float]
    /// The pre-encoder bias: subtracted before encoding, added back after decoding.
    package var decoderBias: [Float]
    /// What inputs are multiplied by before they reach the SAE (so their mean norm is √inputs);
    /// callers apply it, the SAE stores it.
    package var inputScale: Float = 1

    /// Decoder rows are random unit vectors, the encoder their transpose (a tied start), biases 0.
    package init(inputs: Int, width: Int, activation: Activation, seed: UInt64 = 0x5AE) {
        precondition(inputs > 0 && width > 0, "an SAE needs inputs and latents")
        self.inputs = inputs
        self.width = width
        self.activation = activation
        var generator = SAERandom(seed: seed)
        var decoder = [Float](repeating: 0, count: width * inputs)
        for j in 0..<width {
            var norm: Float = 0
            for i in 0..<inputs {
                let value = generator.normal()
                decoder[j * inputs + i] = value
                norm += value * value
            }
            let scale = 1 / max(norm.squareRoot(), 1e-12)
            for i in 0..<inputs { decoder[j * inputs + i] *= scale }
        }
        var encoder = [Float](repeating: 0, count: inputs * width)
        for j in 0..<width { for i in 0..<inputs { encoder[i * width + j] = decoder[j * inputs + i] } }
        self.encoder = encoder
        self.decoder = decoder
        encoderBias = [Float](repeating: 0, count: width)
        decoderBias = [Float](repeating: 0, count: inputs)
    }

    /// One batch through the SAE.
    package struct Forward: Sendable {
        package var rows: Int
        /// `x − b_dec`, rows × inputs.
        package var centered: [Float]
        /// Pre-activations, rows × width.
        package var pre: [Float]
        /// Codes (dense storage, mostly zeros), rows × width.
        package var codes: [Float]
        /// Reconstructions, rows × inputs.
        package var reconstruction: [Float]
    }

    package func forward(_ x: [Float], rows: Int) -> Forward {
        precondition(x.count == rows * inputs, "expected \(rows) × \(inputs) values")
        var centered = x
        for r in 0..<rows { for i in 0..<inputs { centered[r * inputs + i] -= decoderBias[i] } }
        var pre = [Float](repeating: 0, count: rows * width)
        for r in 0..<rows { for j in 0..<width { pre[r * width + j] = encoderBias[j] } }
        BLAS.sgemm(
            m: rows, n: width, k: inputs, a: centered, lda: inputs, b: encoder, ldb: width, c: &pre, ldc: width,
            beta: 1)
        let codes = activate(pre, rows: rows)
        var reconstruction = [Float](repeating: 0, count: rows * inputs)
        for r in 0..<rows { for i in 0..<inputs { reconstruction[r * inputs + i] = decoderBias[i] } }
        BLAS.sgemm(
            m: rows, n: inputs, k: width, a: codes, lda: width, b: decoder, ldb: inputs, c: &reconstruction,
            ldc: inputs, beta: 1)
        return Forward(rows: rows, centered: centered, pre: pre, codes: codes, reconstruction: reconstruction)
    }

    /// σ applied row by row.
    func activate(_ pre: [Float], rows: Int) -> [Float] {
        switch activation {
        case .relu: return pre.map { max(0, $0) }
        case .topK(let k, _, _):
            var codes = [Float](repeating: 0, count: pre.count)
            for r in 0..<rows {
                for j in Self.largest(pre, row: r, width: width, count: k, among: nil) {
                    codes[r * width + j] = max(0, pre[r * width + j])
                }
            }
            return codes
        }
    }

    /// The indices of the `count` largest values of row `row` (restricted to `among` if given).
    static func largest(_ values: [Float], row: Int, width: Int, count: Int, among: [Bool]?) -> [Int] {
        var best: [(value: Float, index: Int)] = []
        best.reserveCapacity(count + 1)
        let base = row * width
        for j in 0..<width where among?[j] ?? true {
            let value = values[base + j]
            if best.count < count {
                best.append((value, j))
                if best.count == count { best.sort { $0.value < $1.value } }
            } else if count > 0, value > best[0].value {
                // Replace the smallest, keep ascending order by one insertion.
                var index = 0
                while index + 1 < best.count && best[index + 1].value < value {
                    best[index] = best[index + 1]
                    index += 1
                }
                best[index] = (value, j)
            }
        }
        return best.map(\.index)
    }

    /// The gradient of the loss with respect to every parameter.
    package struct Gradients: Sendable {
        package var encoder: [Float]
        package var encoderBias: [Float]
        package var decoder: [Float]
        package var decoderBias: [Float]
    }

    /// The terms of the training loss on a batch (each a mean over its rows).
    package struct Loss: Hashable, Sendable {
        /// ‖x̂ − x‖² per row, averaged (SAELens's `mse_loss`: summed over the vector).
        package var reconstruction: Float
        /// TopK's auxiliary loss (already weighted), or 0.
        package var auxiliary: Float
        /// ReLU's weighted L1 penalty, or 0.
        package var sparsity: Float
        package var total: Float { reconstruction + auxiliary + sparsity }
    }

    /// The loss on `x` and its gradients. `dead` marks latents that have not fired for a while
    /// (TopK's auxiliary loss reconstructs the residual with them).
    package func lossAndGradients(_ x: [Float], rows: Int, dead: [Bool]? = nil) -> (
        loss: Loss, gradients: Gradients, forward: Forward
    ) {
        let f = forward(x, rows: rows)
        let n = Float(rows)
        // dL/dx̂ = 2 (x̂ − x) / n.
        var residual = [Float](repeating: 0, count: rows * inputs)
        var reconstruction: Float = 0
        for index in 0..<residual.count {
            let difference = f.reconstruction[index] - x[index]
            reconstruction += difference * difference
            residual[index] = 2 * difference / n
        }
        reconstruction /= n
        var gDecoder = [Float](repeating: 0, count: width * inputs)
        BLAS.sgemm(
            m: width, n: inputs, k: rows, a: f.codes, lda: width, transposeA: true, b: residual, ldb: inputs,
            c: &gDecoder, ldc: inputs)
        var gDecoderBias = [Float](repeating: 0, count: inputs)
        for r in 0..<rows { for i in 0..<inputs { gDecoderBias[i] += residual[r * inputs + i] } }
        // dL/dz = residual · W_decᵀ.
        var gCodes = [Float](repeating: 0, count: rows * width)
        BLAS.sgemm(
            m: rows, n: width, k: inputs, a: residual, lda: inputs, b: decoder, ldb: inputs, transposeB: true,
            c: &gCodes, ldc: width)
        var sparsity: Float = 0
        var auxiliary: Float = 0
        var gPre = [Float](repeating: 0, count: rows * width)
        switch activation {
        case .relu(let l1):
            let norms = decoderNorms()
            for r in 0..<rows {
                for j in 0..<width where f.pre[r * width + j] > 0 {
                    let z = f.codes[r * width + j]
                    sparsity += l1 * z * norms[j]
                    gPre[r * width + j] = gCodes[r * width + j] + l1 * norms[j] / n
                    // The penalty's pull on the decoder row's norm.
                    for i in 0..<inputs {
                        gDecoder[j * inputs + i] += l1 * z * decoder[j * inputs + i] / max(norms[j], 1e-12) / n
                    }
                }
            }
            sparsity /= n
        case .topK(_, let auxK, let coefficient):
            for index in 0..<gPre.count where f.codes[index] > 0 { gPre[index] = gCodes[index] }
            if let dead, auxK > 0, coefficient > 0, dead.contains(true) {
                // The residual x − x̂ (held constant) reconstructed by the dead latents' top auxK.
                var auxCodes = [Float](repeating: 0, count: rows * width)
                for r in 0..<rows {
                    for j in Self.largest(f.pre, row: r, width: width, count: auxK, among: dead) {
                        auxCodes[r * width + j] = max(0, f.pre[r * width + j])
                    }
                }
                var auxOut = [Float](repeating: 0, count: rows * inputs)
                BLAS.sgemm(
                    m: rows, n: inputs, k: width, a: auxCodes, lda: width, b: decoder, ldb: inputs, c: &auxOut,
                    ldc: inputs)
                var auxResidual = [Float](repeating: 0, count: rows * inputs)
                for index in 0..<auxOut.count {
                    let difference = auxOut[index] - (x[index] - f.reconstruction[index])
                    auxiliary += difference * difference
                    auxResidual[index] = 2 * coefficient * difference / n
                }
                auxiliary = coefficient * auxiliary / n
                BLAS.sgemm(
                    m: width, n: inputs, k: rows, a: auxCodes, lda: width, transposeA: true, b: auxResidual,
                    ldb: inputs, c: &gDecoder, ldc: inputs, beta: 1)
                var gAux = [Float](repeating: 0, count: rows * width)
                BLAS.sgemm(
                    m: rows, n: width, k: inputs, a: auxResidual, lda: inputs, b: decoder, ldb: inputs,
                    transposeB: true, c: &gAux, ldc: width)
                for index in 0..<gPre.count where auxCodes[index] > 0 { gPre[index] += gAux[index] }
            }
        }
        var gEncoder = [Float](repeating: 0, count: inputs * width)
        BLAS.sgemm(
            m: inputs, n: width, k: rows, a: f.centered, lda: inputs, transposeA: true, b: gPre, ldb: width,
            c: &gEncoder, ldc: width)
        var gEncoderBias = [Float](repeating: 0, count: width)
        for r in 0..<rows { for j in 0..<width { gEncoderBias[j] += gPre[r * width + j] } }
        // b_dec also enters through x − b_dec: dL/db_dec −= Σ_rows gPre · W_encᵀ.
        var gCentered = [Float](repeating: 0, count: rows * inputs)
        BLAS.sgemm(
            m: rows, n: inputs, k: width, a: gPre, lda: width, b: encoder, ldb: width, transposeB: true,
            c: &gCentered, ldc: inputs)
        for r in 0..<rows { for i in 0..<inputs { gDecoderBias[i] -= gCentered[r * inputs + i] } }
        return (
            Loss(reconstruction: reconstruction, auxiliary: auxiliary, sparsity: sparsity),
            Gradients(encoder: gEncoder, encoderBias: gEncoderBias, decoder: gDecoder, decoderBias: gDecoderBias), f
        )
    }

    package func decoderNorms() -> [Float] {
        (0..<width).map { j in
            var sum: Float = 0
            for i in 0..<inputs { sum += decoder[j * inputs + i] * decoder[j * inputs + i] }
            return sum.squareRoot()
        }
    }

    /// Scales every decoder row to unit norm (TopK keeps them there).
    package mutating func normalizeDecoder() {
        let norms = decoderNorms()
        for j in 0..<width where norms[j] > 0 {
            for i in 0..<inputs { decoder[j * inputs + i] /= norms[j] }
        }
    }

    /// Removes from a decoder gradient its component along each (unit) decoder row, so a step
    /// moves directions and not lengths the renormalisation would undo.
    package func projectOutRadial(_ gradient: inout [Float]) {
        for j in 0..<width {
            var dot: Float = 0
            for i in 0..<inputs { dot += gradient[j * inputs + i] * decoder[j * inputs + i] }
            for i in 0..<inputs { gradient[j * inputs + i] -= dot * decoder[j * inputs + i] }
        }
    }
}

/// SplitMix64 with Box-Muller normals: the SAE's seeded initialisation.
struct SAERandom {
    var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func uniform() -> Double { Double(next() >> 11) / Double(1 << 53) }

    mutating func normal() -> Float {
        let u = max(uniform(), 1e-300)
        let v = uniform()
        return Float((-2 * log(u)).squareRoot() * cos(2 * .pi * v))
    }
}
