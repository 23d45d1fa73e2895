/// NVIDIA data-centre GPUs' published peaks (dense, no sparsity), for placing imported kernels
/// when the export carries no `peak_sustained` metrics. Figures from the datasheets (research
/// notes C.8): TFLOP/s and TB/s.
package struct GPUDatasheet: Hashable, Sendable {
    package var name: String
    /// Compute peaks by precision, GFLOP/s. Tensor-core precisions are named `TF32 tensor` and so on.
    package var compute: [(precision: String, name: String, gflops: Double)]
    /// HBM bandwidth, GB/s.
    package var memoryGigabytesPerSecond: Double
    package var memoryName: String
    package var source: String

    package static func == (lhs: GPUDatasheet, rhs: GPUDatasheet) -> Bool { lhs.name == rhs.name }
    package func hash(into hasher: inout Hasher) { hasher.combine(name) }

    private static let hopperSource = "NVIDIA H100 Tensor Core GPU datasheet (dense figures; sparse are 2×)"
    private static let ampereSource = "NVIDIA A100 Tensor Core GPU datasheet (dense figures; sparse are 2×)"

    private static func gpu(
        _ name: String, fp64: Double, fp64Tensor: Double, fp32: Double, tf32: Double,
        bf16: Double, fp8: Double, memory: String, terabytes: Double, source: String
    ) -> GPUDatasheet {
        GPUDatasheet(
            name: name,
            compute: [
                ("FP64", "FP64", fp64 * 1000), ("FP64", "FP64 tensor", fp64Tensor * 1000),
                ("FP32", "FP32", fp32 * 1000),
                ("TF32", "TF32 tensor", tf32 * 1000), ("BF16", "BF16 tensor", bf16 * 1000),
            ] + (fp8 > 0 ? [("FP8", "FP8 tensor", fp8 * 1000)] : []),
            memoryGigabytesPerSecond: terabytes * 1000, memoryName: memory, source: source)
    }

    /// Every GPU in the table.
    package static let all: [GPUDatasheet] = [
        gpu(
            "A100 SXM4 80GB", fp64: 9.7, fp64Tensor: 19.5, fp32: 19.5, tf32: 156, bf16: 312, fp8: 0,
            memory: "HBM2e", terabytes: 2.039, source: ampereSource),
        gpu(
            "A100 80GB PCIe", fp64: 9.7, fp64Tensor: 19.5, fp32: 19.5, tf32: 156, bf16: 312, fp8: 0,
            memory: "HBM2e", terabytes: 1.935, source: ampereSource),
        gpu(
            "A100 40GB", fp64: 9.7, fp64Tensor: 19.5, fp32: 19.5, tf32: 156, bf16: 312, fp8: 0, memory: "HBM2",
            terabytes: 1.555, source: ampereSource),
        gpu(
            "H100 SXM5 80GB", fp64: 34, fp64Tensor: 67, fp32: 67, tf32: 494.7, bf16: 989.4, fp8: 1979,
            memory: "HBM3", terabytes: 3.35, source: hopperSource),
        gpu(
            "H100 PCIe 80GB", fp64: 26, fp64Tensor: 51, fp32: 51, tf32: 378, bf16: 756, fp8: 1513, memory: "HBM2e",
            terabytes: 2.0, source: hopperSource),
        gpu(
            "H200 SXM 141GB", fp64: 34, fp64Tensor: 67, fp32: 67, tf32: 494.7, bf16: 989.4, fp8: 1979,
            memory: "HBM3e", terabytes: 4.8, source: "NVIDIA H200 product page (dense figures; sparse are 2×)"),
    ]

    /// The entry for a name as given by a user (`h100-pcie`, `A100 80GB`) or by ncu's
    /// `device__attribute_display_name` (`NVIDIA H100 80GB HBM3`, `NVIDIA A100-SXM4-40GB`).
    package static func matching(_ text: String) -> GPUDatasheet? {
        let name = String(text.lowercased().map { $0 == "-" || $0 == "_" ? " " : $0 })
        func entry(_ prefix: String) -> GPUDatasheet? { all.first { $0.name.hasPrefix(prefix) } }
        if name.contains("h200") { return entry("H200") }
        if name.contains("h100") { return name.contains("pcie") ? entry("H100 PCIe") : entry("H100 SXM5") }
        if name.contains("a100") {
            if name.contains("80gb") || name.contains("80 gb") || name.hasSuffix(" 80") {
                return name.contains("pcie") ? entry("A100 80GB PCIe") : entry("A100 SXM4 80GB")
            }
            return entry("A100 40GB")
        }
        return nil
    }
}
