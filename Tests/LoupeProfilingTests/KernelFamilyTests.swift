import LoupeProfiling
import Testing

/// Kernel families from names as real traces write them (HTA's test traces and the nsys exports
/// in Fixtures).
@Suite struct KernelFamilyTests {
    @Test(arguments: [
        ("nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NTT", KernelFamily.gemm),
        ("ampere_sgemm_32x32_sliced1x4_tn", .gemm),
        ("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>(Params)", .gemm),
        // nsys writes an anonymous namespace `<unnamed>`: the function after it names the work.
        (
            "void at::native::<unnamed>::distribution_elementwise_grid_stride_kernel<float, (int)4>(int, "
                + "at::PhiloxCudaState)", .elementwise
        ),
        ("void at::native::(anonymous namespace)::layer_norm_kernel<float>(int, float const*)", .normalization),
        ("void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<float>>(float)", .reduction),
        ("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", .communication),
        ("<unnamed>::nvfuser_none_f0_c0_r0_g0(<unnamed>::Tensor<float, (int)2, (int)2>)", .other),
    ])
    func familyFromTheFunctionsOwnName(name: String, family: KernelFamily) {
        #expect(KernelFamily(name: name, kind: .kernel) == family)
    }

    /// GEMM by its BLAS-style word (`sgemm`, `s1688gemm`, `gemmk1`), not by "gemm" anywhere:
    /// FBGEMM's kernels (`fbgemm_gpu::…`, in HTA's 2-rank trace) permute, quantize and range
    /// indices; none multiplies matrices.
    @Test(arguments: [
        (
            "void fbgemm_gpu::permute_2D_data_kernel<false, int, int, decltype(nullptr)>(int, int, int, int const*, "
                + "decltype(nullptr) const*, int const*, int const*, int const*, int*, decltype(nullptr)*)",
            .elementwise
        ),
        ("void fbgemm_gpu::permute_2D_lengths_kernel<int>(int, int, int const*, int const*, int*)", .elementwise),
        (
            "void fbgemm_gpu::(anonymous namespace)::_FP8rowwise_to_float_cuda_kernel<float>(unsigned char const*, "
                + "int, int, float*, bool)", .other
        ),
        (
            "void fbgemm_gpu::(anonymous namespace)::_get_FP8_qparam_cuda_kernel<float>(float const*, int, int, "
                + "unsigned char*, float*, bool)", .other
        ),
        ("void gemmk1_kernel<float, 256, 5, false, false, false, false>(float)", KernelFamily.gemm),
        ("void sgemm_largek_lds64<true, true, 6, 3, 4, 5, 2, 66>(float*, float const*)", .gemm),
        ("volta_fp16_s884gemm_fp16_128x128_ldg8_f2f_nn", .gemm),
        ("ampere_h16816gemm_128x128_ldg8_stages_64x3_nn", .gemm),
        ("ampere_gcgemm_64x64_nt", .gemm),
        ("void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false>(float)", .gemm),
    ])
    func gemmByItsWordNotASubstring(name: String, family: KernelFamily) {
        #expect(KernelFamily(name: name, kind: .kernel) == family)
    }

    /// On the whole 2-rank trace no `fbgemm_gpu` function is a GEMM, and every cuBLAS/CUTLASS one is.
    @Test func noFBGEMMKernelOfHTAsTraceIsAGEMM() throws {
        let loaded = try ProfileAnalysisHTATests.load("distributed-2rank", htaRounding: false)
        let kernels = ProfileAnalysis.kernels(loaded.ranks.flatMap(\.events), names: loaded.names)
        let fbgemm = kernels.filter { $0.name.hasPrefix("void fbgemm_gpu::") }
        #expect(fbgemm.count >= 6)
        #expect(fbgemm.allSatisfy { $0.family != .gemm }, "\(fbgemm.filter { $0.family == .gemm }.map(\.name))")
        let blas = kernels.filter { $0.name.hasPrefix("ampere_sgemm") || $0.name.hasPrefix("void cutlass::Kernel") }
        #expect(!blas.isEmpty && blas.allSatisfy { $0.family == .gemm })
    }
}
