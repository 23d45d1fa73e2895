import Foundation
import LoupeBase
import Testing

@testable import LoupeModels

/// The SAE's gradients against central finite differences, TopK's sparsity, the schedule, and
/// training recovering a sparse code from data built out of known features.
@Suite struct SparseAutoencoderTests {
    static func data(rows: Int, inputs: Int, seed: UInt64) -> [Float] {
        var generator = SplitMix64(seed: seed)
        return (0..<(rows * inputs)).map { _ in generator.normal() }
    }

    /// The total loss with one parameter moved by `delta`.
    static func loss(
        _ sae: SparseAutoencoder, _ x: [Float], rows: Int, parameter: Int, index: Int, delta: Float
    ) -> Double {
        var moved = sae
        switch parameter {
        case 0: moved.encoder[index] += delta
        case 1: moved.encoderBias[index] += delta
        case 2: moved.decoder[index] += delta
        default: moved.decoderBias[index] += delta
        }
        return Double(moved.lossAndGradients(x, rows: rows).loss.total)
    }

    func checkGradients(_ activation: SparseAutoencoder.Activation) {
        let (inputs, width, rows) = (6, 10, 5)
        var sae = SparseAutoencoder(inputs: inputs, width: width, activation: activation, seed: 7)
        // Move off the tied start so every parameter matters, and give the biases values.
        var generator = SplitMix64(seed: 11)
        for index in sae.encoder.indices { sae.encoder[index] += 0.3 * generator.normal() }
        for index in sae.decoder.indices { sae.decoder[index] *= 1 + 0.2 * generator.normal() }
        for index in sae.encoderBias.indices { sae.encoderBias[index] = 0.1 * generator.normal() }
        for index in sae.decoderBias.indices { sae.decoderBias[index] = 0.2 * generator.normal() }
        let x = Self.data(rows: rows, inputs: inputs, seed: 3)
        let analytic = sae.lossAndGradients(x, rows: rows).gradients
        let all = [analytic.encoder, analytic.encoderBias, analytic.decoder, analytic.decoderBias]
        let epsilon: Float = 1e-2
        var checked = 0
        for (parameter, gradient) in all.enumerated() {
            for index in gradient.indices {
                let plus = Self.loss(sae, x, rows: rows, parameter: parameter, index: index, delta: epsilon)
                let minus = Self.loss(sae, x, rows: rows, parameter: parameter, index: index, delta: -epsilon)
                let numeric = (plus - minus) / Double(2 * epsilon)
                // A step that crosses a ReLU kink or changes TopK's choice has no derivative to match.
                let halfPlus = Self.loss(sae, x, rows: rows, parameter: parameter, index: index, delta: epsilon / 2)
                let halfMinus = Self.loss(sae, x, rows: rows, parameter: parameter, index: index, delta: -epsilon / 2)
                let numericHalf = (halfPlus - halfMinus) / Double(epsilon)
                guard abs(numeric - numericHalf) < 1e-3 * max(1, abs(numeric)) else { continue }
                checked += 1
                let difference = abs(numeric - Double(gradient[index]))
                #expect(
                    difference < 2e-3 + 1e-2 * abs(numeric),
                    "parameter \(parameter)[\(index)]: analytic \(gradient[index]), numeric \(numeric)")
            }
        }
        // Nearly every parameter is away from a kink.
        #expect(checked > all.map(\.count).reduce(0, +) * 3 / 4)
    }

    @Test func reluWithDecoderNormScaledL1MatchesFiniteDifferences() {
        checkGradients(.relu(l1: 0.05))
    }

    @Test func topKMatchesFiniteDifferences() {
        checkGradients(.topK(k: 3, auxK: 0, auxCoefficient: 0))
    }

    @Test func topKKeepsAtMostKCodesPerToken() {
        let sae = SparseAutoencoder(inputs: 16, width: 64, activation: .topK(k: 4, auxK: 0, auxCoefficient: 0))
        let f = sae.forward(Self.data(rows: 50, inputs: 16, seed: 5), rows: 50)
        for r in 0..<50 {
            let active = f.codes[(r * 64)..<((r + 1) * 64)].filter { $0 > 0 }
            #expect(active.count <= 4 && active.count >= 1)
            // They are the largest pre-activations.
            let smallestKept = active.min()!
            let others = (0..<64).filter { f.codes[r * 64 + $0] == 0 }.map { f.pre[r * 64 + $0] }
            #expect(others.allSatisfy { $0 <= smallestKept })
        }
    }

    @Test func theAuxiliaryLossReachesOnlyDeadLatents() {
        let (inputs, width, rows) = (8, 16, 12)
        let sae = SparseAutoencoder(
            inputs: inputs, width: width, activation: .topK(k: 2, auxK: 4, auxCoefficient: 1 / 32))
        let x = Self.data(rows: rows, inputs: inputs, seed: 9)
        let dead = (0..<width).map { $0 >= 8 }
        let with = sae.lossAndGradients(x, rows: rows, dead: dead)
        let without = sae.lossAndGradients(x, rows: rows)
        #expect(with.loss.auxiliary > 0 && without.loss.auxiliary == 0)
        // The encoder columns of live latents get the same gradient either way.
        for i in 0..<inputs {
            for j in 0..<8 {
                #expect(abs(with.gradients.encoder[i * width + j] - without.gradients.encoder[i * width + j]) < 1e-6)
            }
        }
        #expect((0..<inputs).contains { i in (8..<width).contains { j in with.gradients.encoder[i * width + j] != 0 } })
    }

    @Test func theScheduleWarmsUpHoldsAndDecaysToZero() {
        var settings = SAETrainer.Settings()
        settings.learningRate = 1e-3
        settings.steps = 100
        settings.warmupSteps = 10
        settings.decayFraction = 0.2
        #expect(abs(settings.rate(at: 0) - 1e-4) < 1e-9)
        #expect(settings.rate(at: 50) == 1e-3)
        #expect(abs(settings.rate(at: 90) - 5e-4) < 1e-9)
        #expect(abs(settings.rate(at: 99) - 5e-5) < 1e-9)
    }

    /// Tokens made of 3 of 32 hidden unit directions: a TopK SAE with k = 3 learns to reconstruct
    /// them with about 3 active latents and keeps its decoder rows at unit norm.
    @Test func trainingRecoversASparseCode() {
        let (inputs, features, width, k) = (16, 32, 64, 3)
        var generator = SplitMix64(seed: 21)
        var truth = [Float](repeating: 0, count: features * inputs)
        for f in 0..<features {
            var norm: Float = 0
            for i in 0..<inputs {
                truth[f * inputs + i] = generator.normal()
                norm += truth[f * inputs + i] * truth[f * inputs + i]
            }
            for i in 0..<inputs { truth[f * inputs + i] /= norm.squareRoot() }
        }
        func batch(_ rows: Int) -> [Float] {
            var x = [Float](repeating: 0, count: rows * inputs)
            for r in 0..<rows {
                for _ in 0..<3 {
                    let f = Int(generator.next() % UInt64(features))
                    let scale = Float(0.5 + generator.uniform())
                    for i in 0..<inputs { x[r * inputs + i] += scale * truth[f * inputs + i] }
                }
            }
            return x
        }
        var settings = SAETrainer.Settings()
        settings.learningRate = 3e-3
        settings.steps = 600
        settings.warmupSteps = 20
        settings.deadAfterTokens = 256 * 50
        var trainer = SAETrainer(
            sae: SparseAutoencoder(
                inputs: inputs, width: width, activation: .topK(k: k, auxK: 16, auxCoefficient: 1 / 32)),
            settings: settings)
        var first: SAETrainer.StepMetrics?
        var last: SAETrainer.StepMetrics?
        for _ in 0..<settings.steps {
            let metrics = trainer.train(batch(256), rows: 256)
            if first == nil { first = metrics }
            last = metrics
        }
        let start = first!
        let end = last!
        #expect(end.fvu < start.fvu / 4, "FVU \(start.fvu) → \(end.fvu)")
        #expect(end.fvu < 0.15, "FVU \(end.fvu)")
        #expect(end.l0 <= Float(k) && end.l0 > 2)
        #expect(trainer.sae.decoderNorms().allSatisfy { abs($0 - 1) < 1e-4 })
    }

    /// A run stopped after a checkpoint and resumed from its bytes ends exactly where an
    /// uninterrupted run does (same batches, same optimiser state).
    @Test func aResumedRunMatchesAnUninterruptedOne() throws {
        var settings = SAETrainer.Settings()
        settings.steps = 40
        settings.warmupSteps = 5
        settings.deadAfterTokens = 64
        let batches = (0..<40).map { Self.data(rows: 16, inputs: 8, seed: UInt64(100 + $0)) }
        func fresh() -> SAETrainer {
            var sae = SparseAutoencoder(inputs: 8, width: 24, activation: .topK(k: 3, auxK: 6, auxCoefficient: 1 / 32))
            sae.inputScale = 1.5
            return SAETrainer(sae: sae, settings: settings)
        }
        var straight = fresh()
        for batch in batches { _ = straight.train(batch, rows: 16) }
        var first = fresh()
        for batch in batches[..<20] { _ = first.train(batch, rows: 16) }
        var resumed = try SAETrainer(serialized: first.serialized(), settings: settings)
        #expect(resumed.step == 20 && resumed.sae.inputScale == 1.5)
        for batch in batches[20...] { _ = resumed.train(batch, rows: 16) }
        #expect(resumed.sae == straight.sae)
        #expect(resumed.idleTokens == straight.idleTokens)
        #expect(throws: ModelError.self) { try SAETrainer(serialized: Data("LSAE".utf8), settings: settings) }
    }
}
