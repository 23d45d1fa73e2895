import CKernels
import COpenBLAS

/// Matrix multiplication through OpenBLAS.
package enum BLAS {
    /// OpenBLAS's worker-thread count (process-wide).
    package static var threads: Int {
        get { Int(openblas_get_num_threads()) }
        set { openblas_set_num_threads(Int32(newValue)) }
    }

    /// The kernels OpenBLAS runs ("SkylakeX", "Haswell"…), with the core it had chosen itself
    /// when Loupe replaced it: "SkylakeX (OpenBLAS chose Prescott)".
    package static var core: String {
        let name = openblas_get_corename().map { String(cString: $0) } ?? "unknown"
        guard let replaced = loupe_openblas_replaced_core() else { return name }
        return "\(name) (OpenBLAS chose \(String(cString: replaced)))"
    }

    /// `c = alpha · op(a) · op(b) + beta · c` on row-major matrices, where `op(a)` is `m × k` and
    /// `op(b)` is `k × n`. The leading dimensions are row strides, so sub-matrices (one attention
    /// head's columns, say) are passed as a base pointer and the full row length.
    package static func sgemm(
        m: Int, n: Int, k: Int,
        a: UnsafePointer<Float>, lda: Int, transposeA: Bool = false,
        b: UnsafePointer<Float>, ldb: Int, transposeB: Bool = false,
        c: UnsafeMutablePointer<Float>, ldc: Int,
        alpha: Float = 1, beta: Float = 0
    ) {
        cblas_sgemm(
            CblasRowMajor, transposeA ? CblasTrans : CblasNoTrans, transposeB ? CblasTrans : CblasNoTrans,
            Int32(m), Int32(n), Int32(k), alpha, a, Int32(lda), b, Int32(ldb), beta, c, Int32(ldc)
        )
    }

    /// `y = alpha · a · x + beta · y` for a row-major `rows × columns` matrix `a` (row stride
    /// `lda`). One pass over `a`: for a single activation row, sgemm would first copy (pack) the
    /// whole weight matrix, which doubles the memory traffic of a decode step.
    package static func sgemv(
        rows: Int, columns: Int, a: UnsafePointer<Float>, lda: Int, x: UnsafePointer<Float>,
        y: UnsafeMutablePointer<Float>, alpha: Float = 1, beta: Float = 0
    ) {
        cblas_sgemv(CblasRowMajor, CblasNoTrans, Int32(rows), Int32(columns), alpha, a, Int32(lda), x, 1, beta, y, 1)
    }
}
