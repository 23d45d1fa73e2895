import Dispatch
import LoupeBase
import LoupeTensor

/// The engine's kernels as benchmarks: each registered with its shape format, default shapes
/// and analytic cost, so a run places it on the roofline.
package enum KernelBench {
    /// One registered kernel.
    package struct Spec: Sendable {
        package var name: String
        package var summary: String
        /// How `--shape` is written, e.g. `MxNxK`.
        package var shapeFormat: String
        package var defaultShapes: [[Int]]
        fileprivate var make: @Sendable ([Int], Int) -> Instance

        /// Whether `shape` has the dimensions this kernel takes.
        package func accepts(_ shape: [Int]) -> Bool {
            shape.count == shapeFormat.split(separator: "x").count && shape.allSatisfy { $0 > 0 }
        }
    }

    /// One timed kernel at one shape.
    package struct Measurement: Codable, Hashable, Sendable {
        package var kernel: String
        package var shape: String
        package var threads: Int
        package var repeats: Int
        /// The best (smallest) time of the repeats.
        package var seconds: Double
        /// Operations of `precision` (FLOPs for FP32, integer operations for INT8).
        package var flops: Double
        package var bytes: Double
        /// The roof its operations are judged against: `FP32` or `INT8`.
        package var precision: String
        /// Memory the kernel allocates beyond its inputs and outputs, summed over threads.
        package var scratchBytes: Int
        /// Inputs and outputs, the data the kernel streams.
        package var workingSetBytes: Int
        /// The data its passes re-read, whose size decides the memory level its traffic comes
        /// from: the working set plus scratch, or for row kernels the rows in flight (a row's
        /// later passes read it from the level that holds the rows the threads are working on).
        package var footprintBytes: Int

        package var gflopsPerSecond: Double { flops / seconds / 1e9 }
        package var gigabytesPerSecond: Double { bytes / seconds / 1e9 }
        package var flopsPerByte: Double { bytes > 0 ? flops / bytes : 0 }
    }

    /// A kernel ready to run: its buffers, filled with deterministic random values.
    fileprivate final class Instance {
        let cost: KernelCost
        let scratchBytes: Int
        let workingSetBytes: Int
        let footprintBytes: Int
        let buffers: Buffers
        let body: (Buffers) -> Void

        init(
            cost: KernelCost, scratchBytes: Int = 0, footprintBytes: Int? = nil, buffers: Buffers,
            body: @escaping (Buffers) -> Void
        ) {
            self.cost = cost
            self.scratchBytes = scratchBytes
            self.workingSetBytes = buffers.bytes
            self.footprintBytes = footprintBytes ?? (buffers.bytes + scratchBytes)
            self.buffers = buffers
            self.body = body
        }
    }

    /// Float32 (and int8) buffers that live as long as an instance.
    fileprivate final class Buffers {
        private(set) var floats: [UnsafeMutablePointer<Float>] = []
        private(set) var bytes = 0
        var int8: UnsafeMutablePointer<Int8>?
        var int8Count = 0

        /// A buffer of `count` values, random in -1...1 (`seed`) or zero (`seed == nil`).
        @discardableResult
        func add(_ count: Int, seed: UInt64?) -> UnsafeMutablePointer<Float> {
            let pointer = UnsafeMutablePointer<Float>.allocate(capacity: count)
            if let seed {
                KernelBench.fillRandom(pointer, count: count, seed: seed)
            } else {
                pointer.initialize(repeating: 0, count: count)
            }
            floats.append(pointer)
            bytes += count * 4
            return pointer
        }

        subscript(index: Int) -> UnsafeMutablePointer<Float> { floats[index] }

        deinit {
            for pointer in floats { pointer.deallocate() }
            int8?.deallocate()
        }
    }

    /// Deterministic values in -1...1 (xorshift64).
    package static func fillRandom(_ pointer: UnsafeMutablePointer<Float>, count: Int, seed: UInt64) {
        var state = seed | 1
        for index in 0..<count {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            pointer[index] = Float(Int32(truncatingIfNeeded: state >> 32)) / Float(Int32.max)
        }
    }

    /// Every kernel, in the order a run reports them.
    package static let all: [Spec] = [
        Spec(
            name: "sgemm-openblas", summary: "C = A·B through OpenBLAS cblas_sgemm", shapeFormat: "MxNxK",
            defaultShapes: [[2048, 2048, 2048], [1024, 1024, 1024]]
        ) { shape, threads in
            let (m, n, k) = (shape[0], shape[1], shape[2])
            let buffers = Buffers()
            buffers.add(m * k, seed: 1)
            buffers.add(k * n, seed: 2)
            buffers.add(m * n, seed: nil)
            return Instance(cost: .matmul(m: m, n: n, k: k), buffers: buffers) { b in
                BLAS.threads = threads
                BLAS.sgemm(m: m, n: n, k: k, a: b[0], lda: k, b: b[1], ldb: n, c: b[2], ldc: n)
            }
        },
        Spec(
            name: "matmul-blocked", summary: "C = A·B, ours: cache-blocked, 12×32 AVX-512 or 6×16 AVX2 register tile",
            shapeFormat: "MxNxK", defaultShapes: [[1024, 1024, 1024]]
        ) { shape, threads in
            matmul(shape, threads: threads) { a, b, c, m, n, k in
                CPUKernels.matmulBlocked(a, b, c, m: m, n: n, k: k, threads: threads)
            }
        },
        Spec(
            name: "matmul-naive", summary: "C = A·B, the textbook i-j-k triple loop", shapeFormat: "MxNxK",
            defaultShapes: [[1024, 1024, 1024]]
        ) { shape, threads in
            matmul(shape, threads: threads) { a, b, c, m, n, k in
                CPUKernels.matmulNaive(a, b, c, m: m, n: n, k: k, threads: threads)
            }
        },
        Spec(
            name: "matmul-int8", summary: "C = A·dequant(W)ᵀ, int8 weights with a scale per output channel",
            shapeFormat: "MxNxK", defaultShapes: [[1024, 1024, 1024]]
        ) { shape, threads in
            let (m, n, k) = (shape[0], shape[1], shape[2])
            let buffers = Buffers()
            buffers.add(m * k, seed: 1)
            let weight = buffers.add(n * k, seed: 2)
            buffers.add(m * n, seed: nil)
            let scales = buffers.add(n, seed: nil)
            let quantized = UnsafeMutablePointer<Int8>.allocate(capacity: n * k)
            buffers.int8 = quantized
            let (values, rowScales) = CPUKernels.quantizeRows(
                Array(UnsafeBufferPointer(start: weight, count: n * k)), rows: n, columns: k)
            for index in values.indices { quantized[index] = values[index] }
            for index in rowScales.indices { scales[index] = rowScales[index] }
            return Instance(cost: .matmulInt8(m: m, n: n, k: k), buffers: buffers) { b in
                CPUKernels.matmulInt8(b[0], weight: b.int8!, scales: b[3], b[2], m: m, n: n, k: k, threads: threads)
            }
        },
        Spec(
            name: "matmul-int8-dynamic",
            summary: "C = quant(A)·quant(W)ᵀ: A quantised per row each call, int8 weights per channel, int32 sums",
            shapeFormat: "MxNxK", defaultShapes: [[1024, 1024, 1024]]
        ) { shape, threads in
            let (m, n, k) = (shape[0], shape[1], shape[2])
            let buffers = Buffers()
            buffers.add(m * k, seed: 1)
            let weight = buffers.add(n * k, seed: 2)
            buffers.add(m * n, seed: nil)
            let layer = QuantizedLinear(
                weight: Tensor(shape: [n, k], storage: Array(UnsafeBufferPointer(start: weight, count: n * k))),
                bias: nil)
            return Instance(cost: .int8Linear(m: m, n: n, k: k), buffers: buffers) { b in
                CPUKernels.matmulInt8Dynamic(b[0], layer: layer, b[2], m: m, threads: threads)
            }
        },
        softmax(online: false),
        softmax(online: true),
        Spec(
            name: "layernorm", summary: "Layer normalisation of each row (one pass for the moments, one to write)",
            shapeFormat: "ROWSxCOLUMNS", defaultShapes: [[384, 4096], [16384, 4096]]
        ) { shape, threads in
            let (rows, columns) = (shape[0], shape[1])
            let buffers = Buffers()
            buffers.add(rows * columns, seed: 5)
            buffers.add(rows * columns, seed: nil)
            buffers.add(columns, seed: 6)
            buffers.add(columns, seed: 7)
            return Instance(cost: .layerNorm(rows: rows, columns: columns), buffers: buffers) { b in
                CPUKernels.layerNorm(
                    b[0], b[1], gamma: b[2], beta: b[3], rows: rows, columns: columns, epsilon: 1e-12, threads: threads)
            }
        },
        Spec(
            name: "gelu", summary: "GELU (erf form) in place", shapeFormat: "COUNT",
            defaultShapes: [[4_194_304], [67_108_864]]
        ) { shape, threads in
            let buffers = Buffers()
            buffers.add(shape[0], seed: 8)
            return Instance(cost: .gelu(count: shape[0]), buffers: buffers) { b in
                CPUKernels.gelu(b[0], count: shape[0], threads: threads)
            }
        },
        attention(.naive, summary: "Attention, T×T scores materialised, dot-product loops"),
        attention(.blas, summary: "Attention, T×T scores materialised, both products by OpenBLAS"),
        attention(.flash, summary: "Attention, flash-style tiles with an online softmax (no T×T matrix)"),
    ]

    /// The kernel named `name`.
    package static func spec(named name: String) -> Spec? { all.first { $0.name == name } }

    private static func matmul(
        _ shape: [Int], threads: Int,
        _ body:
            @escaping (UnsafePointer<Float>, UnsafePointer<Float>, UnsafeMutablePointer<Float>, Int, Int, Int) ->
            Void
    ) -> Instance {
        let (m, n, k) = (shape[0], shape[1], shape[2])
        let buffers = Buffers()
        buffers.add(m * k, seed: 1)
        buffers.add(k * n, seed: 2)
        buffers.add(m * n, seed: nil)
        return Instance(cost: .matmul(m: m, n: n, k: k), buffers: buffers) { b in body(b[0], b[1], b[2], m, n, k) }
    }

    private static func softmax(online: Bool) -> Spec {
        Spec(
            name: online ? "softmax-online" : "softmax-three-pass",
            summary: online
                ? "Row softmax, online: max and sum in one pass, then write"
                : "Row softmax, three passes: max, exp and sum, scale",
            // Rows longer than L2 (1 MiB: the passes stream from L3) and longer than L3 (128 MiB,
            // 4× L3: every pass goes to DRAM), where online's saved pass matters.
            shapeFormat: "ROWSxCOLUMNS", defaultShapes: [[8, 262_144], [4, 33_554_432]]
        ) { shape, threads in
            let (rows, columns) = (shape[0], shape[1])
            let buffers = Buffers()
            buffers.add(rows * columns, seed: 3)
            buffers.add(rows * columns, seed: nil)
            // Each thread works on one row (input and output) at a time.
            let inFlight = min(rows, threads) * columns * 8
            return Instance(
                cost: .softmax(rows: rows, columns: columns, online: online), footprintBytes: inFlight, buffers: buffers
            ) { b in
                CPUKernels.softmax(b[0], b[1], rows: rows, columns: columns, online: online, threads: threads)
            }
        }
    }

    /// One head per thread, each T × d.
    private static func attention(_ method: CPUKernels.AttentionMethod, summary: String) -> Spec {
        Spec(
            name: "attention-\(method.rawValue)", summary: summary + "; one head per thread", shapeFormat: "TxD",
            defaultShapes: [[2048, 64]]
        ) { shape, threads in
            let (t, d) = (shape[0], shape[1])
            let buffers = Buffers()
            for head in 0..<threads {
                for part in 0..<3 { buffers.add(t * d, seed: UInt64(10 + 3 * head + part)) }
                buffers.add(t * d, seed: nil)
            }
            let one = KernelCost.attention(
                length: t, headSize: d, materialisedPasses: method == .flash ? nil : (method == .naive ? 7 : 3))
            return Instance(
                cost: KernelCost(flops: one.flops * Double(threads), bytes: one.bytes * Double(threads)),
                scratchBytes: CPUKernels.attentionScratchBytes(method, length: t, headSize: d) * threads,
                buffers: buffers
            ) { b in
                // Safe: each head's worker touches only its own Q, K, V and O.
                let heads = UncheckedSendable(b.floats)
                if method == .blas { BLAS.threads = 1 }
                DispatchQueue.concurrentPerform(iterations: threads) { head in
                    let base = 4 * head
                    CPUKernels.attention(
                        method, q: heads.value[base], k: heads.value[base + 1], v: heads.value[base + 2],
                        o: heads.value[base + 3], length: t, headSize: d)
                }
            }
        }
    }

    /// Runs `spec` at `shape` on `threads` threads: one warm-up, then repeats until `seconds`
    /// have passed (at least two, unless one takes longer than `seconds`), keeping the best.
    package static func measure(_ spec: Spec, shape: [Int], threads: Int, seconds: Double = 0.5) -> Measurement {
        let instance = spec.make(shape, threads)
        let saved = BLAS.threads
        defer { BLAS.threads = saved }
        let warmUp = Stopwatch.seconds { instance.body(instance.buffers) }
        var best = warmUp
        var repeats = 0
        var spent = 0.0
        if warmUp < seconds {
            while repeats < 2 || (spent < seconds && repeats < 50) {
                let elapsed = Stopwatch.seconds { instance.body(instance.buffers) }
                best = min(best, elapsed)
                spent += elapsed
                repeats += 1
            }
        } else {
            repeats = 1
        }
        return Measurement(
            kernel: spec.name, shape: shape.map(String.init).joined(separator: "x"), threads: threads,
            repeats: repeats, seconds: best, flops: instance.cost.flops, bytes: instance.cost.bytes,
            precision: instance.cost.precision, scratchBytes: instance.scratchBytes,
            workingSetBytes: instance.workingSetBytes,
            footprintBytes: instance.footprintBytes)
    }

    /// The largest |difference| between two attention methods' outputs on the same random head.
    package static func attentionDifference(
        _ first: CPUKernels.AttentionMethod, _ second: CPUKernels.AttentionMethod, length t: Int, headSize d: Int
    ) -> Float {
        var inputs = [[Float]](repeating: [Float](repeating: 0, count: t * d), count: 3)
        for index in 0..<3 {
            inputs[index].withUnsafeMutableBufferPointer {
                fillRandom($0.baseAddress!, count: t * d, seed: 40 + UInt64(index))
            }
        }
        func output(_ method: CPUKernels.AttentionMethod) -> [Float] {
            var o = [Float](repeating: 0, count: t * d)
            o.withUnsafeMutableBufferPointer { out in
                CPUKernels.attention(
                    method, q: inputs[0], k: inputs[1], v: inputs[2], o: out.baseAddress!, length: t, headSize: d)
            }
            return o
        }
        let a = output(first)
        let b = output(second)
        return zip(a, b).reduce(0) { max($0, abs($1.0 - $1.1)) }
    }

    /// The int8 matmul's relative error ‖C_int8 − C_fp32‖ / ‖C_fp32‖ (Frobenius) on random data,
    /// the fp32 result from OpenBLAS.
    package static func int8RelativeError(m: Int, n: Int, k: Int) -> Double {
        var a = [Float](repeating: 0, count: m * k)
        var w = [Float](repeating: 0, count: n * k)
        a.withUnsafeMutableBufferPointer { fillRandom($0.baseAddress!, count: m * k, seed: 1) }
        w.withUnsafeMutableBufferPointer { fillRandom($0.baseAddress!, count: n * k, seed: 2) }
        let (values, scales) = CPUKernels.quantizeRows(w, rows: n, columns: k)
        var exact = [Float](repeating: 0, count: m * n)
        var quantized = [Float](repeating: 0, count: m * n)
        exact.withUnsafeMutableBufferPointer { c in
            BLAS.sgemm(m: m, n: n, k: k, a: a, lda: k, b: w, ldb: k, transposeB: true, c: c.baseAddress!, ldc: n)
        }
        quantized.withUnsafeMutableBufferPointer { c in
            CPUKernels.matmulInt8(a, weight: values, scales: scales, c.baseAddress!, m: m, n: n, k: k)
        }
        var error = 0.0
        var norm = 0.0
        for (x, y) in zip(exact, quantized) {
            error += Double(x - y) * Double(x - y)
            norm += Double(x) * Double(x)
        }
        return (error / max(norm, .leastNormalMagnitude)).squareRoot()
    }
}
