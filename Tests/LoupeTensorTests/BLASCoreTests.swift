import Foundation
import LoupeTensor
import Testing

/// OpenBLAS runs kernels the CPU allows, not its SSE3 fallback for a CPU it does not know (see
/// openblas_core.c), and they multiply correctly once chosen again.
@Suite struct BLASCoreTests {
    /// The first CPU's `name` line in /proc/cpuinfo, after its colon; nil where there is none.
    private func cpuinfo(_ name: String) -> String? {
        let info = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        return info.split(separator: "\n").first { $0.hasPrefix(name) }.flatMap {
            $0.split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces)
        }
    }

    private var cpuFlags: Set<Substring> { Set((cpuinfo("flags") ?? "").split(separator: " ")) }

    @Test func aCPUWithAVX2RunsMoreThanTheSSE3Fallback() throws {
        let flags = cpuFlags
        try #require(!flags.isEmpty, "no flags line in /proc/cpuinfo")
        let core = BLAS.core
        if flags.contains("avx2") && flags.contains("fma") {
            #expect(!core.hasPrefix("Prescott"), "OpenBLAS runs \(core) on a CPU with AVX2 and FMA")
        }
        if core.contains("OpenBLAS chose") {
            // The variable that made OpenBLAS choose again is not left for child processes.
            let environment = ProcessInfo.processInfo.environment
            #expect(environment["OPENBLAS_CORETYPE"] == nil)
        }
    }

    /// On Zen 4 (AMD family 25 with AVX-512) OpenBLAS runs its Zen kernels, not the 512-bit ones
    /// it picks there (openblas_core.c), unless the user chose a core.
    @Test func zen4RunsOpenBLASsZenKernels() throws {
        try #require(cpuinfo("flags") != nil, "no flags line in /proc/cpuinfo")
        let zen4 =
            cpuinfo("vendor_id") == "AuthenticAMD" && cpuinfo("cpu family") == "25" && cpuFlags.contains("avx512f")
        guard zen4, ProcessInfo.processInfo.environment["OPENBLAS_CORETYPE"] == nil else {
            #expect(
                !BLAS.core.contains("(OpenBLAS chose Cooperlake)") && !BLAS.core.contains("(OpenBLAS chose SkylakeX)"))
            return
        }
        #expect(
            BLAS.core == "Zen (OpenBLAS chose Cooperlake)" || BLAS.core == "Zen (OpenBLAS chose SkylakeX)",
            "\(BLAS.core)")
    }

    /// 97 × 61 × 300 (odd sizes, K past a block), threads as OpenBLAS has them, against Doubles.
    @Test func theChosenKernelsMultiplyCorrectly() {
        let (m, n, k) = (97, 61, 300)
        let a = (0..<(m * k)).map { Float(($0 * 7919) % 2003) / 1001 - 1 }
        let b = (0..<(k * n)).map { Float(($0 * 104_729) % 1999) / 999 - 1 }
        var c = [Float](repeating: .nan, count: m * n)
        BLAS.sgemm(m: m, n: n, k: k, a: a, lda: k, b: b, ldb: n, c: &c, ldc: n)
        var worst = 0.0
        for i in 0..<m {
            for j in 0..<n {
                var sum = 0.0
                for p in 0..<k { sum += Double(a[i * k + p]) * Double(b[p * n + j]) }
                let difference = abs(Double(c[i * n + j]) - sum)
                worst = difference.isNaN ? .infinity : max(worst, difference)
            }
        }
        #expect(worst < 1e-3, "largest difference \(worst)")
    }
}
