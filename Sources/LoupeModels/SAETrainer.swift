import Foundation
import LoupeTensor

/// Trains a ``SparseAutoencoder`` with Adam: a linear learning-rate warm-up, a constant phase and a
/// final linear decay to zero; TopK keeps decoder rows at unit norm (the radial part of their
/// gradient removed before each step); latents that have not fired for `deadAfterTokens` tokens
/// count as dead (TopK's auxiliary loss revives them).
package struct SAETrainer: Sendable {
    package struct Settings: Hashable, Sendable {
        package var learningRate: Float = 4e-4
        package var steps = 1000
        package var warmupSteps = 50
        /// The last fraction of the steps over which the rate falls linearly to 0.
        package var decayFraction: Float = 0.2
        package var beta1: Float = 0.9
        package var beta2: Float = 0.999
        package var epsilon: Float = 1e-8
        package var deadAfterTokens = 100_000

        package init() {}

        /// The learning rate at `step` (0-based).
        package func rate(at step: Int) -> Float {
            if warmupSteps > 0 && step < warmupSteps { return learningRate * Float(step + 1) / Float(warmupSteps) }
            let decaySteps = Int((Float(steps) * decayFraction).rounded())
            let decayStart = steps - decaySteps
            if decaySteps > 0 && step >= decayStart {
                return learningRate * Float(steps - step) / Float(decaySteps)
            }
            return learningRate
        }
    }

    /// What one step measured (on its batch, before the update).
    package struct StepMetrics: Hashable, Sendable {
        package var step: Int
        package var loss: SparseAutoencoder.Loss
        /// Mean number of active latents per token.
        package var l0: Float
        /// Fraction of variance unexplained: Σ‖x − x̂‖² / Σ‖x − x̄‖².
        package var fvu: Float
        package var deadFraction: Float
        /// Latents firing on more than 10% of this step's tokens.
        package var denseFraction: Float
        package var learningRate: Float
    }

    package var sae: SparseAutoencoder
    package var settings: Settings
    package private(set) var step = 0
    /// Tokens since each latent last fired.
    package private(set) var idleTokens: [Int]
    private var moments: [[Float]]
    private var squares: [[Float]]

    package init(sae: SparseAutoencoder, settings: Settings) {
        self.sae = sae
        self.settings = settings
        idleTokens = [Int](repeating: 0, count: sae.width)
        let sizes = [sae.encoder.count, sae.encoderBias.count, sae.decoder.count, sae.decoderBias.count]
        moments = sizes.map { [Float](repeating: 0, count: $0) }
        squares = sizes.map { [Float](repeating: 0, count: $0) }
    }

    package var dead: [Bool] { idleTokens.map { $0 >= settings.deadAfterTokens } }

    // MARK: - Checkpoints

    static let magic = Array("LSAE".utf8)
    static let version: UInt32 = 1

    /// The SAE, the optimiser's moments, the step and the latents' idle counts, as bytes
    /// (little-endian): everything a resumed run needs.
    package func serialized() -> Data {
        var out = Data(Self.magic)
        func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) } }
        func f32(_ value: Float) { u32(value.bitPattern) }
        func floats(_ values: [Float]) {
            u32(UInt32(values.count))
            for value in values { u32(value.bitPattern) }
        }
        u32(Self.version)
        u32(UInt32(sae.inputs))
        u32(UInt32(sae.width))
        switch sae.activation {
        case .topK(let k, let auxK, let coefficient):
            u32(0)
            u32(UInt32(k))
            u32(UInt32(auxK))
            f32(coefficient)
        case .relu(let l1):
            u32(1)
            u32(0)
            u32(0)
            f32(l1)
        }
        f32(sae.inputScale)
        u32(UInt32(step))
        for parameter in [sae.encoder, sae.encoderBias, sae.decoder, sae.decoderBias] { floats(parameter) }
        for slot in moments { floats(slot) }
        for slot in squares { floats(slot) }
        floats(idleTokens.map { Float($0) })
        return out
    }

    /// Reads ``serialized()``; `settings` come from the caller (they are stored beside it).
    package init(serialized data: Data, settings: Settings) throws(ModelError) {
        let bytes = [UInt8](data)
        var offset = 0
        func fail(_ message: String) -> ModelError { ModelError(file: "SAE checkpoint", message: message) }
        func u32() throws(ModelError) -> UInt32 {
            guard offset + 4 <= bytes.count else { throw fail("is cut short at byte \(offset)") }
            defer { offset += 4 }
            return UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16
                | UInt32(bytes[offset + 3]) << 24
        }
        func f32() throws(ModelError) -> Float { Float(bitPattern: try u32()) }
        func floats(_ expected: Int) throws(ModelError) -> [Float] {
            let count = Int(try u32())
            guard count == expected, offset + 4 * count <= bytes.count else {
                throw fail("holds \(count) values where \(expected) were expected")
            }
            var values = [Float](repeating: 0, count: count)
            for index in 0..<count { values[index] = try f32() }
            return values
        }
        guard bytes.count >= 4, Array(bytes[0..<4]) == Self.magic else { throw fail("is not an SAE checkpoint") }
        offset = 4
        guard try u32() == Self.version else { throw fail("has an unknown version") }
        let inputs = Int(try u32())
        let width = Int(try u32())
        let kind = try u32()
        let k = Int(try u32())
        let auxK = Int(try u32())
        let coefficient = try f32()
        let activation: SparseAutoencoder.Activation =
            kind == 0 ? .topK(k: k, auxK: auxK, auxCoefficient: coefficient) : .relu(l1: coefficient)
        var sae = SparseAutoencoder(inputs: inputs, width: width, activation: activation)
        sae.inputScale = try f32()
        let step = Int(try u32())
        let sizes = [inputs * width, width, width * inputs, inputs]
        sae.encoder = try floats(sizes[0])
        sae.encoderBias = try floats(sizes[1])
        sae.decoder = try floats(sizes[2])
        sae.decoderBias = try floats(sizes[3])
        self.init(sae: sae, settings: settings)
        for slot in 0..<4 { moments[slot] = try floats(sizes[slot]) }
        for slot in 0..<4 { squares[slot] = try floats(sizes[slot]) }
        idleTokens = try floats(width).map { Int($0) }
        self.step = step
    }

    /// One Adam step on `batch` (rows × inputs).
    package mutating func train(_ batch: [Float], rows: Int) -> StepMetrics {
        // The step splits its work across cores itself. OpenBLAS's own threads, left on, spin
        // between its calls (sched_yield until a timeout longer than a step) on the cores the
        // step's other loops need: a sixth of a step on two cores.
        let threads = BLAS.threads
        BLAS.threads = 1
        defer { BLAS.threads = threads }
        let dead = self.dead
        var (loss, gradients, forward) = sae.lossAndGradients(batch, rows: rows, dead: dead)
        var keepsUnitNorm = false
        if case .topK = sae.activation {
            keepsUnitNorm = true
            sae.projectOutRadial(&gradients.decoder)
        }
        let rate = settings.rate(at: step)
        step += 1
        let t = Float(step)
        let correction1 = 1 - pow(settings.beta1, t)
        let correction2 = 1 - pow(settings.beta2, t)
        let (b1, b2, eps) = (settings.beta1, settings.beta2, settings.epsilon)
        // One vector pass a core over raw buffers: Adam touches every parameter, millions of
        // them, every step.
        func update(_ parameter: inout [Float], _ gradient: [Float], _ slot: Int) {
            let step1 = rate / correction1
            let inverse2 = 1 / correction2
            parameter.withUnsafeMutableBufferPointer { p in
                gradient.withUnsafeBufferPointer { g in
                    moments[slot].withUnsafeMutableBufferPointer { m in
                        squares[slot].withUnsafeMutableBufferPointer { v in
                            SparseAutoencoder.inParallel(p.count, granularity: 4096) { part in
                                let at = part.lowerBound
                                CPUKernels.adamStep(
                                    p.baseAddress! + at, gradient: g.baseAddress! + at, moments: m.baseAddress! + at,
                                    squares: v.baseAddress! + at, count: part.count, beta1: b1, beta2: b2,
                                    step: step1, inverse2: inverse2, epsilon: eps)
                            }
                        }
                    }
                }
            }
        }
        update(&sae.encoder, gradients.encoder, 0)
        update(&sae.encoderBias, gradients.encoderBias, 1)
        update(&sae.decoder, gradients.decoder, 2)
        update(&sae.decoderBias, gradients.decoderBias, 3)
        if keepsUnitNorm { sae.normalizeDecoder() }

        // Sparsity and liveness from the batch's codes.
        var active = 0
        var fired = [Int](repeating: 0, count: sae.width)
        if !forward.chosen.isEmpty {
            forward.codes.withUnsafeBufferPointer { z in
                SparseAutoencoder.forEachActive(z, chosen: forward.chosen, rows: rows, width: sae.width) { _, j, _ in
                    active += 1
                    fired[j] += 1
                }
            }
        } else {
            for r in 0..<rows {
                for j in 0..<sae.width where forward.codes[r * sae.width + j] > 0 {
                    active += 1
                    fired[j] += 1
                }
            }
        }
        for j in 0..<sae.width { idleTokens[j] = fired[j] > 0 ? 0 : idleTokens[j] + rows }
        let dense = fired.filter { $0 * 10 > rows }.count
        forward.codes = []
        let fvu = Self.fractionOfVarianceUnexplained(batch, forward.reconstruction, rows: rows, inputs: sae.inputs)
        return StepMetrics(
            step: step, loss: loss, l0: Float(active) / Float(rows), fvu: fvu,
            deadFraction: Float(self.dead.filter { $0 }.count) / Float(sae.width),
            denseFraction: Float(dense) / Float(sae.width), learningRate: rate)
    }

    /// Σ‖x − x̂‖² / Σ‖x − x̄‖² over a batch (x̄ the batch mean).
    package static func fractionOfVarianceUnexplained(
        _ x: [Float], _ reconstruction: [Float], rows: Int, inputs: Int
    ) -> Float {
        var mean = [Float](repeating: 0, count: inputs)
        for r in 0..<rows { for i in 0..<inputs { mean[i] += x[r * inputs + i] / Float(rows) } }
        var residual: Float = 0
        var total: Float = 0
        for r in 0..<rows {
            for i in 0..<inputs {
                let value = x[r * inputs + i]
                residual += (value - reconstruction[r * inputs + i]) * (value - reconstruction[r * inputs + i])
                total += (value - mean[i]) * (value - mean[i])
            }
        }
        return total > 0 ? residual / total : 0
    }
}
