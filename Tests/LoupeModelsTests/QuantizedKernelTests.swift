import Foundation
import LoupeModels
import LoupeTensor
import Testing

/// The Q4_1 / Q8_0 integer products (`QuantizedMatrix`) and the activations' 8-bit blocks: every
/// SIMD form against the portable loop bit for bit, and the products against float arithmetic on
/// the dequantized weights, within what the 8-bit activations explain.
@Suite(.serialized)
struct QuantizedKernelTests {
    /// A deterministic generator (SplitMix64), so a failure reproduces.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func float(_ range: ClosedRange<Float>) -> Float {
            range.lowerBound + Float(next() >> 40) / Float(1 << 24) * (range.upperBound - range.lowerBound)
        }
        mutating func int(_ range: ClosedRange<Int>) -> Int {
            range.lowerBound + Int(next() % UInt64(range.count))
        }
        mutating func floats(_ count: Int, _ range: ClosedRange<Float>) -> [Float] {
            (0..<count).map { _ in float(range) }
        }
    }

    /// A GGUF tensor's bytes and its weights dequantized (`[rows][columns]`), built block by block.
    struct Weights {
        var raw: [UInt8] = []
        var dequantized: [Float] = []
    }

    static func halfBits(_ value: Float) -> (UInt16, Float) {
        let half = Float16(value)
        return (half.bitPattern, Float(half))
    }

    /// Random Q4_1 blocks with the edges: nibbles 0 and 15, negative and positive mins, zero scales.
    static func q4Weights(rows: Int, columns: Int, seed: UInt64) -> Weights {
        var random = Random(state: seed)
        var weights = Weights()
        for _ in 0..<rows {
            for _ in 0..<(columns / 32) {
                let kind = random.int(0...5)
                let (d, df) = halfBits(kind == 0 ? 0 : random.float(0.0001...0.02))
                let (m, mf) = halfBits(kind == 1 ? 0 : random.float(-0.2...0.05))
                var q = (0..<32).map { _ in UInt8(random.int(0...15)) }
                if kind == 2 { q = (0..<32).map { $0 % 2 == 0 ? 0 : 15 } }
                if kind == 3 { q = [UInt8](repeating: 15, count: 32) }
                weights.raw += [UInt8(d & 0xFF), UInt8(d >> 8), UInt8(m & 0xFF), UInt8(m >> 8)]
                weights.raw += (0..<16).map { q[$0] | q[$0 + 16] << 4 }
                weights.dequantized += q.map { Float($0) * df + mf }
            }
        }
        return weights
    }

    static func weights(_ type: QuantizedMatrix.WeightType, rows: Int, columns: Int, seed: UInt64) -> Weights {
        type == .q4_1
            ? q4Weights(rows: rows, columns: columns, seed: seed) : q8Weights(rows: rows, columns: columns, seed: seed)
    }

    /// Random Q8_0 blocks, with −128, ±127 and 0 among the values.
    static func q8Weights(rows: Int, columns: Int, seed: UInt64) -> Weights {
        var random = Random(state: seed)
        var weights = Weights()
        for _ in 0..<(rows * columns / 32) {
            let kind = random.int(0...4)
            let (d, df) = halfBits(kind == 0 ? 0 : random.float(0.0001...0.01))
            var q = (0..<32).map { _ in Int8(random.int(-128...127)) }
            if kind == 1 { q = (0..<32).map { [-128, 127, -127, 0][$0 % 4] } }
            weights.raw += [UInt8(d & 0xFF), UInt8(d >> 8)] + q.map { UInt8(bitPattern: $0) }
            weights.dequantized += q.map { Float($0) * df }
        }
        return weights
    }

    /// Activation rows with the edges: a zero row, a row of one sign, a row with one outlier.
    static func activations(rows: Int, columns: Int, seed: UInt64) -> [Float] {
        var random = Random(state: seed)
        var x = (0..<(rows * columns)).map { _ in random.float(-2...2) }
        if rows > 1 { for c in 0..<columns { x[columns + c] = 0 } }
        if rows > 2 { for c in 0..<columns { x[2 * columns + c] = abs(x[2 * columns + c]) } }
        if rows > 3 { x[3 * columns + 5] = 300 }
        return x
    }

    func product(
        _ matrix: QuantizedMatrix, _ x: [Float], tokens: Int, form: QuantizedKernels.Form, threads: Int = 1
    ) -> [Float] {
        let saved = QuantizedKernels.form
        defer { QuantizedKernels.form = saved }
        QuantizedKernels.form = form
        #expect(QuantizedKernels.form == form.usable)
        var y = [Float](repeating: .nan, count: tokens * matrix.rows)
        x.withUnsafeBufferPointer { x in
            y.withUnsafeMutableBufferPointer { y in
                matrix.multiply(rows: tokens, x.baseAddress!, into: y.baseAddress!, threads: threads)
            }
        }
        return y
    }

    func matrix(_ type: QuantizedMatrix.WeightType, _ weights: Weights, rows: Int, columns: Int) throws
        -> QuantizedMatrix
    {
        try weights.raw.withUnsafeBytes {
            try QuantizedMatrix(type: type, rows: rows, columns: columns, raw: $0, name: "test", file: "random")
        }
    }

    static let forms = QuantizedKernels.Form.allCases

    @Test(arguments: forms)
    func quantizationMatchesThePortableLoop(form: QuantizedKernels.Form) {
        let x = Self.activations(rows: 6, columns: 96, seed: 7)
        let saved = QuantizedKernels.form
        defer { QuantizedKernels.form = saved }
        QuantizedKernels.form = .portable
        let reference = x.withUnsafeBufferPointer { QuantizedActivations(rows: 6, columns: 96, $0.baseAddress!) }
        QuantizedKernels.form = form
        let quantized = x.withUnsafeBufferPointer { QuantizedActivations(rows: 6, columns: 96, $0.baseAddress!) }
        for row in 0..<6 {
            for block in 0..<3 {
                let (a, b) = (reference.block(row: row, block), quantized.block(row: row, block))
                #expect(a.d.bitPattern == b.d.bitPattern && a.s.bitPattern == b.s.bitPattern && a.q == b.q)
            }
        }
    }

    @Test func updateQuantizesNewRowsAsAFreshValueWould() {
        let first = Self.activations(rows: 3, columns: 64, seed: 31)
        let second = Self.activations(rows: 3, columns: 64, seed: 32)
        var reused = first.withUnsafeBufferPointer { QuantizedActivations(rows: 3, columns: 64, $0.baseAddress!) }
        second.withUnsafeBufferPointer { reused.update($0.baseAddress!) }
        let fresh = second.withUnsafeBufferPointer { QuantizedActivations(rows: 3, columns: 64, $0.baseAddress!) }
        for row in 0..<3 {
            for block in 0..<2 {
                let (a, b) = (reused.block(row: row, block), fresh.block(row: row, block))
                #expect(a.d == b.d && a.s == b.s && a.q == b.q)
            }
        }
    }

    @Test func quantizationRoundsToNearestEvenWithinHalfAStep() {
        var x = Self.activations(rows: 6, columns: 64, seed: 3)
        // 127 · 2.5 / 127: q = 2.5 exactly when amax is 127 → rounds to 2; 3.5 → 4.
        for c in 0..<32 { x[c] = 0 }
        x[0] = 127
        x[1] = 2.5
        x[2] = 3.5
        x[3] = -2.5
        let quantized = x.withUnsafeBufferPointer { QuantizedActivations(rows: 6, columns: 64, $0.baseAddress!) }
        let first = quantized.block(row: 0, 0)
        #expect(first.d == 1 && first.q[0] == 127 && first.q[1] == 2 && first.q[2] == 4 && first.q[3] == -2)
        #expect(first.s == Float(127 + 2 + 4 - 2))
        let zero = quantized.block(row: 1, 1)
        #expect(zero.d == 0 && zero.s == 0 && zero.q.allSatisfy { $0 == 0 })
        for row in 0..<6 {
            for block in 0..<2 {
                let b = quantized.block(row: row, block)
                for (j, q) in b.q.enumerated() {
                    let value = x[row * 64 + block * 32 + j]
                    #expect(abs(Float(q) * b.d - value) <= b.d * 0.5001, "row \(row) column \(block * 32 + j)")
                }
                #expect(b.s == b.d * Float(b.q.reduce(0) { $0 + Int($1) }))
            }
        }
    }

    /// Every form, every token count through the four-token tiles (1…9), a row count that leaves a
    /// partial group of 16, and two threads: the same bits as the portable loop.
    @Test(arguments: [QuantizedMatrix.WeightType.q4_1, .q8_0])
    func everyFormStoresThePortableBits(type: QuantizedMatrix.WeightType) throws {
        let (rows, columns) = (53, 128)
        let weights = Self.weights(type, rows: rows, columns: columns, seed: 11)
        let matrix = try matrix(type, weights, rows: rows, columns: columns)
        let x = Self.activations(rows: 9, columns: columns, seed: 13)
        let reference = product(matrix, x, tokens: 9, form: .portable)
        #expect(!reference.contains { $0.isNaN }, "every output written")
        for form in Self.forms {
            for tokens in 1...9 {
                let y = product(matrix, Array(x[..<(tokens * columns)]), tokens: tokens, form: form, threads: 2)
                let differing = zip(y, reference).filter { $0.bitPattern != $1.bitPattern }.count
                #expect(differing == 0, "\(type) \(form) (runs as \(form.usable)) with \(tokens) tokens")
            }
        }
    }

    /// The product against double-precision sums over the dequantized weights and the exact
    /// activations. The bound is what the activations' rounding explains: per block, half a step
    /// (d_x / 2) times Σ |w|, plus float rounding.
    @Test(arguments: [QuantizedMatrix.WeightType.q4_1, .q8_0])
    func productMatchesFloatArithmeticOnTheDequantizedWeights(type: QuantizedMatrix.WeightType) throws {
        let (rows, columns, tokens) = (40, 192, 6)
        let weights = Self.weights(type, rows: rows, columns: columns, seed: 21)
        let matrix = try matrix(type, weights, rows: rows, columns: columns)
        let x = Self.activations(rows: tokens, columns: columns, seed: 23)
        let quantized = x.withUnsafeBufferPointer {
            QuantizedActivations(rows: tokens, columns: columns, $0.baseAddress!)
        }
        let y = product(matrix, x, tokens: tokens, form: QuantizedKernels.Form.avx512VNNI.usable)
        for t in 0..<tokens {
            for r in 0..<rows {
                var exact = 0.0
                var bound = 0.0
                for block in 0..<(columns / 32) {
                    let d = Double(quantized.block(row: t, block).d)
                    for j in 0..<32 {
                        let c = block * 32 + j
                        let w = Double(weights.dequantized[r * columns + c])
                        exact += w * Double(x[t * columns + c])
                        bound += abs(w) * d / 2
                    }
                }
                let difference = abs(Double(y[t * rows + r]) - exact)
                #expect(difference <= bound * 1.001 + 1e-5 * abs(exact) + 1e-6, "token \(t) row \(r)")
            }
        }
    }

    /// A repacked row read back as floats is the file's block dequantized (q · d, q · d + m), bit
    /// for bit, in every row of a partial last group: what the tied head serves as the embedding.
    @Test(arguments: [QuantizedMatrix.WeightType.q4_1, .q8_0])
    func dequantizedRowsAreTheFileBlocksBits(type: QuantizedMatrix.WeightType) throws {
        let (rows, columns) = (37, 96)
        let weights = Self.weights(type, rows: rows, columns: columns, seed: 31)
        let matrix = try matrix(type, weights, rows: rows, columns: columns)
        var row = [Float](repeating: .nan, count: columns)
        for r in 0..<rows {
            row.withUnsafeMutableBufferPointer { matrix.dequantizeRow(r, into: $0.baseAddress!) }
            let expected = weights.dequantized[(r * columns)..<((r + 1) * columns)]
            #expect(row.map(\.bitPattern) == expected.map(\.bitPattern), "\(type) row \(r)")
        }
    }

    /// 2 operations per weight and token, on the INT8 roof; the weights' bytes once however many tokens.
    @Test func costCountsEachWeightOncePerProduct() throws {
        let matrix = try matrix(.q4_1, Self.q4Weights(rows: 48, columns: 64, seed: 5), rows: 48, columns: 64)
        let one = matrix.cost(tokens: 1)
        let eight = matrix.cost(tokens: 8)
        #expect(one.flops == Double(2 * 48 * 64) && eight.flops == 8 * one.flops && one.precision == "INT8")
        #expect(matrix.weightByteCount == 48 * 2 * 20)
        let perToken: Double = 64 * 5.5 + 4 * 48
        #expect(eight.bytes - one.bytes == 7 * perToken)
    }

    @Test func badShapesAndSizesAreRefusedByName() {
        #expect(throws: ModelError.self) {
            try [UInt8](repeating: 0, count: 20).withUnsafeBytes {
                try QuantizedMatrix(type: .q4_1, rows: 1, columns: 16, raw: $0, name: "blk.0.x", file: "f.gguf")
            }
        }
        do {
            try [UInt8](repeating: 0, count: 39).withUnsafeBytes {
                _ = try QuantizedMatrix(type: .q4_1, rows: 2, columns: 32, raw: $0, name: "blk.0.x", file: "f.gguf")
            }
            Issue.record("39 bytes for two Q4_1 blocks accepted")
        } catch let error as ModelError {
            #expect(error.description.contains("blk.0.x") && error.description.contains("39 bytes"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}

/// The products on SmolLM2-135M-Instruct's own tensors: a Q4_1 layer weight and the Q8_0
/// embedding that is also the LM head, against the GGUF reader's dequantization (an independent
/// path from the raw bytes) and every form against the portable loop. `scripts/fetch-smollm2` puts
/// the file where these tests look (`SmolLM2Fixtures.modelPath`).
@Suite(.enabled(if: SmolLM2Fixtures.modelPath != nil, "SmolLM2 GGUF not found: run scripts/fetch-smollm2"))
struct QuantizedKernelRealFileTests {
    /// Activations shaped like the model's: embedding rows of a few tokens (what the first layer's
    /// norm reads), scaled up to unit size, one with an outlier channel.
    static func activations(_ file: GGUFFile, tokens: [Int]) throws -> [Float] {
        let embedding = try file.tensor("token_embd.weight")
        var x = [Float](repeating: 0, count: tokens.count * embedding.dimensions[0])
        x.withUnsafeMutableBufferPointer { x in
            for (index, token) in tokens.enumerated() {
                file.dequantizeRow(embedding, row: token, into: x.baseAddress! + index * embedding.dimensions[0])
            }
        }
        for index in x.indices { x[index] *= 20 }
        x[(tokens.count - 1) * embedding.dimensions[0] + 100] = 40
        return x
    }

    func check(_ name: String, tokens: [Int], everyRow step: Int) throws {
        let file = try GGUFFile(path: try #require(SmolLM2Fixtures.modelPath))
        let tensor = try file.tensor(name)
        let matrix = try QuantizedMatrix(tensor: tensor, file: file)
        let (rows, columns) = (matrix.rows, matrix.columns)
        #expect(rows == tensor.dimensions[1] && columns == tensor.dimensions[0])
        let x = try Self.activations(file, tokens: tokens)
        let count = tokens.count
        let quantized = x.withUnsafeBufferPointer {
            QuantizedActivations(rows: count, columns: columns, $0.baseAddress!)
        }
        let tests = QuantizedKernelTests()
        let reference = tests.product(matrix, x, tokens: count, form: .portable)
        for form in QuantizedKernels.Form.allCases.dropFirst() {
            let y = tests.product(matrix, x, tokens: count, form: form, threads: 2)
            #expect(y.map(\.bitPattern) == reference.map(\.bitPattern), "\(name): \(form) (as \(form.usable))")
        }
        var row = [Float](repeating: 0, count: columns)
        var worst = 0.0
        for r in stride(from: 0, to: rows, by: step) {
            row.withUnsafeMutableBufferPointer { file.dequantizeRow(tensor, row: r, into: $0.baseAddress!) }
            for t in 0..<count {
                var exact = 0.0
                var bound = 0.0
                for block in 0..<(columns / 32) {
                    let d = Double(quantized.block(row: t, block).d)
                    for j in 0..<32 {
                        let c = block * 32 + j
                        exact += Double(row[c]) * Double(x[t * columns + c])
                        bound += abs(Double(row[c])) * d / 2
                    }
                }
                let difference = abs(Double(reference[t * rows + r]) - exact)
                worst = max(worst, difference / max(bound, 1e-12))
                #expect(difference <= bound * 1.001 + 1e-5 * abs(exact) + 1e-6, "\(name) row \(r) token \(t)")
            }
        }
        // The activations' rounding errors largely cancel: measured 0.11 (Q4_1) and 0.08 (Q8_0) of
        // the worst case, which is far looser than the typical error: 0.3 keeps the check tight.
        #expect(worst < 0.3, "\(name): error reached \(worst) of the bound")
    }

    /// Every row of the tied head's copy of `token_embd` (what the q8 model embeds tokens from)
    /// and of a Q4_1 weight, against the GGUF reader's dequantization of the file: the same bits.
    @Test(arguments: ["token_embd.weight", "blk.3.ffn_down.weight"])
    func repackedRowsDequantizeAsTheFileDoes(name: String) throws {
        let file = try GGUFFile(path: try #require(SmolLM2Fixtures.modelPath))
        let tensor = try file.tensor(name)
        let matrix = try QuantizedMatrix(tensor: tensor, file: file)
        var fromCopy = [Float](repeating: .nan, count: matrix.columns)
        var fromFile = [Float](repeating: .nan, count: matrix.columns)
        var differing = 0
        for r in 0..<matrix.rows {
            fromCopy.withUnsafeMutableBufferPointer { matrix.dequantizeRow(r, into: $0.baseAddress!) }
            fromFile.withUnsafeMutableBufferPointer { file.dequantizeRow(tensor, row: r, into: $0.baseAddress!) }
            if fromCopy.map(\.bitPattern) != fromFile.map(\.bitPattern) { differing += 1 }
        }
        #expect(differing == 0, "\(name): \(differing) of \(matrix.rows) rows differ")
    }

    @Test func layerWeightQ4_1() throws {
        try check("blk.0.ffn_gate.weight", tokens: [1, 504, 2_000, 30_000, 49_151], everyRow: 1)
    }

    @Test func embeddingAsHeadQ8_0() throws {
        try check("token_embd.weight", tokens: [9_690, 28, 3_000], everyRow: 97)
    }
}
