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

typedef float v16 __attribute__((vector_size(64)));

// The same with 512-bit registers and twelve chains (32 registers allow it). A core with one
// 512-bit FMA unit runs it no faster than the AVX2 loop; the measurement says which it has.
__attribute__((target("avx512f"))) static float fma_peak_avx512(uint64_t iterations) {
    v16 a[12];
    v16 x, y;
    for (int lane = 0; lane < 16; lane++) {
        x[lane] = 1.0000001f;
        y[lane] = 1e-7f;
    }
    for (int chain = 0; chain < 12; chain++) a[chain] = y - y;
    for (uint64_t i = 0; i < iterations; i++) {
        a[0] = a[0] * x + y; a[1] = a[1] * x + y; a[2] = a[2] * x + y; a[3] = a[3] * x + y;
        a[4] = a[4] * x + y; a[5] = a[5] * x + y; a[6] = a[6] * x + y; a[7] = a[7] * x + y;
        a[8] = a[8] * x + y; a[9] = a[9] * x + y; a[10] = a[10] * x + y; a[11] = a[11] * x + y;
        __asm__ volatile("" : "+v"(a[0]), "+v"(a[1]), "+v"(a[2]), "+v"(a[3]), "+v"(a[4]), "+v"(a[5]));
        __asm__ volatile("" : "+v"(a[6]), "+v"(a[7]), "+v"(a[8]), "+v"(a[9]), "+v"(a[10]), "+v"(a[11]));
    }
    v16 sum = a[0];
    for (int chain = 1; chain < 12; chain++) sum += a[chain];
    float total = 0;
    for (int lane = 0; lane < 16; lane++) total += sum[lane];
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

static int has_avx512(void) {
    static int known = -1;
    if (known < 0) known = __builtin_cpu_supports("avx512f");
    return known;
}

float loupe_fma_peak_f32(uint64_t iterations) {
    if (has_avx512()) return fma_peak_avx512(iterations);
    return has_avx2_fma() ? fma_peak_avx2(iterations) : fma_peak_baseline(iterations);
}

uint64_t loupe_fma_flops_per_iteration(void) { return has_avx512() ? 12 * 16 * 2 : 8 * 8 * 2; }

const char *loupe_fma_peak_method(void) {
    if (has_avx512()) return "AVX-512 FMA, 12 chains";
    return has_avx2_fma() ? "AVX2 FMA, 8 chains" : "scalar multiply-add, 64 lanes";
}

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
