import Foundation
import LoupeBase
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
        var generator = SplitMix64(seed: seed)
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
        /// TopK: each row's k chosen latents (rows × k); empty for ReLU.
        package var chosen: [Int32] = []
    }

    ///
    /// - Parameter rowInvariant: the encoder repacked for ``FloatMatrix`` (``rowInvariantEncoder()``):
    ///   each row's pre-activations then have the same bits however many rows come with it, as a
    ///   generation path needs (an ablation inside a batch of prompts, a decode step). Without it the
    ///   product is OpenBLAS's sgemm, which sums a row in an order that depends on the row count
    ///   and the CPU; training and feature statistics, which never compare bits, use it.
    package func forward(_ x: [Float], rows: Int, rowInvariant: FloatMatrix? = nil) -> Forward {
        precondition(x.count == rows * inputs, "expected \(rows) × \(inputs) values")
        var centered = x
        for r in 0..<rows { for i in 0..<inputs { centered[r * inputs + i] -= decoderBias[i] } }
        let pre =
            rowInvariant.map { preActivations(centered, rows: rows, encoder: $0) }
            ?? preActivations(centered, rows: rows)
        return activate(centered: centered, pre: pre, rows: rows, rowInvariant: rowInvariant != nil)
    }

    /// The encoder as a ``FloatMatrix`` (`width` outputs of `inputs`), for ``forward(_:rows:rowInvariant:)``.
    package func rowInvariantEncoder() -> FloatMatrix {
        var transposed = [Float](repeating: 0, count: width * inputs)
        for i in 0..<inputs { for j in 0..<width { transposed[j * inputs + i] = encoder[i * width + j] } }
        return FloatMatrix(rows: width, columns: inputs, weights: transposed)
    }

    /// `W_encᵀ(x − b_dec) + b_enc` through `encoder`: the product, then the bias, row by row.
    private func preActivations(_ centered: [Float], rows: Int, encoder: FloatMatrix) -> [Float] {
        precondition(encoder.rows == width && encoder.columns == inputs, "an encoder for another SAE")
        var pre = [Float](repeating: 0, count: rows * width)
        centered.withUnsafeBufferPointer { x in
            pre.withUnsafeMutableBufferPointer { y in
                encoder.multiply(
                    rows: rows, x.baseAddress!, into: y.baseAddress!,
                    threads: ProcessInfo.processInfo.activeProcessorCount)
            }
        }
        for r in 0..<rows { for j in 0..<width { pre[r * width + j] += encoderBias[j] } }
        return pre
    }

    /// `W_encᵀ(x − b_dec) + b_enc` through OpenBLAS.
    private func preActivations(_ centered: [Float], rows: Int) -> [Float] {
        // The bias in every row, then the product added (not zeros first: a step's buffers are
        // tens of MB).
        var pre = encoderBias.withUnsafeBufferPointer { b in
            [Float](unsafeUninitializedCapacity: rows * width) { p, count in
                for r in 0..<rows { (p.baseAddress! + r * width).initialize(from: b.baseAddress!, count: width) }
                count = rows * width
            }
        }
        // With single-threaded BLAS (the caller's choice, as a training step makes it) the rows
        // are split across cores, one sgemm a part; otherwise OpenBLAS splits its one product
        // itself, rather than each part asking it for every core.
        centered.withUnsafeBufferPointer { a in
            encoder.withUnsafeBufferPointer { b in
                pre.withUnsafeMutableBufferPointer { c in
                    func product(_ part: Range<Int>) {
                        BLAS.sgemm(
                            m: part.count, n: width, k: inputs, a: a.baseAddress! + part.lowerBound * inputs,
                            lda: inputs, b: b.baseAddress!, ldb: width, c: c.baseAddress! + part.lowerBound * width,
                            ldc: width, beta: 1)
                    }
                    if BLAS.threads == 1 { Self.inParallel(rows, granularity: 16, product) } else { product(0..<rows) }
                }
            }
        }
        return pre
    }

    /// The codes and reconstructions of pre-activations. TopK decodes each row on its own; ReLU
    /// through sgemm, or row by row when `rowInvariant`.
    private func activate(centered: [Float], pre: [Float], rows: Int, rowInvariant: Bool) -> Forward {
        var reconstruction = [Float](repeating: 0, count: rows * inputs)
        for r in 0..<rows { for i in 0..<inputs { reconstruction[r * inputs + i] = decoderBias[i] } }
        if case .topK(let k, _, _) = activation {
            // k of `width` latents per row: decode as a sum of k decoder rows, not a dense product.
            let chosen = Self.topK(pre, rows: rows, width: width, k: k, among: nil)
            let codes = Self.codes(chosen, pre: pre, rows: rows, width: width)
            Self.decode(
                codes, chosen: chosen, rows: rows, width: width, decoder: decoder, inputs: inputs,
                into: &reconstruction)
            return Forward(
                rows: rows, centered: centered, pre: pre, codes: codes, reconstruction: reconstruction, chosen: chosen)
        }
        let codes = pre.map { max(0, $0) }  // ReLU
        if rowInvariant {
            for r in 0..<rows {
                for j in 0..<width where codes[r * width + j] > 0 {
                    let code = codes[r * width + j]
                    for i in 0..<inputs { reconstruction[r * inputs + i] += code * decoder[j * inputs + i] }
                }
            }
        } else {
            BLAS.sgemm(
                m: rows, n: inputs, k: width, a: codes, lda: width, b: decoder, ldb: inputs, c: &reconstruction,
                ldc: inputs, beta: 1)
        }
        return Forward(rows: rows, centered: centered, pre: pre, codes: codes, reconstruction: reconstruction)
    }

    /// Runs unscaled rows (rows × inputs) through the SAE in batches, each input multiplied by
    /// ``inputScale`` first: `body(first row, scaled inputs, forward)` per batch.
    package func forEachBatch(
        of values: [Float], rows: Int, batch: Int = 2048, _ body: (Int, [Float], Forward) throws -> Void
    ) rethrows {
        var start = 0
        while start < rows {
            let count = min(batch, rows - start)
            let x = values[(start * inputs)..<((start + count) * inputs)].map { $0 * inputScale }
            try body(start, x, forward(x, rows: count))
            start += count
        }
    }

    /// Each row's `k` largest values (among the `among` latents when given), as latent indices,
    /// rows × k; a min-heap per row, rows split across cores.
    static func topK(_ values: [Float], rows: Int, width: Int, k: Int, among: [Bool]?) -> [Int32] {
        let kk = min(k, width)
        var chosen = [Int32](repeating: 0, count: rows * kk)
        guard kk > 0 else { return chosen }
        if among == nil {
            // Every latent a candidate: the C kernel, which offers the heap only the values that a
            // lower bound on the k-th largest lets through, found a vector at a time (the chosen
            // latents come out in another order than the loop below leaves them).
            values.withUnsafeBufferPointer { v in
                chosen.withUnsafeMutableBufferPointer { out in
                    inParallel(rows, granularity: 16) { part in
                        CPUKernels.topKRows(
                            v.baseAddress! + part.lowerBound * width, rows: part.count, width: width, k: kk,
                            into: out.baseAddress! + part.lowerBound * kk)
                    }
                }
            }
            return chosen
        }
        let parts = min(rows, max(1, ProcessInfo.processInfo.activeProcessorCount))
        values.withUnsafeBufferPointer { v in
            chosen.withUnsafeMutableBufferPointer { out in
                // Safe: each worker writes its own rows of `out` and reads `v`; both outlive the workers.
                let output = UncheckedSendable(out.baseAddress!)
                let input = UncheckedSendable(UnsafeMutablePointer(mutating: v.baseAddress!))
                DispatchQueue.concurrentPerform(iterations: parts) { part in
                    var heapValues = [Float](repeating: 0, count: kk)
                    var heapIndices = [Int32](repeating: 0, count: kk)
                    for r in stride(from: part, to: rows, by: parts) {
                        var count = 0
                        let base = r * width
                        for j in 0..<width where among?[j] ?? true {
                            let value = input.value[base + j]
                            if count < kk {
                                // Sift up.
                                var child = count
                                heapValues[child] = value
                                heapIndices[child] = Int32(j)
                                count += 1
                                while child > 0 {
                                    let parent = (child - 1) / 2
                                    if heapValues[parent] <= heapValues[child] { break }
                                    heapValues.swapAt(parent, child)
                                    heapIndices.swapAt(parent, child)
                                    child = parent
                                }
                            } else if value > heapValues[0] {
                                // Replace the smallest and sift down.
                                heapValues[0] = value
                                heapIndices[0] = Int32(j)
                                var parent = 0
                                while true {
                                    let left = 2 * parent + 1
                                    guard left < kk else { break }
                                    let right = left + 1
                                    let smaller = right < kk && heapValues[right] < heapValues[left] ? right : left
                                    if heapValues[parent] <= heapValues[smaller] { break }
                                    heapValues.swapAt(parent, smaller)
                                    heapIndices.swapAt(parent, smaller)
                                    parent = smaller
                                }
                            }
                        }
                        // Fewer candidates than k (a restricted set): the rest point at a chosen one
                        // with no weight, marked by repeating index 0's slot value as -1.
                        for slot in 0..<kk { output.value[r * kk + slot] = slot < count ? heapIndices[slot] : -1 }
                    }
                }
            }
        }
        return chosen
    }

    /// ReLU of the chosen pre-activations, the rest 0 (rows × width).
    static func codes(_ chosen: [Int32], pre: [Float], rows: Int, width: Int) -> [Float] {
        var codes = [Float](repeating: 0, count: rows * width)
        let k = chosen.count / max(1, rows)
        for r in 0..<rows {
            for slot in 0..<k {
                let j = Int(chosen[r * k + slot])
                if j >= 0 { codes[r * width + j] = max(0, pre[r * width + j]) }
            }
        }
        return codes
    }

    /// Calls `body(row, latent, code)` for each row's chosen latents with a positive code
    /// (`chosen` is rows × k; −1 marks an empty slot): the sparse loop every TopK product shares.
    ///
    /// - Parameters:
    ///   - rowRange: only these rows (all by default);
    ///   - latents: only latents in this range (all by default), for a worker that owns them.
    static func forEachActive(
        _ codes: UnsafeBufferPointer<Float>, chosen: [Int32], rows: Int, width: Int, in rowRange: Range<Int>? = nil,
        latents: Range<Int>? = nil, _ body: (Int, Int, Float) -> Void
    ) {
        let k = chosen.count / max(1, rows)
        let latents = latents ?? 0..<width
        chosen.withUnsafeBufferPointer { chosen in
            for r in rowRange ?? 0..<rows {
                for slot in 0..<k {
                    let j = Int(chosen[r * k + slot])
                    guard j >= 0, latents.contains(j) else { continue }
                    let code = codes[r * width + j]
                    if code > 0 { body(r, j, code) }
                }
            }
        }
    }

    /// Runs `body` over `0..<count` split in contiguous ranges, one per core: the loops below
    /// whose iterations write disjoint memory (a row of the output, a latent's gradient row).
    static func inParallel(_ count: Int, granularity: Int = 64, _ body: (Range<Int>) -> Void) {
        CPUKernels.splitRows(count, threads: ProcessInfo.processInfo.activeProcessorCount, granularity: granularity) {
            body($0..<($0 + $1))
        }
    }

    /// reconstruction[r] += Σ over row r's active latents of code · decoder row.
    static func decode(
        _ codes: [Float], chosen: [Int32], rows: Int, width: Int, decoder: [Float], inputs: Int,
        into reconstruction: inout [Float]
    ) {
        codes.withUnsafeBufferPointer { z in
            decoder.withUnsafeBufferPointer { w in
                reconstruction.withUnsafeMutableBufferPointer { out in
                    inParallel(rows) { part in
                        forEachActive(z, chosen: chosen, rows: rows, width: width, in: part) { r, j, code in
                            let row = w.baseAddress! + j * inputs
                            let target = out.baseAddress! + r * inputs
                            for i in 0..<inputs { target[i] += code * row[i] }
                        }
                    }
                }
            }
        }
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
        var residual = Self.unset(rows * inputs)
        var reconstruction: Float = 0
        for index in 0..<residual.count {
            let difference = f.reconstruction[index] - x[index]
            reconstruction += difference * difference
            residual[index] = 2 * difference / n
        }
        reconstruction /= n
        var gDecoder = [Float](repeating: 0, count: width * inputs)
        let sparse = !f.chosen.isEmpty
        if sparse {
            Self.accumulateDecoderGradient(
                codes: f.codes, chosen: f.chosen, rows: rows, width: width, residual: residual, inputs: inputs,
                into: &gDecoder)
        } else {
            BLAS.sgemm(
                m: width, n: inputs, k: rows, a: f.codes, lda: width, transposeA: true, b: residual, ldb: inputs,
                c: &gDecoder, ldc: inputs)
        }
        var gDecoderBias = [Float](repeating: 0, count: inputs)
        for r in 0..<rows { for i in 0..<inputs { gDecoderBias[i] += residual[r * inputs + i] } }
        // dL/dz = residual · W_decᵀ (TopK: only where a code is active, the only places it is
        // written and read).
        var gCodes = sparse ? Self.unset(rows * width) : [Float](repeating: 0, count: rows * width)
        if sparse {
            Self.activeDots(
                codes: f.codes, chosen: f.chosen, rows: rows, width: width, residual: residual, decoder: decoder,
                inputs: inputs, into: &gCodes)
        } else {
            BLAS.sgemm(
                m: rows, n: width, k: inputs, a: residual, lda: inputs, b: decoder, ldb: inputs, transposeB: true,
                c: &gCodes, ldc: width)
        }
        var sparsity: Float = 0
        var auxiliary: Float = 0
        // TopK: written where it is read, at `entries` below.
        var gPre = sparse ? Self.unset(rows * width) : [Float](repeating: 0, count: rows * width)
        // TopK: the flat indices (row · width + latent) where gPre can be nonzero, each once.
        var entries: [Int]?
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
            var active: [Int] = []
            active.reserveCapacity(f.chosen.count)
            f.codes.withUnsafeBufferPointer { z in
                Self.forEachActive(z, chosen: f.chosen, rows: rows, width: width) { r, j, _ in
                    active.append(r * width + j)
                    gPre[r * width + j] = gCodes[r * width + j]
                }
            }
            if let dead, auxK > 0, coefficient > 0, dead.contains(true) {
                // The residual x − x̂ (held constant) reconstructed by the dead latents' top auxK.
                let auxChosen = Self.topK(f.pre, rows: rows, width: width, k: auxK, among: dead)
                let auxCodes = Self.codes(auxChosen, pre: f.pre, rows: rows, width: width)
                var auxOut = [Float](repeating: 0, count: rows * inputs)
                Self.decode(
                    auxCodes, chosen: auxChosen, rows: rows, width: width, decoder: decoder, inputs: inputs,
                    into: &auxOut)
                var auxResidual = [Float](repeating: 0, count: rows * inputs)
                for index in 0..<auxOut.count {
                    let difference = auxOut[index] - (x[index] - f.reconstruction[index])
                    auxiliary += difference * difference
                    auxResidual[index] = 2 * coefficient * difference / n
                }
                auxiliary = coefficient * auxiliary / n
                Self.accumulateDecoderGradient(
                    codes: auxCodes, chosen: auxChosen, rows: rows, width: width, residual: auxResidual,
                    inputs: inputs, into: &gDecoder)
                var gAux = [Float](repeating: 0, count: rows * width)
                Self.activeDots(
                    codes: auxCodes, chosen: auxChosen, rows: rows, width: width, residual: auxResidual,
                    decoder: decoder, inputs: inputs, into: &gAux)
                auxCodes.withUnsafeBufferPointer { z in
                    Self.forEachActive(z, chosen: auxChosen, rows: rows, width: width) { r, j, _ in
                        let index = r * width + j
                        if f.codes[index] <= 0 {
                            active.append(index)
                            gPre[index] = gAux[index]
                        } else {
                            gPre[index] += gAux[index]
                        }
                    }
                }
            }
            entries = active
        }
        // TopK: every value written by the transpose below.
        var gEncoder = entries != nil ? Self.unset(inputs * width) : [Float](repeating: 0, count: inputs * width)
        var gEncoderBias = [Float](repeating: 0, count: width)
        if let entries {
            // gEncoder = centeredᵀ · gPre over the few nonzero entries: accumulated as rows of
            // its transpose (contiguous), then transposed.
            var transposed = [Float](repeating: 0, count: width * inputs)
            f.centered.withUnsafeBufferPointer { c in
                transposed.withUnsafeMutableBufferPointer { t in
                    gPre.withUnsafeBufferPointer { gPre in
                        gEncoderBias.withUnsafeMutableBufferPointer { bias in
                            // Each worker owns a range of latents.
                            Self.inParallel(width) { latents in
                                for index in entries {
                                    let (r, j) = index.quotientAndRemainder(dividingBy: width)
                                    guard latents.contains(j) else { continue }
                                    let g = gPre[index]
                                    bias[j] += g
                                    let source = c.baseAddress! + r * inputs
                                    let target = t.baseAddress! + j * inputs
                                    for i in 0..<inputs { target[i] += g * source[i] }
                                }
                            }
                        }
                    }
                }
            }
            transposed.withUnsafeBufferPointer { t in
                gEncoder.withUnsafeMutableBufferPointer { e in
                    Self.inParallel(inputs, granularity: 8) { part in
                        for i in part { for j in 0..<width { e[i * width + j] = t[j * inputs + i] } }
                    }
                }
            }
        } else {
            BLAS.sgemm(
                m: inputs, n: width, k: rows, a: f.centered, lda: inputs, transposeA: true, b: gPre, ldb: width,
                c: &gEncoder, ldc: width)
            for r in 0..<rows { for j in 0..<width { gEncoderBias[j] += gPre[r * width + j] } }
        }
        // b_dec also enters through x − b_dec: dL/db_dec −= Σ_rows gPre · W_encᵀ = W_enc · Σ_rows gPre.
        encoder.withUnsafeBufferPointer { w in
            for i in 0..<inputs {
                var sum: Float = 0
                let row = w.baseAddress! + i * width
                for j in 0..<width { sum += row[j] * gEncoderBias[j] }
                gDecoderBias[i] -= sum
            }
        }
        return (
            Loss(reconstruction: reconstruction, auxiliary: auxiliary, sparsity: sparsity),
            Gradients(encoder: gEncoder, encoderBias: gEncoderBias, decoder: gDecoder, decoderBias: gDecoderBias), f
        )
    }

    /// `count` floats left as memory held them, for a buffer the caller writes before it reads
    /// each value: not zeroed, a pass over tens of MB a training step.
    static func unset(_ count: Int) -> [Float] {
        [Float](unsafeUninitializedCapacity: count) { _, initialized in initialized = count }
    }

    /// gDecoder[j] += code(r, j) · residual[r] over each row's active latents.
    static func accumulateDecoderGradient(
        codes: [Float], chosen: [Int32], rows: Int, width: Int, residual: [Float], inputs: Int,
        into gradient: inout [Float]
    ) {
        codes.withUnsafeBufferPointer { z in
            residual.withUnsafeBufferPointer { e in
                gradient.withUnsafeMutableBufferPointer { g in
                    // Each worker owns a range of latents (gradient rows) and adds every row's
                    // contribution to them.
                    inParallel(width) { latents in
                        forEachActive(z, chosen: chosen, rows: rows, width: width, latents: latents) { r, j, code in
                            let source = e.baseAddress! + r * inputs
                            let target = g.baseAddress! + j * inputs
                            for i in 0..<inputs { target[i] += code * source[i] }
                        }
                    }
                }
            }
        }
    }

    /// out[r, j] = residual[r] · decoder[j] for each row's active latents.
    static func activeDots(
        codes: [Float], chosen: [Int32], rows: Int, width: Int, residual: [Float], decoder: [Float], inputs: Int,
        into out: inout [Float]
    ) {
        codes.withUnsafeBufferPointer { z in
            residual.withUnsafeBufferPointer { e in
                decoder.withUnsafeBufferPointer { w in
                    out.withUnsafeMutableBufferPointer { o in
                        inParallel(rows) { part in
                            forEachActive(z, chosen: chosen, rows: rows, width: width, in: part) { r, j, _ in
                                o[r * width + j] = CPUKernels.dot(
                                    e.baseAddress! + r * inputs, w.baseAddress! + j * inputs, count: inputs)
                            }
                        }
                    }
                }
            }
        }
    }

    package func decoderNorms() -> [Float] {
        decoder.withUnsafeBufferPointer { d in
            (0..<width).map { j in
                let row = d.baseAddress! + j * inputs
                return CPUKernels.dot(row, row, count: inputs).squareRoot()
            }
        }
    }

    /// Scales every decoder row to unit norm (TopK keeps them there).
    package mutating func normalizeDecoder() {
        let norms = decoderNorms()
        let inputs = inputs
        decoder.withUnsafeMutableBufferPointer { d in
            Self.inParallel(width) { latents in
                for j in latents where norms[j] > 0 {
                    for i in 0..<inputs { d[j * inputs + i] /= norms[j] }
                }
            }
        }
    }

    /// Removes from a decoder gradient its component along each (unit) decoder row, so a step
    /// moves directions and not lengths the renormalisation would undo.
    package func projectOutRadial(_ gradient: inout [Float]) {
        let inputs = inputs
        decoder.withUnsafeBufferPointer { d in
            gradient.withUnsafeMutableBufferPointer { g in
                Self.inParallel(width) { latents in
                    for j in latents {
                        let dot = CPUKernels.dot(
                            g.baseAddress! + j * inputs, d.baseAddress! + j * inputs, count: inputs)
                        for i in 0..<inputs { g[j * inputs + i] -= dot * d[j * inputs + i] }
                    }
                }
            }
        }
    }
}
