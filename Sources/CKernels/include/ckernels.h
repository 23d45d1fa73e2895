// Elementwise kernels in C, where the compiler vectorises them better than Swift's SIMD types
// on a generic x86-64 target (see docs/ARCHITECTURE.md).
#ifndef LOUPE_CKERNELS_H
#define LOUPE_CKERNELS_H
#include <stddef.h>

/// In place: x = x/2 · (1 + erf(x/√2)), erf by Abramowitz & Stegun 7.1.26 (|error| ≤ 1.5e-7).
/// Uses AVX2 + FMA when the CPU has them (checked at run time), SSE2 otherwise.
void loupe_gelu_f32(float *values, size_t count);

#endif
