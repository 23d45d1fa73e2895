import Foundation

/// What a GPU event's time counts as in the temporal and kernel-type breakdowns, decided by
/// its name exactly as Holistic Trace Analysis (0.5) decides it, so the figures can be checked
/// against HTA's on the same files: `nccl…Kernel` is communication; a name starting `Memcpy`,
/// `Memset` or `dma` is memory; any other name holding `Memcpy` or `Sync` (a stream or event
/// sync) is other; the rest is computation (`Stream Wait Event` included).
package enum KernelType: Int, CaseIterable, Codable, Sendable, Comparable {
    case computation
    case communication
    case memory
    case other

    package init(name: String) {
        if name.hasPrefix("nccl"), name.dropFirst(4).contains("Kernel") {
            self = .communication
        } else if name.hasPrefix("Memcpy") || name.hasPrefix("Memset") || name.hasPrefix("dma") {
            self = .memory
        } else if name.contains("Memcpy") || name.contains("Sync") {
            self = .other
        } else {
            self = .computation
        }
    }

    package var label: String {
        switch self {
        case .computation: "computation"
        case .communication: "communication"
        case .memory: "memory"
        case .other: "other"
        }
    }

    package static func < (lhs: KernelType, rhs: KernelType) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A kernel's family, from its name: what an engineer asks "how much went to GEMMs, to
/// attention, to elementwise ops?" about. Patterns cover cuBLAS/cuBLASLt, CUTLASS, cuDNN,
/// Triton and PyTorch's own kernels, and their ROCm counterparts.
package enum KernelFamily: Int, CaseIterable, Codable, Sendable, Comparable {
    case gemm
    case convolution
    case attention
    case normalization
    case reduction
    case elementwise
    case communication
    case memory
    case sync
    case other

    package init(name: String, kind: ProfileEventKind) {
        switch kind {
        case .memcpy, .memset:
            self = .memory
            return
        case .sync:
            self = .sync
            return
        default: break
        }
        // The function's own name: template arguments and parameters name types from other
        // libraries (`fbgemm_gpu::` in an embedding kernel's) that say nothing of what it does.
        // An anonymous namespace as GCC (`(anonymous namespace)`) and nsys (`<unnamed>`) write it.
        var function = Substring(
            name.replacingOccurrences(of: "(anonymous namespace)", with: "").replacingOccurrences(
                of: "<unnamed>", with: ""))
        if let cut = function.firstIndex(where: { $0 == "<" || $0 == "(" }) { function = function[..<cut] }
        let lower = function.lowercased()
        func has(_ words: String...) -> Bool { words.contains { lower.contains($0) } }
        if KernelType(name: name) == .communication || has("nccl", "rccl", "allreduce", "all_reduce", "allgather") {
            self = .communication
        } else if KernelType(name: name) == .memory {
            self = .memory
        } else if has("flash", "fmha", "attention", "attn", "sdpa", "softmax_warp") {
            self = .attention
        } else if has(
            "convolution", "convolve", "conv2d", "conv3d", "_conv", "conv_", "fprop", "dgrad", "wgrad", "winograd",
            "scudnn", "hcudnn")
        {
            self = .convolution
        } else if Self.namesGEMM(lower)
            || has(
                "cutlass", "cublas", "matmul", "_mm_", "xmma", "wgmma", "hmma", "dot_kernel",
                // cuBLAS's JIT-generated Hopper GEMMs.
                "nvjet_")
        {
            self = .gemm
        } else if has("norm", "layer_norm", "batch_norm", "rms", "bn_fw", "bn_bw") {
            self = .normalization
        } else if has("reduce", "softmax", "sum_kernel", "max_kernel", "argmax", "scan", "cub::") {
            self = .reduction
        } else if has(
            "elementwise", "vectorized", "unrolled", "pointwise", "triton_poi", "copy", "fill", "cat_", "index",
            "nchwtonhwc", "nhwctonchw", "transpose", "permute")
        {
            self = .elementwise
        } else {
            self = .other
        }
    }

    /// Whether a word of the lowercased function name (split at anything but letters and
    /// digits) is a BLAS-style GEMM or GEMV name: `gemm`/`gemv` after nothing, after up to three
    /// BLAS type letters (`sgemm`, `hgemm`, `gcgemm`, `igemm`) or after a tile code ending in a
    /// digit (`s1688gemm`, `h16816gemm`), followed by anything (`gemmk1`, `gemv2t`).
    ///
    /// Not "gemm" anywhere: in `fbgemm_gpu::permute_2D_data_kernel` it names the FBGEMM library,
    /// and the kernel permutes. Holistic Trace Analysis likewise classifies by patterns anchored
    /// at a name's start (`^nccl.*Kernel`, `^Memcpy`), never by a word somewhere inside it.
    static func namesGEMM(_ lower: String) -> Bool {
        lower.split { !($0.isLetter || $0.isNumber) }.contains { word in
            guard let found = word.firstRange(of: "gemm") ?? word.firstRange(of: "gemv") else { return false }
            let before = word[..<found.lowerBound]
            return before.count <= 3 && before.allSatisfy { "sdczhbgi".contains($0) }
                || before.last.map(\.isNumber) == true
        }
    }

    package var label: String {
        switch self {
        case .gemm: "GEMM"
        case .convolution: "convolution"
        case .attention: "attention"
        case .normalization: "normalization"
        case .reduction: "reduction"
        case .elementwise: "elementwise"
        case .communication: "communication"
        case .memory: "memcpy/memset"
        case .sync: "sync"
        case .other: "other"
        }
    }

    package static func < (lhs: KernelFamily, rhs: KernelFamily) -> Bool { lhs.rawValue < rhs.rawValue }
}
