import CKernels
import Foundation
import LoupeTensor
import Synchronization

/// The forms the quantized products (`QuantizedMatrix`) run in, and the process's choice of one.
///
/// Every form stores the same bits (each output row's blocks are accumulated in the same order with
/// the same fused multiply-adds), so the choice changes speed only.
package enum QuantizedKernels {
    /// The forms, narrowest first.
    package enum Form: Int, Sendable, CaseIterable, CustomStringConvertible {
        /// Plain C loops: the reference the others are compared with bit for bit.
        case portable = 0
        /// 256-bit vpmaddubsw + vpmaddwd (u8 × s8 products in int16, then int32).
        case avx2 = 1
        /// 256-bit vpdpbusd (VEX-encoded AVX-VNNI).
        case avxVNNI = 2
        /// 512-bit vpdpbusd: one vector holds one block column of 16 weight rows.
        case avx512VNNI = 3

        package var description: String {
            switch self {
            case .portable: "portable"
            case .avx2: "AVX2"
            case .avxVNNI: "AVX-VNNI"
            case .avx512VNNI: "AVX-512 VNNI"
            }
        }

        /// This form, or the widest narrower one the CPU has.
        package var usable: Form {
            Form(rawValue: Int(loupe_quant_usable_form(loupe_quant_form(UInt32(rawValue))).rawValue)) ?? .portable
        }
    }

    private static let chosen = Atomic<Int>(Form.avx512VNNI.rawValue)

    /// The widest form the products run in: the widest the CPU has unless narrowed (to compare the
    /// forms, or to force the portable loop). Setting a form the CPU lacks selects the widest
    /// narrower one it has.
    package static var form: Form {
        get { Form(rawValue: chosen.load(ordering: .relaxed))?.usable ?? .portable }
        set { chosen.store(newValue.rawValue, ordering: .relaxed) }
    }
}

