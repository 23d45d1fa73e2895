import CKernels
import Foundation
import LoupeModels
import LoupeTensor
import Testing

/// A row's arithmetic is its own: the decode attention kernel and the float products give every
/// row the same bits alone or among many rows, on any thread count, in every instruction form
/// (so on every CPU). That is what makes a prompt's logits those of feeding its tokens one at a
/// time, a speculative draft's verification agree with plain decoding, and a greedy answer the
/// same on a Xeon and an EPYC.
@Suite(.serialized)
struct RowExactnessTests {
    /// SplitMix64 (QuantizedKernelTests'), so a failure reproduces.
    typealias Random = QuantizedKernelTests.Random

    static let forms: [loupe_isa] = [LOUPE_ISA_AVX512, LOUPE_ISA_AVX2, LOUPE_ISA_PORTABLE]

    // MARK: the decode attention kernel

    /// Keys and values of `length` rows, as a contiguous or a paged (blocks of 16 in reverse
    /// order) view of f32 or f16 elements, and the float values the kernel reads (`keys`, `values`).
    struct Cache {
        let rowWidth: Int
        let blockRows = 16
        let half: Bool
        let paged: Bool
        var keys: [Float]
        var values: [Float]
        var floatRows: ([Float], [Float]) = ([], [])
        var halfRows: ([UInt16], [UInt16]) = ([], [])
        var blocks: [Int32] = []

        init(length: Int, rowWidth: Int, half: Bool, paged: Bool, random: inout Random) {
            self.rowWidth = rowWidth
            self.half = half
            self.paged = paged
            keys = random.floats(length * rowWidth, -1...1)
            values = random.floats(length * rowWidth, -1...1)
            let blockCount = (length + blockRows - 1) / blockRows
            blocks = (0..<blockCount).map { Int32(blockCount - 1 - $0) }
            // Block b of the sequence lives at slot blockCount − 1 − b.
            func layout(_ rows: [Float]) -> [Float] {
                guard paged else { return rows }
                var stored = [Float](repeating: 0, count: blockCount * 16 * rowWidth)
                for t in 0..<length {
                    let at = ((blockCount - 1 - t / 16) * 16 + t % 16) * rowWidth
                    stored.replaceSubrange(at..<(at + rowWidth), with: rows[(t * rowWidth)..<((t + 1) * rowWidth)])
                }
                return stored
            }
            func halves(_ x: [Float]) -> [UInt16] {
                var h = [UInt16](repeating: 0, count: x.count)
                loupe_float_to_half_rows(x.count, x, &h, LOUPE_ISA_PORTABLE)
                return h
            }
            if half {
                halfRows = (halves(layout(keys)), halves(layout(values)))
                keys = halves(keys).map { loupe_half_to_float($0) }
                values = halves(values).map { loupe_half_to_float($0) }
            } else {
                floatRows = (layout(keys), layout(values))
            }
        }

        func withView<R>(_ body: (loupe_kv_view) -> R) -> R {
            blocks.withUnsafeBufferPointer { table in
                func view(_ k: UnsafeRawPointer?, _ v: UnsafeRawPointer?) -> R {
                    body(
                        loupe_kv_view(
                            keys: k, values: v, blocks: paged ? table.baseAddress : nil, block_rows: paged ? 16 : 0,
                            block_stride: 16 * rowWidth, row_stride: rowWidth, type: half ? LOUPE_KV_F16 : LOUPE_KV_F32)
                    )
                }
                if half {
                    return halfRows.0.withUnsafeBytes { k in
                        halfRows.1.withUnsafeBytes { v in view(k.baseAddress, v.baseAddress) }
                    }
                }
                return floatRows.0.withUnsafeBytes { k in
                    floatRows.1.withUnsafeBytes { v in view(k.baseAddress, v.baseAddress) }
                }
            }
        }
    }

