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
}
