// Elementwise kernels in C, where the compiler vectorises them better than Swift's SIMD types
// on a generic x86-64 target (see docs/ARCHITECTURE.md).
#ifndef LOUPE_CKERNELS_H
#define LOUPE_CKERNELS_H
#include <stddef.h>

/// In place: x = x/2 · (1 + erf(x/√2)), erf by Abramowitz & Stegun 7.1.26 (|error| ≤ 1.5e-7).
/// Uses AVX2 + FMA when the CPU has them (checked at run time), SSE2 otherwise.
void loupe_gelu_f32(float *values, size_t count);

#endif

#ifndef LOUPE_CKERNELS_MEASURE_H
#define LOUPE_CKERNELS_MEASURE_H
#include <stdint.h>

/// Runs `iterations` rounds of 8 independent 8-lane fused multiply-adds on registers (no memory
/// traffic) and returns a value derived from the accumulators, so the work cannot be removed.
/// FLOPs done: iterations × 8 chains × 8 lanes × 2. AVX2 + FMA when the CPU has them.
float loupe_fma_peak_f32(uint64_t iterations);

/// The FLOPs one call of `loupe_fma_peak_f32` does per iteration (128 with AVX2+FMA, else the
/// same count computed with separate multiplies and adds).
uint64_t loupe_fma_flops_per_iteration(void);

/// STREAM triad: a[i] = b[i] + scalar · c[i] for i in 0..<count (12 bytes moved per element:
/// two reads, one write).
void loupe_triad_f32(float *a, const float *b, const float *c, float scalar, size_t count);
#endif
