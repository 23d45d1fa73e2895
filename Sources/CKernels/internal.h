// Shared pieces of the C kernels (not part of the module's public header).
#ifndef LOUPE_CKERNELS_INTERNAL_H
#define LOUPE_CKERNELS_INTERNAL_H
#include "ckernels.h"
#include <immintrin.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define LOUPE_AVX2 __attribute__((target("avx2,fma")))

/// The register tile of the matmul micro-kernel: 6 rows × 16 columns = 12 AVX accumulators,
/// leaving 4 of the 16 ymm registers for the two B loads and the A broadcast.
enum { LOUPE_MR = 6, LOUPE_NR = 16 };

/// The largest |x[i]| over `count` floats (0 for none; NaNs skipped): the scale of a symmetric
/// int8 quantization is this over 127.
static inline float loupe_largest_magnitude(const float *x, size_t count) {
    float largest = 0;
    for (size_t i = 0; i < count; i++) largest = fabsf(x[i]) > largest ? fabsf(x[i]) : largest;
    return largest;
}

/// Whether the CPU has AMX tiles and Linux lets this process use them (asked once; int8gemm.c).
int loupe_amx_permitted(void);

/// Configures the AMX tiles (each row 64 bytes) for two row blocks of `top` and `bottom` ≤ 16
/// rows: C tiles 0, 1 and A tile 4 of `top` rows, C tiles 2, 3 and A tile 5 of `bottom` (left
/// unconfigured when 0), B tiles 6 and 7 of 16. (16, 16) makes all eight 16 × 64 bytes.
void loupe_amx_configure(size_t top, size_t bottom);

/// Whether the CPU has AVX2 and FMA (checked once).
int loupe_has_avx2_fma(void);

/// The widest of the tiled kernels' forms, up to `widest`, that the CPU has.
loupe_isa loupe_usable_isa(loupe_isa widest);

/// `c[0..<mr][0..<nr] += Σ_p a[p][·] · b[p][·]` over `kc` steps, where `a` is a packed panel
/// of 6 rows (`a[p * 6 + i]`) and `b` a packed panel of 16 columns (`b[p * 16 + j]`), both
/// zero-padded; only the `mr × nr` corner of the tile is written back to `c` (row stride `ldc`).
LOUPE_AVX2 void loupe_microkernel_6x16(
    size_t kc, const float *a, const float *b, float *c, size_t ldc, size_t mr, size_t nr);

