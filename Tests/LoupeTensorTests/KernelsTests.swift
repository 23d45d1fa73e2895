import Foundation
import LoupeTensor
import Testing

@Suite struct KernelsTests {
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