    /// Softmax attention in double: each head's Σ_j softmax(q·k_j / √d)_j v_j.
    static func reference(
        query: [Float], cache: Cache, length: Int, heads: Int, keyValueHeads: Int, d: Int
    ) -> [Double] {
        var out = [Double](repeating: 0, count: heads * d)
        for h in 0..<heads {
            let g = h / (heads / keyValueHeads)
            let scores = (0..<length).map { j in
                (0..<d).reduce(0.0) {
                    $0 + Double(query[h * d + $1]) * Double(cache.keys[j * cache.rowWidth + g * d + $1])
                } / Double(d).squareRoot()
            }
            let top = scores.max() ?? 0
            let weights = scores.map { Foundation.exp($0 - top) }
            let total = weights.reduce(0, +)
            for j in 0..<length {
                for c in 0..<d {
                    out[h * d + c] += weights[j] / total * Double(cache.values[j * cache.rowWidth + g * d + c])
                }
            }
        }
        return out
    }

    /// Every form gives the portable loop's bits, contiguous or paged, f32 or f16, short rows and
    /// rows split across threads (1,100 keys: 4 parts), heads of 64 and 128 (two spans); a head
    /// of 40 (no SIMD form) is checked against the reference alone.
    @Test(arguments: [64, 128, 40])
    func decodeAttentionHasOneAnswerInEveryForm(headSize d: Int) {
        var random = Random(state: UInt64(d))
        let (heads, keyValueHeads) = (9, 3)
        for length in [1, 7, 64, 65, 300, 1100] {
            for (half, paged) in [(false, false), (true, false), (false, true), (true, true)] {
                let cache = Cache(
                    length: length, rowWidth: keyValueHeads * d, half: half, paged: paged, random: &random)
                let query = random.floats(heads * d, -1...1)
                let outputs = Self.forms.map { form in
                    var out = [Float](repeating: 0, count: heads * d)
                    cache.withView { view in
                        query.withUnsafeBufferPointer { q in
                            out.withUnsafeMutableBufferPointer { o in
                                DecodeAttention.attend(
                                    [
                                        .init(
                                            query: q.baseAddress!, keyValues: view, length: length,
                                            output: o.baseAddress!)
                                    ],
                                    heads: heads, keyValueHeads: keyValueHeads, headSize: d, threads: 2, widest: form)
                            }
                        }
                    }
                    return out
                }
                let label = "d \(d), \(length) keys, \(half ? "f16" : "f32"), \(paged ? "paged" : "contiguous")"
                for (form, out) in zip(Self.forms, outputs).dropFirst() {
                    #expect(
                        out.map(\.bitPattern) == outputs[0].map(\.bitPattern), "\(label): form \(form.rawValue) differs"
                    )
                }
                let expected = Self.reference(
                    query: query, cache: cache, length: length, heads: heads, keyValueHeads: keyValueHeads, d: d)
                let worst = zip(outputs[0], expected).map { abs(Double($0) - $1) }.max() ?? .infinity
                #expect(worst < 1e-5, "\(label): max |Δ| \(worst) from the double reference")
            }
        }
    }

    // MARK: the float products

    /// One token or thirteen (every tile remainder), 1 or 2 threads, every form: the same bits,
    /// within float rounding of a double product; 37 rows leave the last panel part full.
    @Test func floatProductsGiveEachRowItsOwnBits() {
        var random = Random(state: 7)
        let (rows, columns, tokens) = (37, 96, 13)
        let weights = random.floats(rows * columns, -1...1)
        let x = random.floats(tokens * columns, -1...1)
        let matrix = FloatMatrix(rows: rows, columns: columns, weights: weights)
        #expect(matrix.row(36) == Array(weights[(36 * columns)..<(37 * columns)]))
        defer { FloatMatrix.widest = LOUPE_ISA_AVX512 }
        var results: [[UInt32]] = []
        for form in Self.forms {
            FloatMatrix.widest = form
            for threads in [1, 2] {
                var many = [Float](repeating: 0, count: tokens * rows)
                matrix.multiply(rows: tokens, x, into: &many, threads: threads)
                results.append(many.map(\.bitPattern))
                var alone = [Float](repeating: 0, count: tokens * rows)
                for t in 0..<tokens {
                    x.withUnsafeBufferPointer { input in
                        alone.withUnsafeMutableBufferPointer { out in
                            matrix.multiply(
                                rows: 1, input.baseAddress! + t * columns, into: out.baseAddress! + t * rows,
                                threads: threads)
                        }
                    }
                }
                results.append(alone.map(\.bitPattern))
            }
        }
        #expect(results.allSatisfy { $0 == results[0] }, "rows or forms differ")
        var worst: Double = 0
        for t in 0..<tokens {
            for o in 0..<rows {
                let exact = (0..<columns).reduce(0.0) {
                    $0 + Double(x[t * columns + $1]) * Double(weights[o * columns + $1])
                }
                worst = max(worst, abs(Double(Float(bitPattern: results[0][t * rows + o])) - exact))
            }
        }
        #expect(worst < 1e-4, "max |Δ| \(worst) from the double product")
    }

    // MARK: on the model

    static func model(_ precision: LlamaPrecision) throws -> LlamaModel {
        precision == .q8 ? try SmolLM2.quantizedModel() : try SmolLM2.model()
    }

    /// The France prompt and answer (45 tokens) read in one pass give every position the logits
    /// that feeding the tokens one at a time gives, bit for bit; so does a prefill of 20, a
    /// verification-sized pass of 11 and the rest.
    @Test(arguments: [LlamaPrecision.q8, .f32])
    func aPromptsRowsHaveTheBitsOfItsTokensFedOneAtATime(precision: LlamaPrecision) throws {
        let model = try Self.model(precision)
        let ids = LlamaForwardTests.france + LlamaForwardTests.franceAnswer
        let whole = try model.logits(for: ids)
        var cache = try model.makeCache(context: ids.count)
        var differing: [Int] = []
        for (position, id) in ids.enumerated() {
            let step = try model.forward([id], cache: &cache)
            if Array(step.storage) != Array(whole.row(position)) { differing.append(position) }
        }
        #expect(differing.isEmpty, "positions \(differing) differ from one token at a time")
        var chunked = try model.makeCache(context: ids.count)
        var rows: [Float] = []
        for range in [0..<20, 20..<31, 31..<ids.count] {
            rows += try model.forward(Array(ids[range]), cache: &chunked, logits: .all).storage
        }
        #expect(rows == whole.storage, "a prefill in three passes differs from one")
    }

    /// Every instruction form of every kernel the model runs (the quantized products, the float
    /// products, the attention) gives the same logits: the answers do not depend on the CPU. The
    /// float path reads a shorter prompt (its portable form is a long chain of library fmaf calls).
    @Test(arguments: [LlamaPrecision.q8, .f32])
    func everyInstructionFormGivesTheSameLogits(precision: LlamaPrecision) throws {
        let model = try Self.model(precision)
        let ids = precision == .q8 ? LlamaForwardTests.france : Array(LlamaForwardTests.france.prefix(12))
        let forms: [(QuantizedKernels.Form, loupe_isa)] = [
            (.avx512VNNI, LOUPE_ISA_AVX512), (.avxVNNI, LOUPE_ISA_AVX2), (.avx2, LOUPE_ISA_AVX2),
            (.portable, LOUPE_ISA_PORTABLE),
        ]
        defer {
            QuantizedKernels.form = .avx512VNNI
            DecodeAttention.widest = LOUPE_ISA_AVX512
            FloatMatrix.widest = LOUPE_ISA_AVX512
        }
        var results: [[Float]] = []
        for (quantized, widest) in forms {
            QuantizedKernels.form = quantized
            DecodeAttention.widest = widest
            FloatMatrix.widest = widest
            var cache = try model.makeCache(context: ids.count + 2)
            var logits = try model.forward(ids, cache: &cache, logits: precision == .q8 ? .all : .last).storage
            // Two decode steps after it.
            for _ in 0..<2 {
                let next = Int32(SmolLM2.argmax(Array(logits.suffix(model.configuration.vocabularySize))))
                logits += try model.forward([next], cache: &cache).storage
            }
            results.append(logits)
        }
        for (index, result) in results.enumerated().dropFirst() {
            #expect(result == results[0], "\(forms[index]) differs from \(forms[0])")
        }
    }
}
