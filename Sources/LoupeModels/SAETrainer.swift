import Foundation

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

    /// One Adam step on `batch` (rows × inputs).
    package mutating func train(_ batch: [Float], rows: Int) -> StepMetrics {
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
        func update(_ parameter: inout [Float], _ gradient: [Float], _ slot: Int) {
            let (b1, b2, eps) = (settings.beta1, settings.beta2, settings.epsilon)
            for index in parameter.indices {
                let g = gradient[index]
                moments[slot][index] = b1 * moments[slot][index] + (1 - b1) * g
                squares[slot][index] = b2 * squares[slot][index] + (1 - b2) * g * g
                let mHat = moments[slot][index] / correction1
                let vHat = squares[slot][index] / correction2
                parameter[index] -= rate * mHat / (vHat.squareRoot() + eps)
            }
        }
        update(&sae.encoder, gradients.encoder, 0)
        update(&sae.encoderBias, gradients.encoderBias, 1)
        update(&sae.decoder, gradients.decoder, 2)
        update(&sae.decoderBias, gradients.decoderBias, 3)
        if keepsUnitNorm { sae.normalizeDecoder() }

        // Sparsity and liveness from the batch's codes.
        var active = 0
        var fired = [Bool](repeating: false, count: sae.width)
        for r in 0..<rows {
            for j in 0..<sae.width where forward.codes[r * sae.width + j] > 0 {
                active += 1
                fired[j] = true
            }
        }
        for j in 0..<sae.width { idleTokens[j] = fired[j] ? 0 : idleTokens[j] + rows }
        forward.codes = []
        let fvu = Self.fractionOfVarianceUnexplained(batch, forward.reconstruction, rows: rows, inputs: sae.inputs)
        return StepMetrics(
            step: step, loss: loss, l0: Float(active) / Float(rows), fvu: fvu,
            deadFraction: Float(self.dead.filter { $0 }.count) / Float(sae.width), learningRate: rate)
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
