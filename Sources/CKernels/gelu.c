#include "ckernels.h"
#include "internal.h"
#include <stdint.h>
#include <string.h>

// One element, written as plain arithmetic (no libm calls, no branches) so that the loops
// below vectorise: exp by range reduction and a degree-6 polynomial, 2^n from the exponent
// bits, |x| and the sign restored through the sign bit.
static inline float gelu_one(float x) {
    float z = x * 0.70710678f;
    uint32_t bits;
    memcpy(&bits, &z, sizeof bits);
    uint32_t sign = bits & 0x80000000u;
    uint32_t magnitude_bits = bits & 0x7FFFFFFFu;
    float a;
    memcpy(&a, &magnitude_bits, sizeof a);
    float t = 1.0f / (1.0f + 0.3275911f * a);
    float polynomial = ((((1.061405429f * t - 1.453152027f) * t + 1.421413741f) * t - 0.284496736f) * t + 0.254829592f) * t;
    // e^(-a²), with -a² clamped to the range where the result is representable.
    float e = -(a * a);
    e = e < -87.3f ? -87.3f : e;
    float shifted = e * 1.44269504f + 12582912.0f;
    float n = shifted - 12582912.0f;
    float r = e - n * 0.69314575f - n * 1.4286068e-6f;
    float p = ((((((1.0f / 720) * r + 1.0f / 120) * r + 1.0f / 24) * r + 1.0f / 6) * r + 0.5f) * r + 1.0f) * r + 1.0f;
    int32_t shifted_bits;
    memcpy(&shifted_bits, &shifted, sizeof shifted_bits);
    int32_t exponent = ((shifted_bits - 0x4B400000) + 127) << 23;
    float scale;
    memcpy(&scale, &exponent, sizeof scale);
    float y = 1.0f - polynomial * (p * scale);
    uint32_t y_bits;
    memcpy(&y_bits, &y, sizeof y_bits);
    y_bits |= sign;
    float erf_value;
    memcpy(&erf_value, &y_bits, sizeof erf_value);
    return 0.5f * x * (1.0f + erf_value);
}

LOUPE_AVX2 static void gelu_avx2(float *values, size_t count) {
    for (size_t i = 0; i < count; i++) values[i] = gelu_one(values[i]);
}

// The same loop on 16 lanes where the CPU has AVX-512.
LOUPE_AVX512 static void gelu_avx512(float *values, size_t count) {
    for (size_t i = 0; i < count; i++) values[i] = gelu_one(values[i]);
}

static void gelu_baseline(float *values, size_t count) {
    for (size_t i = 0; i < count; i++) values[i] = gelu_one(values[i]);
}

void loupe_gelu_f32(float *values, size_t count) {
    switch (loupe_usable_isa(LOUPE_ISA_AVX512)) {
    case LOUPE_ISA_AVX512: gelu_avx512(values, count); break;
    case LOUPE_ISA_AVX2: gelu_avx2(values, count); break;
    case LOUPE_ISA_PORTABLE: gelu_baseline(values, count); break;
    }
}