/// A GGUF weight matrix (Q4_1 or Q8_0) repacked for the integer products, `rows` outputs of
/// `columns` inputs (GGUF's `[ne0 = columns, ne1 = rows]`).
///
/// Activations are quantized per block of 32 to 8 bits (llama.cpp's Q8_1 with fp32 scales) when a
/// product runs; each output is then Σ over blocks of d_w · d_x · Σ q_w q_x (+ m_w · s_x for
/// Q4_1), in int32 where it can be. The weights' bytes are copied once, rearranged 16 rows to a
/// group (see `Sources/CKernels/quant.c`): the same size as the file's.
///
/// Thread-safety: immutable after `init`; any number of threads may multiply at once.
package final class QuantizedMatrix: @unchecked Sendable {
    // @unchecked: `packed` is written only in `init` and read-only afterwards; it is freed in
    // `deinit`, when no product can be running.

    /// The weight types the products read.
    package enum WeightType: Sendable {
        // ggml's names, as GGMLType spells them.
        // swift-format-ignore: AlwaysUseLowerCamelCase
        case q4_1, q8_0

        var kernelType: loupe_quant_type { self == .q4_1 ? LOUPE_QUANT_Q4_1 : LOUPE_QUANT_Q8_0 }
        /// Bytes of one GGUF block of 32 weights.
        package var bytesPerBlock: Int { self == .q4_1 ? 20 : 34 }
    }

    package let type: WeightType
    /// Outputs: the length of `y`.
    package let rows: Int
    /// Inputs: the length of `x` (a multiple of 32).
    package let columns: Int
    private let packed: UnsafeMutableRawPointer
    private let packedByteCount: Int

    /// Repacks `raw`, the tensor's bytes as GGUF stores them (`rows` rows of `columns / 32` blocks).
    ///
    /// - Parameters:
    ///   - name: the tensor's name, and `file` the model file's, for errors.
    /// - Throws: `ModelError` naming the tensor when `columns` is not a positive multiple of 32 or
    ///   `raw` is not exactly `rows · columns / 32` blocks.
    package init(
        type: WeightType, rows: Int, columns: Int, raw: UnsafeRawBufferPointer, name: String, file: String
    ) throws(ModelError) {
        guard rows > 0, columns > 0, columns % 32 == 0 else {
            throw ModelError(
                file: file, tensor: name,
                message: "\(rows) × \(columns) cannot be multiplied: needs columns in blocks of 32")
        }
        let (blocks, overflow) = rows.multipliedReportingOverflow(by: columns / 32 * type.bytesPerBlock)
        guard !overflow, raw.count == blocks, let base = raw.baseAddress else {
            throw ModelError(
                file: file, tensor: name,
                message: "\(raw.count) bytes for \(rows) rows of \(columns / 32) blocks of \(type.bytesPerBlock) bytes"
            )
        }
        self.type = type
        self.rows = rows
        self.columns = columns
        packedByteCount = loupe_quant_packed_bytes(type.kernelType, rows, columns)
        packed = UnsafeMutableRawPointer.allocate(byteCount: packedByteCount, alignment: 64)
        loupe_quant_repack(
            type.kernelType, rows, columns, base.assumingMemoryBound(to: UInt8.self),
            packed.assumingMemoryBound(to: UInt8.self))
    }

    deinit { packed.deallocate() }

    /// Bytes a product streams through (the repacked weights, as many as the file's blocks plus
    /// the zero rows that fill the last group of 16).
    package var weightByteCount: Int { packedByteCount }

    /// Row `row` of the matrix as floats, the bits the file's block gives (Q8_0 q · d, Q4_1
    /// q · d + m, as `GGMLDequantization` computes them): what a tied head's copy serves as the
    /// token embedding, so the file's pages need not stay resident for it.
    package func dequantizeRow(_ row: Int, into destination: UnsafeMutablePointer<Float>) {
        precondition(row >= 0 && row < rows, "row \(row) of a matrix of \(rows)")
        loupe_quant_dequantize_row(
            type.kernelType, rows, columns, packed.assumingMemoryBound(to: UInt8.self), row, destination)
    }

    /// y = W · x for one activation row (decode): `x` holds `columns` floats, `y` gets `rows`.
    ///
    /// - Parameter threads: how many threads share the rows (in groups of 16).
    package func multiply(_ x: UnsafePointer<Float>, into y: UnsafeMutablePointer<Float>, threads: Int = 1) {
        multiply(rows: 1, x, into: y, threads: threads)
    }

    /// Y = X · Wᵀ for `rows` activation rows (prefill): `x` row-major `[rows][columns]`, `y`
    /// row-major `[rows][self.rows]`. Each weight vector, once unpacked, serves four tokens.
    package func multiply(
        rows tokens: Int, _ x: UnsafePointer<Float>, into y: UnsafeMutablePointer<Float>, threads: Int = 1
    ) {
        let activations = QuantizedActivations(rows: tokens, columns: columns, x)
        multiply(activations, into: y, threads: threads)
    }

    /// `multiply(rows:_:into:threads:)` for activations already quantized (one quantization for
    /// the several matrices that read the same input: Q, K and V; gate and up).
    package func multiply(_ x: QuantizedActivations, into y: UnsafeMutablePointer<Float>, threads: Int = 1) {
        precondition(x.columns == columns, "activations of \(x.columns) columns for a matrix of \(columns)")
        let groups = (rows + 15) / 16
        let form = loupe_quant_form(UInt32(QuantizedKernels.form.rawValue))
        let (type, rows, columns, tokens) = (type.kernelType, rows, columns, x.rows)
        let weights = UnsafePointer(packed.assumingMemoryBound(to: UInt8.self))
        x.blocks.withUnsafeBufferPointer { blocks in
            CPUKernels.splitRows(groups, threads: threads, granularity: 1) { start, count in
                loupe_quant_product(
                    type, rows, columns, weights, tokens, blocks.baseAddress, y, rows, start, start + count, form)
            }
        }
    }
}

