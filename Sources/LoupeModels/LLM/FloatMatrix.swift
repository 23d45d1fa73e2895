import CKernels
import LoupeTensor
import Synchronization

/// A float32 weight matrix, `rows` outputs of `columns` inputs (each row one output's weights, as
/// GGUF stores them), repacked once for `loupe_f32_product` (`Sources/CKernels/f32product.c`):
/// the float path's products.
///
/// Each output is summed in one fixed order (fused multiply-adds in order within blocks of 32
/// inputs, the blocks added in order), so a row of activations gets the same bits whether it is
/// multiplied alone (a decode step) or with others (a prefill, a speculative draft's
/// verification), on every thread count and every CPU.
/// OpenBLAS, which this replaces, summed a 1-row product (sgemv) and an n-row one (sgemm) in other
/// orders, and in other orders again on other CPUs.
///
/// Thread-safety: immutable after `init`; any number of threads may multiply at once.
package final class FloatMatrix: @unchecked Sendable {
    // @unchecked: `packed` is written only in `init` and read-only afterwards; it is freed in
    // `deinit`, when no product can be running.

    package let rows: Int
    package let columns: Int
    private let packed: UnsafeMutablePointer<Float>
    private let packedCount: Int

    /// Repacks `weights`, `rows × columns` row-major.
    package init(rows: Int, columns: Int, weights: UnsafePointer<Float>) {
        precondition(rows > 0 && columns > 0, "a \(rows) × \(columns) matrix")
        self.rows = rows
        self.columns = columns
        packedCount = loupe_f32_packed_floats(rows, columns)
        let raw = UnsafeMutableRawPointer.allocate(byteCount: packedCount * 4, alignment: 64)
        packed = raw.bindMemory(to: Float.self, capacity: packedCount)
        loupe_f32_repack(rows, columns, weights, packed)
    }

    /// Repacks a `[rows, columns]` tensor.
    package convenience init(_ weight: Tensor) {
        precondition(weight.shape.count == 2, "a weight of shape \(weight.shape)")
        self.init(rows: weight.shape[0], columns: weight.shape[1], weights: weight.storage)
    }

    deinit { packed.deallocate() }

    /// Bytes a product streams through (the packed weights).
    package var weightByteCount: Int { packedCount * 4 }

    private static let chosen = Atomic<UInt32>(LOUPE_ISA_AVX512.rawValue)

    /// The widest form the products run in: the widest the CPU has unless narrowed (to compare
    /// the forms, which give the same bits).
    package static var widest: loupe_isa {
        get { loupe_isa(rawValue: chosen.load(ordering: .relaxed)) }
        set { chosen.store(newValue.rawValue, ordering: .relaxed) }
    }

    /// Y = X · Wᵀ for `tokens` rows: `x` row-major `[tokens][columns]`, `y` `[tokens][rows]`.
    ///
    /// - Parameter threads: how many threads share the outputs (in panels of 16).
    package func multiply(
        rows tokens: Int, _ x: UnsafePointer<Float>, into y: UnsafeMutablePointer<Float>, threads: Int = 1
    ) {
        guard tokens > 0 else { return }
        let (rows, columns, packed, widest) = (rows, columns, UnsafePointer(packed), Self.widest)
        CPUKernels.splitRows((rows + 15) / 16, threads: threads, granularity: 2) { start, count in
            loupe_f32_product(rows, columns, packed, tokens, x, columns, y, rows, start, start + count, widest)
        }
    }

    /// Row `row`'s weights (`columns` floats).
    package func row(_ row: Int) -> [Float] {
        precondition(row >= 0 && row < rows, "row \(row) of \(rows)")
        return [Float](unsafeUninitializedCapacity: columns) { buffer, count in
            loupe_f32_packed_row(rows, columns, packed, row, buffer.baseAddress)
            count = columns
        }
    }
}
