import Foundation
import LoupeTensor
import Testing

/// A deterministic pseudo-random tensor (xorshift), values in -1...1.
private func random(_ shape: [Int], seed: UInt64) -> Tensor {
    var state = seed
    let values = (0..<shape.reduce(1, *)).map { _ -> Float in
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return Float(state % 20001) / 10000 - 1
    }
    return Tensor(shape: shape, storage: values)
}

/// ‖actual − expected‖ / ‖expected‖ (Frobenius), in Double.
private func relativeError(_ actual: Tensor, _ expected: Tensor) -> Double {
    var error: Double = 0
    var norm: Double = 0
    for (a, e) in zip(actual.storage, expected.storage) {
        error += Double(a - e) * Double(a - e)
        norm += Double(e) * Double(e)
    }
    return (error / max(norm, 1e-30)).squareRoot()
}

@Suite struct KernelsTests {

    @Test(arguments: [(1, 1, 1), (3, 5, 7), (17, 33, 9), (64, 384, 384)])
    func linearMatchesAStraightforwardLoop(rows: Int, inputs: Int, outputs: Int) {
        let x = random([rows, inputs], seed: 1)
        let w = random([outputs, inputs], seed: 2)
        let b = random([outputs], seed: 3)
        let y = Kernels.linear(x, weight: w, bias: b)
        #expect(y.shape == [rows, outputs])
        var worst: Float = 0
        for r in 0..<rows {
            for o in 0..<outputs {
                var sum = Double(b.storage[o])
                for i in 0..<inputs { sum += Double(x.storage[r * inputs + i]) * Double(w.storage[o * inputs + i]) }
                worst = max(worst, abs(Float(sum) - y.storage[r * outputs + o]))
            }
        }
        #expect(worst < 1e-4)
    }

    @Test func layerNormGivesZeroMeanUnitVariance() {
        var x = random([4, 37], seed: 9)
        Kernels.layerNorm(
            &x, gamma: Tensor(shape: [37], storage: Array(repeating: 1, count: 37)), beta: Tensor(zeros: [37]),
            epsilon: 1e-12)
        for row in 0..<4 {
            let values = x.row(row)
            let mean = values.reduce(0, +) / 37
            let variance = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / 37
            #expect(abs(mean) < 1e-5)
            #expect(abs(variance - 1) < 1e-4)
        }
    }

    @Test func layerNormAddingTheResidualIsTheNormOfTheSum() {
        let x = random([5, 384], seed: 11)
        let residual = random([5, 384], seed: 12)
        let gamma = random([384], seed: 13)
        let beta = random([384], seed: 14)
        var fused = x
        Kernels.layerNorm(&fused, adding: residual, gamma: gamma, beta: beta, epsilon: 1e-12)
        var worst: Double = 0
        for row in 0..<5 {
            let sum = (0..<384).map { Double(x.storage[row * 384 + $0]) + Double(residual.storage[row * 384 + $0]) }
            let mean = sum.reduce(0, +) / 384
            let variance = sum.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / 384
            for c in 0..<384 {
                let expected =
                    (sum[c] - mean) / (variance + 1e-12).squareRoot() * Double(gamma.storage[c])
                    + Double(beta.storage[c])
                worst = max(worst, abs(expected - Double(fused.storage[row * 384 + c])))
            }
        }
        #expect(worst < 1e-5, "max |diff| \(worst)")
    }

    /// The fused attention kernel against softmax(q·kᵀ/√d)·v in Double, head by head, on lengths
    /// that fill no tile exactly (the kernel works in 48-row blocks and 6 × 16 or 12 × 32 register
    /// tiles), padded into one batch; padding rows must stay zero. Every form this CPU runs: the
    /// plain C loops, AVX2, AVX-512.
    @Test(arguments: CPUKernels.InstructionSet.allCases)
    func attentionMatchesSoftmaxOfScaledScoresTimesValues(widest: CPUKernels.InstructionSet) {
        let heads = 3
        let d = 32
        let hidden = heads * d
        let lengths = [50, 1, 0, 17, 97]
        let width = lengths.max()!
        let qkv = random([lengths.count, width, 3 * hidden], seed: 21)
        var kept: [Int: Tensor] = [:]
        let context = Kernels.attention(
            qkv: qkv, lengths: lengths, heads: heads, headSize: d, probabilities: { kept[$0] = $1 }, widest: widest)
        #expect(context.shape == [lengths.count, width, hidden])
        var worstOutput: Double = 0
        var worstWeight: Double = 0
        for (b, length) in lengths.enumerated() {
            #expect(kept[b]?.shape == [heads, length, length])
            func at(_ t: Int, _ column: Int) -> Double { Double(qkv.storage[(b * width + t) * 3 * hidden + column]) }
            for h in 0..<heads {
                for i in 0..<length {
                    let scores = (0..<length).map { j in
                        (0..<d).reduce(0.0) { $0 + at(i, h * d + $1) * at(j, hidden + h * d + $1) }
                            / Double(d).squareRoot()
                    }
                    let top = scores.max()!
                    let e = scores.map { Foundation.exp($0 - top) }
                    let total = e.reduce(0, +)
                    for j in 0..<length {
                        let weight = Double(kept[b]!.storage[(h * length + i) * length + j])
                        worstWeight = max(worstWeight, abs(weight - e[j] / total))
                    }
                    for c in 0..<d {
                        let expected = (0..<length).reduce(0.0) { $0 + e[$1] / total * at($1, 2 * hidden + h * d + c) }
                        let actual = Double(context.storage[(b * width + i) * hidden + h * d + c])
                        worstOutput = max(worstOutput, abs(expected - actual))
                    }
                }
            }
            let padding = context.storage[((b * width + length) * hidden)..<((b + 1) * width * hidden)]
            #expect(padding.allSatisfy { $0 == 0 })
        }
        #expect(worstWeight < 1e-6, "\(widest): attention weights: max |diff| \(worstWeight)")
        #expect(worstOutput < 1e-5, "\(widest): outputs: max |diff| \(worstOutput)")
    }

