import Foundation
import LoupeTensor
import Testing

/// The C kernels against straightforward Double references, on odd shapes (not multiples of
/// the 8-lane SIMD width or the 6 × 16 tile, K past one 256-deep block).
@Suite struct CPUKernelsTests {
    private func random(_ count: Int, seed: UInt64, scale: Float = 1) -> [Float] {
        var state = seed
        return (0..<count).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return (Float(state % 20001) / 10000 - 1) * scale
        }
    }

    private func reference(_ a: [Float], _ b: [Float], m: Int, n: Int, k: Int) -> [Double] {
        var c = [Double](repeating: 0, count: m * n)
        for i in 0..<m {
            for p in 0..<k {
                let x = Double(a[i * k + p])
                for j in 0..<n { c[i * n + j] += x * Double(b[p * n + j]) }
            }
        }
        return c
    }

    private func worst(_ x: [Float], _ y: [Double]) -> Double {
        // NaN counts as the worst (Swift's max would drop it).
        zip(x, y).reduce(0) { $1.0.isNaN ? .infinity : max($0, abs(Double($1.0) - $1.1)) }
    }

    // Shapes past and short of both tiles (6 × 16 and 12 × 32) and of the 256-deep block.
    @Test(arguments: [
        (1, 1, 1), (7, 13, 5), (6, 16, 8), (12, 32, 8), (37, 70, 300), (100, 33, 17), (13, 17, 513), (25, 47, 64),
    ])
    func matmulsMatchTheReference(m: Int, n: Int, k: Int) {
        let a = random(m * k, seed: 1)
        let b = random(k * n, seed: 2)
        let expected = reference(a, b, m: m, n: n, k: k)
        for threads in [1, 2] {
            var naive = [Float](repeating: .nan, count: m * n)
            naive.withUnsafeMutableBufferPointer {
                CPUKernels.matmulNaive(a, b, $0.baseAddress!, m: m, n: n, k: k, threads: threads)
            }
            #expect(worst(naive, expected) < 1e-3 * Double(k).squareRoot())
            for widest in CPUKernels.InstructionSet.allCases {
                var blocked = [Float](repeating: .nan, count: m * n)
                blocked.withUnsafeMutableBufferPointer {
                    CPUKernels.matmulBlocked(
                        a, b, $0.baseAddress!, m: m, n: n, k: k, threads: threads, widest: widest)
                }
                #expect(worst(blocked, expected) < 1e-3 * Double(k).squareRoot(), "\(widest), \(threads) threads")
            }
        }
    }

    @Test(arguments: [(5, 7, 9), (37, 70, 300)])
    func int8MatmulIsTheDequantisedProduct(m: Int, n: Int, k: Int) {
        let a = random(m * k, seed: 3)
        let w = random(n * k, seed: 4)
        let (values, scales) = CPUKernels.quantizeRows(w, rows: n, columns: k)
        #expect(values.allSatisfy { $0 >= -127 && $0 <= 127 })
        // Every row's largest magnitude maps to ±127.
        for row in 0..<n {
            #expect(values[(row * k)..<((row + 1) * k)].map { abs(Int($0)) }.max() == 127)
        }
        // The product with the dequantised weights, transposed into k × n.
        var dequantisedT = [Float](repeating: 0, count: k * n)
        for row in 0..<n {
            for p in 0..<k { dequantisedT[p * n + row] = Float(values[row * k + p]) * scales[row] }
        }
        let expected = reference(a, dequantisedT, m: m, n: n, k: k)
        var c = [Float](repeating: .nan, count: m * n)
        c.withUnsafeMutableBufferPointer {
            CPUKernels.matmulInt8(a, weight: values, scales: scales, $0.baseAddress!, m: m, n: n, k: k, threads: 2)
        }
        #expect(worst(c, expected) < 1e-3 * Double(k).squareRoot())
        // And close to the unquantised product.
        var wT = [Float](repeating: 0, count: k * n)
        for row in 0..<n { for p in 0..<k { wT[p * n + row] = w[row * k + p] } }
        let exact = reference(a, wT, m: m, n: n, k: k)
        let error = zip(c, exact).reduce(0) { $0 + (Double($1.0) - $1.1) * (Double($1.0) - $1.1) }
        let norm = exact.reduce(0) { $0 + $1 * $1 }
        #expect((error / norm).squareRoot() < 0.01)
    }

    @Test(arguments: [1, 7, 8, 31, 32, 33, 100, 1000])
    func softmaxesMatchTheReference(columns: Int) {
        let rows = 3
        // Large magnitudes: a naive exp without the max shift would overflow.
        let x = random(rows * columns, seed: 5, scale: 60)
        for online in [false, true] {
            var y = [Float](repeating: .nan, count: rows * columns)
            y.withUnsafeMutableBufferPointer {
                CPUKernels.softmax(x, $0.baseAddress!, rows: rows, columns: columns, online: online, threads: 2)
            }
            for row in 0..<rows {
                let line = x[(row * columns)..<((row + 1) * columns)].map(Double.init)
                let maximum = line.max()!
                let sum = line.reduce(0) { $0 + exp($1 - maximum) }
                for (offset, value) in line.enumerated() {
                    let expected = exp(value - maximum) / sum
                    #expect(abs(Double(y[row * columns + offset]) - expected) < 1e-6 + 1e-5 * expected)
                }
            }
        }
    }

    /// 19 rows over two threads are blocks of eight and a remainder; 600 and 1001 columns are
    /// more than one 512-column slice, 1001 with a tail past the last whole vector.
    @Test(arguments: [1, 15, 16, 17, 384, 600, 1001])
    func layerNormMatchesTheReference(columns: Int) {
        let rows = 19
        let x = random(rows * columns, seed: 6, scale: 3).map { $0 + 5 }
        let gamma = random(columns, seed: 7)
        let beta = random(columns, seed: 8)
        var y = [Float](repeating: .nan, count: rows * columns)
        y.withUnsafeMutableBufferPointer {
            CPUKernels.layerNorm(
                x, $0.baseAddress!, gamma: gamma, beta: beta, rows: rows, columns: columns, epsilon: 1e-5, threads: 2)
        }
        for row in 0..<rows {
            let line = x[(row * columns)..<((row + 1) * columns)].map(Double.init)
            let mean = line.reduce(0, +) / Double(columns)
            let variance = line.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(columns)
            for (offset, value) in line.enumerated() {
                let expected =
                    (value - mean) / (variance + 1e-5).squareRoot() * Double(gamma[offset]) + Double(beta[offset])
                #expect(abs(Double(y[row * columns + offset]) - expected) < 2e-4)
            }
        }
    }

    @Test func geluMatchesTheErfForm() {
        var x = random(1003, seed: 9, scale: 6)
        let original = x
        x.withUnsafeMutableBufferPointer { CPUKernels.gelu($0.baseAddress!, count: $0.count, threads: 2) }
        for (value, result) in zip(original, x) {
            let expected = 0.5 * Double(value) * (1 + erf(Double(value) / 2.0.squareRoot()))
            #expect(abs(Double(result) - expected) < 1e-5)
        }
    }

    @Test(arguments: [(1, 8), (5, 17), (47, 64), (48, 64), (49, 64), (97, 33), (130, 32), (200, 64)])
    func attentionMethodsMatchTheReference(length t: Int, headSize d: Int) {
        let q = random(t * d, seed: 10, scale: 2)
        let k = random(t * d, seed: 11, scale: 2)
        let v = random(t * d, seed: 12)
        var expected = [Double](repeating: 0, count: t * d)
        let scale = 1 / Double(d).squareRoot()
        for i in 0..<t {
            var scores = (0..<t).map { j in
                (0..<d).reduce(0.0) { $0 + Double(q[i * d + $1]) * Double(k[j * d + $1]) } * scale
            }
            let maximum = scores.max()!
            scores = scores.map { exp($0 - maximum) }
            let sum = scores.reduce(0, +)
            for j in 0..<t {
                for c in 0..<d { expected[i * d + c] += scores[j] / sum * Double(v[j * d + c]) }
            }
        }
        for method in CPUKernels.AttentionMethod.allCases {
            // Flash in every form this CPU runs (12 × 32 tiles and 96-row blocks with AVX-512).
            let forms = method == .flash ? CPUKernels.InstructionSet.allCases : [.avx512]
            for widest in forms {
                var o = [Float](repeating: .nan, count: t * d)
                o.withUnsafeMutableBufferPointer {
                    CPUKernels.attention(
                        method, q: q, k: k, v: v, o: $0.baseAddress!, length: t, headSize: d, widest: widest)
                }
                #expect(worst(o, expected) < 1e-5, "\(method) \(widest)")
            }
        }
    }

    /// Flash attention's extra memory is Kᵀ and V packed once, linear in T and about their own
    /// size, never the T × T scores the naive form keeps.
    @Test func flashAttentionNeedsNoMemoryThatGrowsWithTSquared() {
        let bytes = { (t: Int) in CPUKernels.attentionScratchBytes(.flash, length: t, headSize: 64) }
        // Lengths that fill whole panels (multiples of 6, 12, 16 and 32), where linear means exactly so.
        #expect(bytes(6144) - bytes(3072) == 2 * (bytes(3072) - bytes(1536)))
        #expect(bytes(6144) <= 2 * 6144 * 64 * 4 + 100_000)
        #expect(CPUKernels.attentionScratchBytes(.naive, length: 2048, headSize: 64) == 2048 * 2048 * 4)
        #expect(bytes(2048) * 10 < 2048 * 2048 * 4)
    }

    /// Each row's k largest: every form gives the same columns in the same order, and they are the
    /// k largest values (a reference sort, ties to the earlier column where no tie straddles the
    /// k-th place). Rows: random; rising (the cut's weakest case); with ties; with a NaN (every
    /// value offered); narrower than two lanes a group (uncut); fewer values than k (padded with -1).
    @Test(arguments: [(7, 3072, 32), (5, 100, 3), (3, 40, 32), (4, 20, 32), (9, 333, 8), (4, 1000, 32)])
    func topKRowsFindTheLargestInEveryForm(rows: Int, width: Int, k: Int) {
        var x = random(rows * width, seed: UInt64(width * 31 + k))
        for j in 0..<width {
            x[width + j] = Float(j) * 0.01  // rising
            if rows > 2 { x[2 * width + j] = Float(j % 7) }  // ties
        }
        if rows > 3 { x[3 * width + width / 2] = .nan }
        let kk = min(k, width)
        var forms: [[Int32]] = []
        for widest in CPUKernels.InstructionSet.allCases {
            var chosen = [Int32](repeating: -7, count: rows * kk)
            x.withUnsafeBufferPointer { v in
                chosen.withUnsafeMutableBufferPointer {
                    CPUKernels.topKRows(
                        v.baseAddress!, rows: rows, width: width, k: kk, into: $0.baseAddress!, widest: widest)
                }
            }
            forms.append(chosen)
        }
        #expect(forms.allSatisfy { $0 == forms[0] }, "the forms disagree")
        for r in 0..<rows where r != 3 {
            let row = Array(x[(r * width)..<((r + 1) * width)])
            let got = forms[0][(r * kk)..<((r + 1) * kk)].filter { $0 >= 0 }.map { row[Int($0)] }.sorted(by: >)
            let expected = Array(row.sorted(by: >).prefix(kk))
            #expect(got == expected, "row \(r)")
            #expect(Set(forms[0][(r * kk)..<((r + 1) * kk)]).count == kk, "row \(r) repeats a column")
        }
    }

    /// Adam's update in every form, against the formula in Double: the same floats.
    @Test(arguments: [1, 15, 16, 17, 1000])
    func adamStepMatchesTheFormulaInEveryForm(count: Int) {
        let gradient = random(count, seed: 3)
        let start = random(count, seed: 4)
        let (b1, b2, step, inverse2, eps): (Float, Float, Float, Float, Float) = (0.9, 0.999, 4e-3, 1.7, 1e-8)
        var results: [[Float]] = []
        for widest in CPUKernels.InstructionSet.allCases {
            var p = start
            var m = random(count, seed: 5, scale: 0.1)
            var v = random(count, seed: 6, scale: 0.1).map { $0 * $0 }
            let m0 = m
            let v0 = v
            p.withUnsafeMutableBufferPointer { p in
                m.withUnsafeMutableBufferPointer { m in
                    v.withUnsafeMutableBufferPointer { v in
                        CPUKernels.adamStep(
                            p.baseAddress!, gradient: gradient, moments: m.baseAddress!, squares: v.baseAddress!,
                            count: count, beta1: b1, beta2: b2, step: step, inverse2: inverse2, epsilon: eps,
                            widest: widest)
                    }
                }
            }
            for i in 0..<count {
                let g = Double(gradient[i])
                let moment = 0.9 * Double(m0[i]) + 0.1 * g
                let square = 0.999 * Double(v0[i]) + 0.001 * g * g
                let expected =
                    Double(start[i]) - Double(step) * moment / ((square * Double(inverse2)).squareRoot() + 1e-8)
                #expect(abs(Double(p[i]) - expected) <= 1e-6 * max(1, abs(expected)), "\(widest) at \(i)")
            }
            results.append(p + m + v)
        }
        #expect(results.allSatisfy { $0 == results[0] }, "the forms disagree")
    }
}
