// SwiGLU's elementwise step, out = g / (1 + e^(−g)) · u, with e^x computed exactly as glibc's
// expf computes it on a CPU with FMA (`__expf_fma`, glibc 2.28 onwards: sysdeps/ieee754/flt-32/
// e_expf.c built with -mfma), so the outputs keep the bits the engine's Swift loop over
// `Foundation.exp` gave, and each of them costs a few vector operations instead of a call.
//
// Why: a decode step of SmolLM2-135M runs 30 × 1536 of these; the scalar loop (a libm call and
// a division an element) was 0.16 ms of an 8 ms step on one thread, and a serial step at two
// threads, where a decode row is too short to split.
//
// The algorithm (in double): k = round(x · 32/ln 2) by adding and taking back 1.5 · 2^52 (one
// fused multiply-add), r = x · 32/ln 2 − k (fused), s = 2^(k/32) from a 32-entry table and the
// exponent bits, e^x ≈ s · (C0 r³ + C1 r² + C2 r + 1) as fma(fma(C0, r, C1), r², fma(r, C2, 1)),
// rounded once to float. |x| ≥ 88 (and NaN, ±∞) take glibc's special cases. Every form (AVX-512,
// AVX2, portable) performs these operations, so they give the same bits; a vector holding a
// special lane runs the portable loop.
#include "ckernels.h"
#include "internal.h"
#include <math.h>
#include <string.h>

#pragma STDC FP_CONTRACT OFF

// glibc's __exp2f_data: tab[i] = bits(2^(i/32)) − (i << 47), then the scaled constants.
static const uint64_t EXP_TABLE[32] = {
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51, 0x3fef72b83c7d517b,
    0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1, 0x3fef06fe0a31b715, 0x3feef1a7373aa9cb,
    0x3feedea64c123422, 0x3feece086061892d, 0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429,
    0x3feea47eb03a5585, 0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d, 0x3feee89f995ad3ad,
    0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069, 0x3fef5818dcfba487, 0x3fef7c97337b9b5f,
    0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
};
static const double INV_LN2_N = 0x1.71547652b82fep+5;  // 32 / ln 2
static const double C0 = 0x1.c6af84b912394p-20, C1 = 0x1.ebfce50fac4f3p-13, C2 = 0x1.62e42ff0c52d6p-6;
static const double SHIFT = 0x1.8p+52;
// The top 12 bits of |x| from which glibc leaves the fast path: |x| ≥ 88, ±∞, NaN.
enum { SPECIAL_TOP = 0x42a };

static inline uint32_t top12(float x) {
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    return (bits >> 20) & 0x7ff;
}

// glibc's branches for |x| ≥ 88: 0 at −∞, x + x for ±∞ and NaN, overflow to ∞ above ln 2^128,
// underflow to 0 below ln 2^−150, 2^−149 (its "may underflow" value) down to ln 2^−149, and
// the fast path for the rest.
static float exp_special(float x, int *fast) {
    *fast = 0;
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    if (bits == 0xff800000u) return 0.0f;
    if (top12(x) >= 0x7f8) return x + x;
    if (x > 0x1.62e42ep6f) return INFINITY;
    if (x < -0x1.9fe368p6f) return 0.0f;
    if (x < -0x1.9d1d9ep6f) return 0x1p-149f;
    *fast = 1;
    return 0;
}

static inline float exp_twin(float x) {
    if (top12(x) >= SPECIAL_TOP) {
        int fast;
        float special = exp_special(x, &fast);
        if (!fast) return special;
    }
    double xd = (double)x;
    double kd = fma(INV_LN2_N, xd, SHIFT);
    uint64_t ki;
    memcpy(&ki, &kd, sizeof ki);
    kd -= SHIFT;
    double r = fma(INV_LN2_N, xd, -kd);
    uint64_t t = EXP_TABLE[ki % 32] + (ki << 47);
    double s;
    memcpy(&s, &t, sizeof s);
    double z = fma(C0, r, C1);
    double r2 = r * r;
    double y = fma(r, C2, 1.0);
    y = fma(z, r2, y);
    return (float)(y * s);
}

float loupe_expf_twin(float x) { return exp_twin(x); }

static void swiglu_portable(size_t count, const float *gate, const float *up, float *out) {
    for (size_t j = 0; j < count; j++) {
        float g = gate[j];
        out[j] = g / (1.0f + exp_twin(-g)) * up[j];
    }
}

// ---- AVX2: 4 doubles a vector, 8 floats a step ----