    /// The bf16 heads (the int8 encoder's attention) in each form against the fp32 kernel, on
    /// lengths around the 16-query and 32-key blocks, padded into one batch: within bf16's
    /// rounding (Q, K, V and the weights carry 8 bits), and not equal, so a bf16 form did run,
    /// where the CPU has it (AVX-512 BF16, AMX-BF16); the same bits as fp32 where it has not, and
    /// for a head size other than 32. Where both bf16 forms run, they agree with each other far
    /// more closely than with fp32: the same bf16 products, summed in another order (which can tip
    /// a weight's rounding to bf16).
    @Test(arguments: [32, 24])
    func bf16AttentionStaysWithinBF16RoundingOfFP32(headSize d: Int) {
        let heads = 3
        let hidden = heads * d
        let lengths = [50, 1, 0, 17, 97, 300, 32]
        let width = lengths.max()!
        let qkv = random([lengths.count, width, 3 * hidden], seed: 23)
        let fp32 = Kernels.attention(qkv: qkv, lengths: lengths, heads: heads, headSize: d)
        var ran: [Kernels.AttentionForm: Tensor] = [:]
        for form in [Kernels.AttentionForm.avx512, .amx] {
            let bf16 = Kernels.attention(qkv: qkv, lengths: lengths, heads: heads, headSize: d, form: form)
            for (b, length) in lengths.enumerated() {
                let padding = bf16.storage[((b * width + length) * hidden)..<((b + 1) * width * hidden)]
                #expect(padding.allSatisfy { $0 == 0 }, "\(form)")
            }
            let usable = form.usable(headSize: d)
            if usable == .fp32 {
                #expect(d != 32 || form.usable(headSize: 32) == .fp32)
                #expect(bf16.storage == fp32.storage, "\(form)")
            } else {
                let error = relativeError(bf16, fp32)
                #expect(error > 0 && error < 1e-2, "\(form) ran as \(usable): relative error \(error)")
                ran[usable] = bf16
            }
        }
        if let avx512 = ran[.avx512], let amx = ran[.amx] {
            #expect(relativeError(amx, avx512) < 3e-4, "AMX against AVX-512 BF16")
        }
    }

    /// Every real score far below zero: the softmax's maximum must come from the real keys only,
    /// not from the zero scores of the keys padding a block. Measured from 0, every weight would
    /// be exp's lowest value and all keys would weigh the same; measured from the real maximum,
    /// the keys nearest the queries (every third, 90 below the others after scaling) take all
    /// the weight, so each output row is the mean of those keys' values.
    @Test(arguments: [Kernels.AttentionForm.avx512, .amx])
    func bf16AttentionTakesTheMaximumOverRealKeysOnly(form: Kernels.AttentionForm) {
        let (heads, d, length) = (2, 32, 17)
        let hidden = heads * d
        var qkv = Tensor(zeros: [1, length, 3 * hidden])
        func value(_ t: Int, _ c: Int) -> Float { Float(t % 5) - 2 + Float(c) / 64 }
        for t in 0..<length {
            for c in 0..<hidden {
                qkv.storage[t * 3 * hidden + c] = 8
                qkv.storage[t * 3 * hidden + hidden + c] = t % 3 == 0 ? -8 : -10
                qkv.storage[t * 3 * hidden + 2 * hidden + c] = value(t, c)
            }
        }
        let out = Kernels.attention(qkv: qkv, lengths: [length], heads: heads, headSize: d, form: form)
        let nearest = (0..<length).filter { $0 % 3 == 0 }
        for c in 0..<hidden {
            let mean = nearest.map { value($0, c) }.reduce(0, +) / Float(nearest.count)
            for t in 0..<length {
                let got = out.storage[t * hidden + c]
                #expect(abs(got - mean) < 0.02, "\(form) row \(t) column \(c): \(got), mean \(mean)")
            }
        }
    }