/// The micro-kernel's body, for `loupe_microkernel_6x16` and the flash attention: A's six values
/// of step p at `a + p · a_step` (6 for a packed panel; another stride reads A in place), the
/// `mr × nr` corner added to C, or stored over it when `overwrite`. Inlined, so each caller's
/// constant step and mode cost nothing in the loop.
LOUPE_AVX2 static inline __attribute__((always_inline)) void loupe_tile_6x16(
    size_t kc, const float *a, size_t a_step, const float *b, float *c, size_t ldc, size_t mr, size_t nr,
    int overwrite) {
    __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
    __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
    __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
    __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
    __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
    __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
    for (size_t p = 0; p < kc; p++) {
        __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
        __m256 x;
        x = _mm256_broadcast_ss(a + 0); c00 = _mm256_fmadd_ps(x, b0, c00); c01 = _mm256_fmadd_ps(x, b1, c01);
        x = _mm256_broadcast_ss(a + 1); c10 = _mm256_fmadd_ps(x, b0, c10); c11 = _mm256_fmadd_ps(x, b1, c11);
        x = _mm256_broadcast_ss(a + 2); c20 = _mm256_fmadd_ps(x, b0, c20); c21 = _mm256_fmadd_ps(x, b1, c21);
        x = _mm256_broadcast_ss(a + 3); c30 = _mm256_fmadd_ps(x, b0, c30); c31 = _mm256_fmadd_ps(x, b1, c31);
        x = _mm256_broadcast_ss(a + 4); c40 = _mm256_fmadd_ps(x, b0, c40); c41 = _mm256_fmadd_ps(x, b1, c41);
        x = _mm256_broadcast_ss(a + 5); c50 = _mm256_fmadd_ps(x, b0, c50); c51 = _mm256_fmadd_ps(x, b1, c51);
        a += a_step;
        b += LOUPE_NR;
    }
    if (mr == LOUPE_MR && nr == LOUPE_NR) {
#define LOUPE_TILE_ROW(row, lo, hi)                                                                     \
    if (overwrite) {                                                                                  \
        _mm256_storeu_ps(c + (row) * ldc, lo);                                                        \
        _mm256_storeu_ps(c + (row) * ldc + 8, hi);                                                    \
    } else {                                                                                          \
        _mm256_storeu_ps(c + (row) * ldc, _mm256_add_ps(_mm256_loadu_ps(c + (row) * ldc), lo));      \
        _mm256_storeu_ps(c + (row) * ldc + 8, _mm256_add_ps(_mm256_loadu_ps(c + (row) * ldc + 8), hi)); \
    }
        LOUPE_TILE_ROW(0, c00, c01) LOUPE_TILE_ROW(1, c10, c11) LOUPE_TILE_ROW(2, c20, c21)
        LOUPE_TILE_ROW(3, c30, c31) LOUPE_TILE_ROW(4, c40, c41) LOUPE_TILE_ROW(5, c50, c51)
#undef LOUPE_TILE_ROW
        return;
    }
    float tile[LOUPE_MR * LOUPE_NR];
    _mm256_storeu_ps(tile + 0, c00); _mm256_storeu_ps(tile + 8, c01);
    _mm256_storeu_ps(tile + 16, c10); _mm256_storeu_ps(tile + 24, c11);
    _mm256_storeu_ps(tile + 32, c20); _mm256_storeu_ps(tile + 40, c21);
    _mm256_storeu_ps(tile + 48, c30); _mm256_storeu_ps(tile + 56, c31);
    _mm256_storeu_ps(tile + 64, c40); _mm256_storeu_ps(tile + 72, c41);
    _mm256_storeu_ps(tile + 80, c50); _mm256_storeu_ps(tile + 88, c51);
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++)
            c[i * ldc + j] = overwrite ? tile[i * LOUPE_NR + j] : c[i * ldc + j] + tile[i * LOUPE_NR + j];
}

#define LOUPE_AVX512 __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,fma")))

/// The AVX-512 register tile: 12 rows × 32 columns = 24 zmm accumulators, leaving 8 of the 32
/// registers for the two B loads and the A broadcast.
enum { LOUPE_MR512 = 12, LOUPE_NR512 = 32 };

/// The `mr × nr` corner of a 12 × 32 tile of sums stored over `c` (`overwrite`) or added to it.
LOUPE_AVX512 static inline __attribute__((always_inline)) void loupe_store_12x32(
    __m512 acc[LOUPE_MR512][2], float *c, size_t ldc, size_t mr, size_t nr, int overwrite) {
    __mmask16 low = nr >= 16 ? 0xFFFF : (__mmask16)((1u << nr) - 1);
    __mmask16 high = nr >= 32 ? 0xFFFF : (nr <= 16 ? 0 : (__mmask16)((1u << (nr - 16)) - 1));
    for (size_t i = 0; i < mr; i++) {
        float *row = c + i * ldc;
        __m512 lo = acc[i][0], hi = acc[i][1];
        if (!overwrite) {
            lo = _mm512_add_ps(lo, _mm512_maskz_loadu_ps(low, row));
            hi = _mm512_add_ps(hi, _mm512_maskz_loadu_ps(high, row + 16));
        }
        _mm512_mask_storeu_ps(row, low, lo);
        _mm512_mask_storeu_ps(row + 16, high, hi);
    }
}