extension QuantizedMatrix {
    /// `Y = X · [W₀; W₁; …]ᵀ` for matrices of the same width that read the same activations (Q, K
    /// and V; gate and up): each row of `y` holds every part's outputs side by side (`[x.rows][Σ
    /// rows]`). One split across threads covers all the parts' row groups, and each part writes
    /// its columns of `y` in place: one dispatch and no copy, where a product per part would
    /// dispatch and copy once each. The same bits as the parts multiplied one by one.
    package static func multiply(
        _ parts: [QuantizedMatrix], _ x: QuantizedActivations, into y: UnsafeMutablePointer<Float>, threads: Int = 1
    ) {
        precondition(parts.allSatisfy { $0.columns == x.columns }, "parts of another width than the activations")
        let total = parts.reduce(0) { $0 + $1.rows }
        let groups = parts.reduce(0) { $0 + ($1.rows + 15) / 16 }
        let form = loupe_quant_form(UInt32(QuantizedKernels.form.rawValue))
        let (tokens, columns) = (x.rows, x.columns)
        x.blocks.withUnsafeBufferPointer { blocks in
            CPUKernels.splitRows(groups, threads: threads, granularity: 1) { start, count in
                // Each part's first row group and first output column, in the order they are
                // stacked, counted here rather than kept in arrays: a decode step made 240 of them.
                var first = 0
                var column = 0
                for part in parts {
                    let partGroups = (part.rows + 15) / 16
                    let begin = max(start, first) - first
                    let end = min(start + count, first + partGroups) - first
                    if begin < end {
                        loupe_quant_product(
                            part.type.kernelType, part.rows, columns, part.packed.assumingMemoryBound(to: UInt8.self),
                            tokens, blocks.baseAddress, y + column, total, begin, end, form)
                    }
                    first += partGroups
                    column += part.rows
                }
            }
        }
    }

    /// A product's analytic work, for the Roofline panel (`OperationProfile.measure`): 2 integer
    /// operations per weight and token (judged against the INT8 roof; the per-block float scaling,
    /// a few operations per 32 multiply-adds, is left out), and the bytes it moves: the repacked
    /// weights once, the float activations read and quantized (4 + 1.5 bytes an element), the
    /// outputs written.
    package func cost(tokens: Int) -> KernelCost {
        let (t, k, n) = (Double(tokens), Double(columns), Double(rows))
        return KernelCost(
            flops: 2 * t * k * n, bytes: Double(weightByteCount) + t * k * (4 + 1.5) + 4 * t * n, precision: "INT8")
    }
}

/// Activation rows quantized to 8 bits per block of 32 (`loupe_q8_block`: d = max|x| / 127, q
/// rounded to nearest even, Σ q and d · Σ q), ready for `QuantizedMatrix.multiply`.
package struct QuantizedActivations: Sendable {
    package let rows: Int
    package let columns: Int
    private(set) var blocks: [loupe_q8_block]

    /// Quantizes `rows` rows of `columns` floats (a multiple of 32), row-major.
    package init(rows: Int, columns: Int, _ x: UnsafePointer<Float>) {
        precondition(columns % 32 == 0 && rows >= 0, "\(rows) × \(columns) activations: columns in blocks of 32")
        self.rows = rows
        self.columns = columns
        let form = loupe_quant_form(UInt32(QuantizedKernels.form.rawValue))
        blocks = [loupe_q8_block](unsafeUninitializedCapacity: rows * columns / 32) { buffer, count in
            loupe_q8_quantize_rows_form(rows, columns, x, columns, buffer.baseAddress, form)
            count = rows * columns / 32
        }
    }

    /// Quantizes new rows of the same shape into this storage: no allocation, for a decode loop
    /// that keeps one `QuantizedActivations` per input width.
    package mutating func update(_ x: UnsafePointer<Float>) {
        let (rows, columns) = (rows, columns)
        let form = loupe_quant_form(UInt32(QuantizedKernels.form.rawValue))
        blocks.withUnsafeMutableBufferPointer { buffer in
            loupe_q8_quantize_rows_form(rows, columns, x, columns, buffer.baseAddress, form)
        }
    }

    /// Block `block` of row `row`: its scale, its d · Σ q, and its 32 quantized values.
    package func block(row: Int, _ block: Int) -> (d: Float, s: Float, q: [Int8]) {
        let b = blocks[row * columns / 32 + block]
        return (b.d, b.s, withUnsafeBytes(of: b.q) { Array($0.bindMemory(to: Int8.self)) })
    }
}
