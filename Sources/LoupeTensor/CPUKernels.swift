import CKernels
import Dispatch
import LoupeBase

/// The engine's own CPU kernels (C with AVX2, see Sources/CKernels), on flat row-major Float32
/// buffers, with the multi-threaded ones split by rows across `threads` workers. They exist to
/// be measured against OpenBLAS and against each other on the Roofline panel.
package enum CPUKernels {
    /// `a · b` for `a` m × k and `b` k × n: the textbook triple loop.
    package static func matmulNaive(
        _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ c: UnsafeMutablePointer<Float>, m: Int, n: Int, k: Int,
        threads: Int = 1
    ) {
        splitRows(m, threads: threads, granularity: 1) { start, count in
            loupe_sgemm_naive(count, n, k, a + start * k, b, c + start * n)
        }
    }

    /// `a · b`, cache-blocked around a 12 × 32 register tile (AVX-512) or 6 × 16 (AVX2), in the
    /// widest form up to `widest` that the CPU has.
    package static func matmulBlocked(
        _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ c: UnsafeMutablePointer<Float>, m: Int, n: Int, k: Int,
        threads: Int = 1, widest: InstructionSet = .avx512
    ) {
        splitRows(m, threads: threads, granularity: 12) { start, count in
            let status = loupe_sgemm_blocked_isa(
                count, n, k, a + start * k, k, b, n, c + start * n, n, widest.level)
            precondition(status == 0, "out of memory for the matmul panels")
        }
    }

    /// Each row's `k` largest values as column indices (rows × k, in a min-heap's order), in the
    /// widest form up to `widest` that the CPU has.
    package static func topKRows(
        _ x: UnsafePointer<Float>, rows: Int, width: Int, k: Int, into chosen: UnsafeMutablePointer<Int32>,
        widest: InstructionSet = .avx512
    ) {
        let status = loupe_top_k_rows(rows, width, k, x, chosen, widest.level)
        precondition(status == 0, "out of memory for the top-k heap")
    }

    /// One Adam update of `count` parameters in place (the moments updated too); `step` is the
    /// rate over the first moment's bias correction, `inverse2` one over the second's.
    package static func adamStep(
        _ parameters: UnsafeMutablePointer<Float>, gradient: UnsafePointer<Float>,
        moments: UnsafeMutablePointer<Float>, squares: UnsafeMutablePointer<Float>, count: Int,
        beta1: Float, beta2: Float, step: Float, inverse2: Float, epsilon: Float, widest: InstructionSet = .avx512
    ) {
        loupe_adam_step(
            parameters, gradient, moments, squares, count, beta1, beta2, step, inverse2, epsilon, widest.level)
    }

    /// Per-row int8 quantisation of an `rows × columns` weight: the values and one scale a row.
    package static func quantizeRows(_ weight: [Float], rows: Int, columns: Int) -> (values: [Int8], scales: [Float]) {
        precondition(weight.count == rows * columns, "weight of \(weight.count) for \(rows) × \(columns)")
        var values = [Int8](repeating: 0, count: weight.count)
        var scales = [Float](repeating: 0, count: rows)
        weight.withUnsafeBufferPointer { w in
            values.withUnsafeMutableBufferPointer { q in
                scales.withUnsafeMutableBufferPointer { s in
                    loupe_quantize_rows_int8(rows, columns, w.baseAddress, q.baseAddress, s.baseAddress)
                }
            }
        }
        return (values, scales)
    }

    /// `a · dequant(w)ᵀ` for `a` m × k and an int8 weight n × k with a scale per row.
    package static func matmulInt8(
        _ a: UnsafePointer<Float>, weight: UnsafePointer<Int8>, scales: UnsafePointer<Float>,
        _ c: UnsafeMutablePointer<Float>, m: Int, n: Int, k: Int, threads: Int = 1
    ) {
        splitRows(m, threads: threads, granularity: 6) { start, count in
            let status = loupe_matmul_int8(count, n, k, a + start * k, k, weight, scales, c + start * n, n)
            precondition(status == 0, "out of memory for the matmul panels")
        }
    }

    /// Row softmax, three passes (`online: false`) or online single-pass (`online: true`).
    package static func softmax(
        _ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, rows: Int, columns: Int, online: Bool,
        threads: Int = 1
    ) {
        splitRows(rows, threads: threads, granularity: 1) { start, count in
            if online {
                loupe_softmax_online(y + start * columns, x + start * columns, count, columns)
            } else {
                loupe_softmax_three_pass(y + start * columns, x + start * columns, count, columns)
            }
        }
    }

    /// Row layer normalisation.
    package static func layerNorm(
        _ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, gamma: UnsafePointer<Float>,
        beta: UnsafePointer<Float>, rows: Int, columns: Int, epsilon: Float, threads: Int = 1
    ) {
        splitRows(rows, threads: threads, granularity: 1) { start, count in
            loupe_layernorm(y + start * columns, x + start * columns, gamma, beta, count, columns, epsilon)
        }
    }

    /// GELU in place.
    package static func gelu(_ x: UnsafeMutablePointer<Float>, count: Int, threads: Int = 1) {
        splitRows(count, threads: threads, granularity: 64) { start, length in
            loupe_gelu_f32(x + start, length)
        }
    }

    /// How attention is computed.
    package enum AttentionMethod: String, CaseIterable, Sendable {
        /// Scores materialised and filled by dot-product loops.
        case naive
        /// Scores materialised, both products through OpenBLAS sgemm (what a framework does).
        case blas
        /// Tiled with an online softmax, no T × T matrix.
        case flash
    }

    /// The instruction sets the tiled kernels (blocked matmul, attention) are written for, widest
    /// last. A kernel given one runs the widest form the CPU has up to it, so tests can run every
    /// form this CPU can.
    package enum InstructionSet: CaseIterable, Sendable {
        case portable, avx2, avx512

        var level: loupe_isa {
            switch self {
            case .portable: LOUPE_ISA_PORTABLE
            case .avx2: LOUPE_ISA_AVX2
            case .avx512: LOUPE_ISA_AVX512
            }
        }
    }

    /// Single-head attention of T × d `q`, `k`, `v` into `o`; `.flash` in the widest form up to
    /// `widest` that the CPU has.
    package static func attention(
        _ method: AttentionMethod, q: UnsafePointer<Float>, k: UnsafePointer<Float>, v: UnsafePointer<Float>,
        o: UnsafeMutablePointer<Float>, length t: Int, headSize d: Int, widest: InstructionSet = .avx512
    ) {
        switch method {
        case .naive:
            precondition(loupe_attention_naive(t, d, q, k, v, o) == 0, "out of memory for the scores")
        case .flash:
            precondition(
                loupe_attention_flash_isa(t, d, q, k, v, o, widest.level) == 0, "out of memory for the tiles")
        case .blas:
            let scores = UnsafeMutablePointer<Float>.allocate(capacity: t * t)
            defer { scores.deallocate() }
            BLAS.sgemm(
                m: t, n: t, k: d, a: q, lda: d, b: k, ldb: d, transposeB: true, c: scores, ldc: t,
                alpha: 1 / Float(d).squareRoot())
            loupe_softmax_online(scores, scores, t, t)
            BLAS.sgemm(m: t, n: d, k: t, a: scores, lda: t, b: v, ldb: d, c: o, ldc: d)
        }
    }

    /// The extra memory one head of `method` allocates (beyond Q, K, V and O).
    package static func attentionScratchBytes(_ method: AttentionMethod, length t: Int, headSize d: Int) -> Int {
        switch method {
        case .naive: return loupe_attention_naive_scratch(t)
        case .blas: return t * t * MemoryLayout<Float>.size
        case .flash: return loupe_attention_flash_scratch(t, d)
        }
    }

    /// `quant(a) · quant(w)ᵀ + bias` as dynamic quantisation runs a Linear layer: `a`'s rows
    /// (m × k) quantised per row on every call, then the int8 kernel (the widest form the CPU
    /// has: AMX, AVX-512 VNNI, AVX2) against the layer's packed weight; rows split across threads.
    package static func matmulInt8Dynamic(
        _ a: UnsafePointer<Float>, layer: QuantizedLinear, _ c: UnsafeMutablePointer<Float>, m: Int, threads: Int = 1
    ) {
        splitRows(m, threads: threads, granularity: 12) { start, count in
            layer.apply(rows: count, input: a + start * layer.inputs, output: c + start * layer.outputs)
        }
    }

    /// a · b over `count` floats (AVX2 with several accumulators: a Swift loop summing into one
    /// Float is not vectorised, the additions being ordered).
    package static func dot(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, count: Int) -> Float {
        loupe_dot_f32(a, b, count)
    }

    /// Runs `body(start, count)` over `total` items split in `threads` contiguous chunks (each a
    /// multiple of `granularity` but the last), on the persistent worker pool
    /// (`loupe_workers_run`, `Sources/CKernels/workers.c`): a decode step runs ~150 of these, too
    /// short for a Dispatch wake-up each. When the pool is busy (another thread's region, or a
    /// chunk splitting again) the chunks go to `concurrentPerform` instead. The chunks are the same
    /// either way, so the results are too.
    package static func splitRows(_ total: Int, threads: Int, granularity: Int, _ body: (Int, Int) -> Void) {
        let workers = max(1, min(threads, total / max(1, granularity)))
        guard workers > 1 else {
            body(0, total)
            return
        }
        let chunk = ((total + workers - 1) / workers + granularity - 1) / granularity * granularity
        withoutActuallyEscaping(body) { body in
            // Safe: the workers write disjoint row ranges of buffers the caller keeps alive until
            // the region returns.
            var region = SplitRegion(body: body, total: total, chunk: chunk)
            let pooled = withUnsafeMutablePointer(to: &region) { pointer in
                loupe_workers_run(
                    workers,
                    { context, worker in
                        context!.assumingMemoryBound(to: SplitRegion.self).pointee.run(worker)
                    }, pointer) == 0
            }
            guard !pooled else { return }
            let shared = UncheckedSendable(region)
            DispatchQueue.concurrentPerform(iterations: workers) { worker in shared.value.run(worker) }
        }
    }
}

/// One `splitRows` call: what share `worker` runs.
private struct SplitRegion {
    let body: (Int, Int) -> Void
    let total: Int
    let chunk: Int

    func run(_ worker: Int) {
        let start = worker * chunk
        let count = min(chunk, total - start)
        if count > 0 { body(start, count) }
    }
}