/// `loupe_tile_6x16` on AVX-512: a 12 × 32 tile of 24 zmm accumulators, A's 12 values of step p at
/// `a + p · a_step` (12 for a packed panel; the flash kernel reads its transposed P in place), B a
/// panel of 32 columns. Masked stores write the `mr × nr` corner.
LOUPE_AVX512 static inline __attribute__((always_inline)) void loupe_tile_12x32(
    size_t kc, const float *a, size_t a_step, const float *b, float *c, size_t ldc, size_t mr, size_t nr,
    int overwrite) {
    __m512 acc[LOUPE_MR512][2];
    for (int i = 0; i < LOUPE_MR512; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    for (size_t p = 0; p < kc; p++) {
        __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
#pragma GCC unroll 12
        for (int i = 0; i < LOUPE_MR512; i++) {
            __m512 x = _mm512_set1_ps(a[i]);
            acc[i][0] = _mm512_fmadd_ps(x, b0, acc[i][0]);
            acc[i][1] = _mm512_fmadd_ps(x, b1, acc[i][1]);
        }
        a += a_step;
        b += LOUPE_NR512;
    }
    loupe_store_12x32(acc, c, ldc, mr, nr, overwrite);
}

/// `loupe_pack_a` in 12-row panels (`a[i][p]` at `p · 12 + i`), for the 12 × 32 tile.
void loupe_pack_a_tall(size_t m, size_t k, const float *a, size_t lda, float *packed);

/// `loupe_pack_b` in 32-column panels. `packed` holds `ceil(n / 32) · 32 · k` floats.
void loupe_pack_b_wide(size_t k, size_t n, const float *b, size_t ldb, float *packed);

/// `loupe_pack_b_transposed` in 32-column panels.
void loupe_pack_b_transposed_wide(size_t k, size_t n, const float *b, size_t ldb, float *packed);

/// Packs rows `[0, m)` × columns `[0, k)` of row-major `a` (stride `lda`) into 6-row panels,
/// zero-padding the last panel. `packed` holds `ceil(m / 6) · 6 · k` floats.
void loupe_pack_a(size_t m, size_t k, const float *a, size_t lda, float *packed);

/// Packs rows `[0, k)` × columns `[0, n)` of row-major `b` (stride `ldb`) into 16-column
/// panels, zero-padding the last. `packed` holds `ceil(n / 16) · 16 · k` floats.
void loupe_pack_b(size_t k, size_t n, const float *b, size_t ldb, float *packed);

/// As `loupe_pack_b` for `bᵀ`: `b` is `n × k` row-major (a Linear layer's weight, or K in
/// attention), packed as the `k × n` matrix it is the transpose of.
void loupe_pack_b_transposed(size_t k, size_t n, const float *b, size_t ldb, float *packed);

/// e^x for 8 lanes: range reduction to r ∈ [-ln2/2, ln2/2] (n rounded by the 1.5·2²³ shift,
/// whose low mantissa bits then hold n for the exponent), a degree-6 polynomial, 2^n from the
/// exponent bits; relative error ≤ 2e-7 over [-87, 88], inputs clamped to that range.
LOUPE_AVX2 static inline __m256 loupe_exp256(__m256 x) {
    x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.3f)), _mm256_set1_ps(88.3f));
    const __m256 shift = _mm256_set1_ps(12582912.0f);
    __m256 shifted = _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504f), shift);
    __m256 n = _mm256_sub_ps(shifted, shift);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.69314575f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.4286068e-6f), r);
    __m256 p = _mm256_set1_ps(1.0f / 720);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    // The shifted value's bits are 0x4B400000 + n: add 127 and move it to the exponent.
    __m256i e = _mm256_slli_epi32(
        _mm256_add_epi32(_mm256_castps_si256(shifted), _mm256_set1_epi32(127 - 0x4B400000)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

LOUPE_AVX2 static inline float loupe_hmax256(__m256 v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
    return _mm_cvtss_f32(m);
}

LOUPE_AVX2 static inline float loupe_hsum256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

#endif