LOUPE_AVX2 static inline __m256d exp_avx2(__m128 x) {
    __m256d xd = _mm256_cvtps_pd(x);
    __m256d kd = _mm256_fmadd_pd(_mm256_set1_pd(INV_LN2_N), xd, _mm256_set1_pd(SHIFT));
    __m256i ki = _mm256_castpd_si256(kd);
    kd = _mm256_sub_pd(kd, _mm256_set1_pd(SHIFT));
    __m256d r = _mm256_fmsub_pd(_mm256_set1_pd(INV_LN2_N), xd, kd);
    __m256i index = _mm256_and_si256(ki, _mm256_set1_epi64x(31));
    __m256i t = _mm256_add_epi64(_mm256_i64gather_epi64((const long long *)EXP_TABLE, index, 8),
                                 _mm256_slli_epi64(ki, 47));
    __m256d z = _mm256_fmadd_pd(_mm256_set1_pd(C0), r, _mm256_set1_pd(C1));
    __m256d r2 = _mm256_mul_pd(r, r);
    __m256d y = _mm256_fmadd_pd(r, _mm256_set1_pd(C2), _mm256_set1_pd(1.0));
    y = _mm256_fmadd_pd(z, r2, y);
    return _mm256_mul_pd(y, _mm256_castsi256_pd(t));
}

LOUPE_AVX2 static void swiglu_avx2(size_t count, const float *gate, const float *up, float *out) {
    const __m256 sign = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f);
    const __m256i magnitude = _mm256_set1_epi32(0x7fffffff), special = _mm256_set1_epi32((SPECIAL_TOP << 20) - 1);
    size_t j = 0;
    for (; j + 8 <= count; j += 8) {
        __m256 g = _mm256_loadu_ps(gate + j);
        __m256 x = _mm256_xor_ps(g, sign);
        __m256i bits = _mm256_and_si256(_mm256_castps_si256(x), magnitude);
        if (!_mm256_testz_si256(_mm256_cmpgt_epi32(bits, special), _mm256_cmpgt_epi32(bits, special))) {
            swiglu_portable(8, gate + j, up + j, out + j);
            continue;
        }
        __m128 low = _mm256_cvtpd_ps(exp_avx2(_mm256_castps256_ps128(x)));
        __m128 high = _mm256_cvtpd_ps(exp_avx2(_mm256_extractf128_ps(x, 1)));
        __m256 e = _mm256_insertf128_ps(_mm256_castps128_ps256(low), high, 1);
        __m256 y = _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(one, e)), _mm256_loadu_ps(up + j));
        _mm256_storeu_ps(out + j, y);
    }
    swiglu_portable(count - j, gate + j, up + j, out + j);
}

// ---- AVX-512: 8 doubles a vector, 16 floats a step ----

LOUPE_AVX512 static inline __m256 exp_avx512(__m256 x) {
    __m512d xd = _mm512_cvtps_pd(x);
    __m512d kd = _mm512_fmadd_pd(_mm512_set1_pd(INV_LN2_N), xd, _mm512_set1_pd(SHIFT));
    __m512i ki = _mm512_castpd_si512(kd);
    kd = _mm512_sub_pd(kd, _mm512_set1_pd(SHIFT));
    __m512d r = _mm512_fmsub_pd(_mm512_set1_pd(INV_LN2_N), xd, kd);
    __m512i index = _mm512_and_si512(ki, _mm512_set1_epi64(31));
    __m512i t = _mm512_add_epi64(_mm512_i64gather_epi64(index, (const long long *)EXP_TABLE, 8),
                                 _mm512_slli_epi64(ki, 47));
    __m512d z = _mm512_fmadd_pd(_mm512_set1_pd(C0), r, _mm512_set1_pd(C1));
    __m512d r2 = _mm512_mul_pd(r, r);
    __m512d y = _mm512_fmadd_pd(r, _mm512_set1_pd(C2), _mm512_set1_pd(1.0));
    y = _mm512_fmadd_pd(z, r2, y);
    return _mm512_cvtpd_ps(_mm512_mul_pd(y, _mm512_castsi512_pd(t)));
}

LOUPE_AVX512 static void swiglu_avx512(size_t count, const float *gate, const float *up, float *out) {
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512i magnitude = _mm512_set1_epi32(0x7fffffff), special = _mm512_set1_epi32((SPECIAL_TOP << 20) - 1);
    size_t j = 0;
    for (; j + 16 <= count; j += 16) {
        __m512 g = _mm512_loadu_ps(gate + j);
        __m512 x = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(g), _mm512_set1_epi32((int)0x80000000u)));
        __m512i bits = _mm512_and_si512(_mm512_castps_si512(x), magnitude);
        if (_mm512_cmpgt_epi32_mask(bits, special)) {
            swiglu_portable(16, gate + j, up + j, out + j);
            continue;
        }
        __m256 low = exp_avx512(_mm512_castps512_ps256(x));
        __m256 high = exp_avx512(_mm512_extractf32x8_ps(x, 1));
        __m512 e = _mm512_insertf32x8(_mm512_castps256_ps512(low), high, 1);
        _mm512_storeu_ps(out + j, _mm512_mul_ps(_mm512_div_ps(g, _mm512_add_ps(one, e)), _mm512_loadu_ps(up + j)));
    }
    swiglu_portable(count - j, gate + j, up + j, out + j);
}

void loupe_swiglu(size_t count, const float *gate, const float *up, float *out, loupe_isa widest) {
    switch (loupe_usable_isa(widest)) {
    case LOUPE_ISA_AVX512: swiglu_avx512(count, gate, up, out); break;
    case LOUPE_ISA_AVX2: swiglu_avx2(count, gate, up, out); break;
    default: swiglu_portable(count, gate, up, out); break;
    }
}