    @Test func geluIsTheErfForm() {
        var x = Tensor(shape: [4], storage: [-2, 0, 1, 3])
        Kernels.gelu(&x)
        let expected: [Float] = [-0.04550026, 0, 0.8413447, 2.9959502]
        for (a, b) in zip(x.storage, expected) { #expect(abs(a - b) < 1e-6) }
    }

    @Test func softmaxRowsSumToOneAndMaskPadding() {
        var values: [Float] = [1, 2, 3, 99, 1000, 1000, 1000, 99]
        values.withUnsafeMutableBufferPointer { Kernels.softmaxRows($0.baseAddress!, rows: 2, columns: 4, valid: 3) }
        #expect(abs(values[0..<3].reduce(0, +) - 1) < 1e-6)
        #expect(values[3] == 0 && values[7] == 0)
        #expect(abs(values[4] - 1.0 / 3) < 1e-6)
        #expect(values[2] > values[1] && values[1] > values[0])
    }
}

@Suite struct GELUAccuracyTests {
    @Test func matchesTheExactErfFormEverywhere() {
        let values = stride(from: Float(-12), through: 12, by: 0.001).map { $0 } + [0, -0.0, 1e-30, -1e-30, 30, -30]
        var tensor = Tensor(shape: [values.count], storage: values)
        Kernels.gelu(&tensor)
        var worst: Double = 0
        for (input, output) in zip(values, tensor.storage) {
            let exact = 0.5 * Double(input) * (1 + Foundation.erf(Double(input) / 2.0.squareRoot()))
            worst = max(worst, abs(Double(output) - exact))
        }
        #expect(worst < 2e-6, "max |diff| \(worst)")
        let finite = tensor.storage.allSatisfy { $0.isFinite }
        #expect(finite)
    }
}

@Suite struct QuantizedLinearTests {

    /// The int8 layer against fp32 on shapes that fill no tile exactly (the kernel works in 12-row
    /// × 32-column tiles over groups of 4 inputs), with and without bias: the relative Frobenius
    /// error of 8-bit weights and activations is under 1%. With an outlier channel (×20, as
    /// layer-norm outputs have) the error grows, and smoothing takes a good part of it back.
    @Test(arguments: [(2, 45, 5, true), (13, 7, 33, true), (25, 384, 1152, false), (7, 1536, 384, true)])
    func int8MatchesFP32WithinQuantisationError(rows: Int, inputs: Int, outputs: Int, biased: Bool) {
        let w = random([outputs, inputs], seed: 32)
        let b = biased ? random([outputs], seed: 33) : nil
        func error(_ x: Tensor, smoothed: Bool) -> Double {
            let reference = Kernels.linear(x, weight: w, bias: b)
            let maxima = (0..<inputs).map { c in (0..<rows).map { abs(x.storage[$0 * inputs + c]) }.max()! }
            let layer = QuantizedLinear(
                weight: w, bias: b,
                smoothing: smoothed ? QuantizedLinear.smoothing(activationMaxima: maxima, weight: w) : nil)
            let y = Kernels.linear(x, quantized: layer)
            #expect(y.shape == reference.shape)
            return relativeError(y, reference)
        }
        let x = random([rows, inputs], seed: 31)
        let plain = error(x, smoothed: false)
        #expect(plain < 0.01, "relative error \(plain)")
        var outlier = x
        for r in 0..<rows { outlier.storage[r * inputs] *= 20 }
        let unsmoothed = error(outlier, smoothed: false)
        let smoothed = error(outlier, smoothed: true)
        #expect(smoothed < unsmoothed * 0.7, "smoothed \(smoothed), unsmoothed \(unsmoothed)")
        #expect(smoothed < 0.02, "smoothed \(smoothed)")
    }

