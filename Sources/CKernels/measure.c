#include "ckernels.h"

typedef float v8 __attribute__((vector_size(32)));

// Eight accumulator chains hide the FMA latency (4-5 cycles) behind two FMA ports.
__attribute__((target("avx2,fma"))) static float fma_peak_avx2(uint64_t iterations) {
    v8 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, a4 = {0}, a5 = {0}, a6 = {0}, a7 = {0};
    const v8 x = {1.0000001f, 1.0000001f, 1.0000001f, 1.0000001f, 1.0000001f, 1.0000001f, 1.0000001f, 1.0000001f};
    const v8 y = {1e-7f, 1e-7f, 1e-7f, 1e-7f, 1e-7f, 1e-7f, 1e-7f, 1e-7f};
    for (uint64_t i = 0; i < iterations; i++) {
        a0 = a0 * x + y; a1 = a1 * x + y; a2 = a2 * x + y; a3 = a3 * x + y;
        a4 = a4 * x + y; a5 = a5 * x + y; a6 = a6 * x + y; a7 = a7 * x + y;
        __asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5), "+x"(a6), "+x"(a7));
    }
    v8 sum = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
    float total = 0;
    for (int lane = 0; lane < 8; lane++) total += sum[lane];
    return total;
}

static float fma_peak_baseline(uint64_t iterations) {
    float a[64] = {0};
    for (uint64_t i = 0; i < iterations; i++) {
        for (int lane = 0; lane < 64; lane++) a[lane] = a[lane] * 1.0000001f + 1e-7f;
    }
    float total = 0;
    for (int lane = 0; lane < 64; lane++) total += a[lane];
    return total;
}

static int has_avx2_fma(void) {
    static int known = -1;
    if (known < 0) known = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return known;
}

float loupe_fma_peak_f32(uint64_t iterations) {
    return has_avx2_fma() ? fma_peak_avx2(iterations) : fma_peak_baseline(iterations);
}

uint64_t loupe_fma_flops_per_iteration(void) { return 8 * 8 * 2; }

__attribute__((target("avx2,fma"))) static void triad_avx2(float *a, const float *b, const float *c, float s, size_t n) {
    for (size_t i = 0; i < n; i++) a[i] = b[i] + s * c[i];
}

static void triad_baseline(float *a, const float *b, const float *c, float s, size_t n) {
    for (size_t i = 0; i < n; i++) a[i] = b[i] + s * c[i];
}

void loupe_triad_f32(float *a, const float *b, const float *c, float scalar, size_t count) {
    if (has_avx2_fma()) {
        triad_avx2(a, b, c, scalar, count);
    } else {
        triad_baseline(a, b, c, scalar, count);
    }
}