    /// AMX's tiles (32 rows × 32 columns, inputs 64 at a time), the VNNI register tile (12 × 32),
    /// the AVX2 one (2 × 16, products in int16) and the plain loop sum the same integers and store
    /// them with the same fused multiply-add, so all four store the same bits: on row counts around
    /// the tiles and the 32-row block, column counts short of a 16- or 32-column panel, and inputs
    /// that are a multiple of 64 (AMX runs) or not (AMX falls back to VNNI), or of 4 (padding). A
    /// form the CPU lacks runs the widest it has below it; the plain loop runs everywhere, so each
    /// vector form the CPU has is checked against it.
    @Test(arguments: [1, 2, 3, 15, 16, 17, 29, 31, 32, 33, 45, 64, 250])
    func everyFormStoresTheSameBits(rows: Int) {
        for (inputs, outputs) in [(384, 70), (1536, 384), (64, 24), (390, 33), (390, 70), (8, 9)] {
            let x = random([rows, inputs], seed: 71 + UInt64(rows))
            let layer = QuantizedLinear(
                weight: random([outputs, inputs], seed: 72), bias: outputs % 2 == 0 ? random([outputs], seed: 73) : nil)
            var portable = Tensor(zeros: [rows, outputs])
            Kernels.linear(x, rows: 0..<rows, quantized: layer, into: &portable, at: 0, widest: .portable)
            for form in QuantizedLinear.Form.allCases where form != .portable {
                var y = Tensor(zeros: [rows, outputs])
                Kernels.linear(x, rows: 0..<rows, quantized: layer, into: &y, at: 0, widest: form)
                let first = y.storage.indices.first { y.storage[$0] != portable.storage[$0] }
                #expect(
                    first == nil,
                    "\(form), \(rows) × \(inputs) → \(outputs): element \(first ?? 0) is \(first.map { y.storage[$0] } ?? 0), the plain loop's \(first.map { portable.storage[$0] } ?? 0)"
                )
            }
        }
    }

    /// The bytes where an AVX2 int8 GEMM built on vpmaddubsw saturates: rows whose every input
    /// quantises to 255 against columns whose every weight quantises to ±127, so each pair of
    /// products is ±64,770, past int16's 32,767. Every form gives the exact sums, k · 255 · 127 (with
    /// the zero point 0 and the scales the rows and columns set), where saturation would give half.
    @Test func noFormSaturatesOnTheLargestBytes() {
        let (rows, inputs) = (5, 384)
        let x = Tensor(shape: [rows, inputs], storage: [Float](repeating: 0.5, count: rows * inputs))
        var w = [Float](repeating: 0.25, count: 3 * inputs)
        for p in 0..<inputs { w[inputs + p] = -0.25 }
        let layer = QuantizedLinear(weight: Tensor(shape: [3, inputs], storage: w), bias: nil)
        let expected: [Float] = [0.125, -0.125, 0.125].map { $0 * Float(inputs) }
        for form in QuantizedLinear.Form.allCases {
            var y = Tensor(zeros: [rows, 3])
            Kernels.linear(x, rows: 0..<rows, quantized: layer, into: &y, at: 0, widest: form)
            for r in 0..<rows {
                for j in 0..<3 {
                    let got = y.storage[r * 3 + j]
                    #expect(abs(got - expected[j]) < 1e-4, "\(form): row \(r), column \(j): \(got), not \(expected[j])")
                }
            }
        }
    }

    /// Rows that are almost all positive (as GELU's output is) keep all 256 levels with the zero
    /// point, and a channel far above the rest kept in fp32 no longer sets every row's scale: the
    /// error falls by more than half, on the vectorised tile and the portable loop alike.
    @Test func aZeroPointAndAnFP32ChannelKeepGELUsOutputPrecise() {
        let (rows, inputs, outputs) = (29, 1536, 70)
        let w = random([outputs, inputs], seed: 61)
        var x = random([rows, inputs], seed: 62)
        for index in x.storage.indices { x.storage[index] = max(-0.17, x.storage[index]) }
        for r in 0..<rows { x.storage[r * inputs + 856] = 24 + x.storage[r * inputs + 856] }
        let reference = Kernels.linear(x, weight: w, bias: nil)
        func error(_ layer: QuantizedLinear, widest: QuantizedLinear.Form = .amx) -> Double {
            var y = Tensor(zeros: [rows, outputs])
            Kernels.linear(x, rows: 0..<rows, quantized: layer, into: &y, at: 0, widest: widest)
            return relativeError(y, reference)
        }
        let plain = error(QuantizedLinear(weight: w, bias: nil))
        let kept = QuantizedLinear(weight: w, bias: nil, outliers: [856])
        #expect(error(kept) < plain * 0.5, "with the channel in fp32 \(error(kept)), without \(plain)")
        #expect(abs(error(kept, widest: .portable) - error(kept)) < 1e-6)
        #expect(error(kept) < 0.01)
    }

    @Test func aBlockOfRowsLandsInTheRowsAskedFor() {
        let x = random([10, 40], seed: 41)
        let layer = QuantizedLinear(weight: random([24, 40], seed: 42), bias: nil)
        let whole = Kernels.linear(x, quantized: layer)
        var part = Tensor(zeros: [6, 24])
        Kernels.linear(x, rows: 3..<7, quantized: layer, into: &part, at: 1)
        #expect(Array(part.storage[24..<(5 * 24)]) == Array(whole.storage[(3 * 24)..<(7 * 24)]))
        #expect(part.storage[0..<24].allSatisfy { $0 == 0 } && part.storage[(5 * 24)...].allSatisfy { $0 == 0 })
    }
}
