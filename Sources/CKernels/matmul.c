// Matrix multiplication two ways: the textbook triple loop, and a cache-blocked version in the
// GotoBLAS/BLIS structure (pack a KC × NC slab of B for L3, an MC × KC block of A for L2, and
// run a register tile over them: 12 × 32 with AVX-512, 6 × 16 with AVX2). Both are
// single-threaded; callers split rows.
#include "ckernels.h"
#include "internal.h"
#include <stdlib.h>
#include <string.h>

enum { KC = 256, MC = 72, NC = 2048 };

int loupe_has_avx2_fma(void) {
    static int known = -1;
    if (known < 0) known = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return known;
}

loupe_isa loupe_usable_isa(loupe_isa widest) {
    if (widest >= LOUPE_ISA_AVX512 && loupe_has_avx512() && loupe_has_avx2_fma()) return LOUPE_ISA_AVX512;
    if (widest >= LOUPE_ISA_AVX2 && loupe_has_avx2_fma()) return LOUPE_ISA_AVX2;
    return LOUPE_ISA_PORTABLE;
}

int loupe_has_avx512(void) {
    static int known = -1;
    if (known < 0)
        known = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw");
    return known;
}

LOUPE_AVX2 void loupe_microkernel_6x16(
    size_t kc, const float *a, const float *b, float *c, size_t ldc, size_t mr, size_t nr) {
    loupe_tile_6x16(kc, a, LOUPE_MR, b, c, ldc, mr, nr, 0);
}

// Without AVX2: the same tile in plain C.
static void microkernel_baseline(size_t kc, const float *a, const float *b, float *c, size_t ldc, size_t mr, size_t nr) {
    float tile[LOUPE_MR * LOUPE_NR] = {0};
    for (size_t p = 0; p < kc; p++)
        for (size_t i = 0; i < LOUPE_MR; i++)
            for (size_t j = 0; j < LOUPE_NR; j++) tile[i * LOUPE_NR + j] += a[p * LOUPE_MR + i] * b[p * LOUPE_NR + j];
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++) c[i * ldc + j] += tile[i * LOUPE_NR + j];
}

// The packings once, for any panel size: rows of A in panels `height` tall, columns of B (or of
// Bᵀ) in panels `width` wide, the last zero-padded. Inlined into the wrappers below, so each gets
// its constant size.
static inline __attribute__((always_inline)) void pack_rows(size_t m, size_t k, const float *a, size_t lda,
                                                            size_t height, float *packed) {
    for (size_t i0 = 0; i0 < m; i0 += height) {
        size_t rows = m - i0 < height ? m - i0 : height;
        for (size_t p = 0; p < k; p++) {
            for (size_t i = 0; i < rows; i++) packed[i] = a[(i0 + i) * lda + p];
            for (size_t i = rows; i < height; i++) packed[i] = 0;
            packed += height;
        }
    }
}

static inline __attribute__((always_inline)) void pack_columns(size_t k, size_t n, const float *b, size_t ldb,
                                                               int transposed, size_t width, float *packed) {
    for (size_t j0 = 0; j0 < n; j0 += width) {
        size_t columns = n - j0 < width ? n - j0 : width;
        for (size_t p = 0; p < k; p++) {
            if (!transposed && columns == width) {
                memcpy(packed, b + p * ldb + j0, width * sizeof(float));
            } else {
                for (size_t j = 0; j < columns; j++)
                    packed[j] = transposed ? b[(j0 + j) * ldb + p] : b[p * ldb + j0 + j];
                for (size_t j = columns; j < width; j++) packed[j] = 0;
            }
            packed += width;
        }
    }
}

void loupe_pack_a(size_t m, size_t k, const float *a, size_t lda, float *packed) {
    pack_rows(m, k, a, lda, LOUPE_MR, packed);
}

void loupe_pack_b(size_t k, size_t n, const float *b, size_t ldb, float *packed) {
    pack_columns(k, n, b, ldb, 0, LOUPE_NR, packed);
}

void loupe_pack_b_transposed(size_t k, size_t n, const float *b, size_t ldb, float *packed) {
    pack_columns(k, n, b, ldb, 1, LOUPE_NR, packed);
}

void loupe_pack_a_tall(size_t m, size_t k, const float *a, size_t lda, float *packed) {
    pack_rows(m, k, a, lda, LOUPE_MR512, packed);
}

void loupe_pack_b_wide(size_t k, size_t n, const float *b, size_t ldb, float *packed) {
    pack_columns(k, n, b, ldb, 0, LOUPE_NR512, packed);
}

void loupe_pack_b_transposed_wide(size_t k, size_t n, const float *b, size_t ldb, float *packed) {
    pack_columns(k, n, b, ldb, 1, LOUPE_NR512, packed);
}

static size_t round_up(size_t value, size_t step) { return (value + step - 1) / step * step; }

// Packs one KC × NC slab of B: fp32 row-major, or int8 n × k rows with a scale per row
// (dequantised while packing, so the micro-kernel is the same).
typedef struct {
    const float *f32;
    const int8_t *i8;
    const float *scales;
    size_t ld;
} b_source;

// Packs one KC × NC slab of B in panels `width` columns wide (16 for the AVX2 tile, 32 for AVX-512).
static void pack_b_slab(const b_source *source, size_t p0, size_t kc, size_t j0, size_t nc, size_t width,
                        float *packed) {
    if (source->f32) {
        const float *slab = source->f32 + p0 * source->ld + j0;
        if (width == LOUPE_NR512) {
            loupe_pack_b_wide(kc, nc, slab, source->ld, packed);
        } else {
            loupe_pack_b(kc, nc, slab, source->ld, packed);
        }
        return;
    }
    for (size_t jp = 0; jp < nc; jp += width) {
        size_t columns = nc - jp < width ? nc - jp : width;
        for (size_t p = 0; p < kc; p++) {
            for (size_t j = 0; j < columns; j++) {
                size_t row = j0 + jp + j;
                packed[j] = (float)source->i8[row * source->ld + p0 + p] * source->scales[row];
            }
            for (size_t j = columns; j < width; j++) packed[j] = 0;
            packed += width;
        }
    }
}

// The 12 × 32 tile adding into C (the blocked loop's C starts zeroed).
LOUPE_AVX512 static void microkernel_12x32(size_t kc, const float *a, const float *b, float *c, size_t ldc, size_t mr,
                                           size_t nr) {
    loupe_tile_12x32(kc, a, LOUPE_MR512, b, c, ldc, mr, nr, 0);
}

static int gemm_blocked(size_t m, size_t n, size_t k, const float *a, size_t lda, const b_source *b, float *c, size_t ldc,
                        loupe_isa widest) {
    for (size_t i = 0; i < m; i++) memset(c + i * ldc, 0, n * sizeof(float));
    float *packed_a = aligned_alloc(64, round_up(MC * KC * sizeof(float), 64));
    float *packed_b = aligned_alloc(64, round_up(KC * NC * sizeof(float), 64));
    if (!packed_a || !packed_b) {
        free(packed_a);
        free(packed_b);
        return -1;
    }
    loupe_isa isa = loupe_usable_isa(widest);
    int avx2 = isa == LOUPE_ISA_AVX2;
    // With AVX-512 the tile is 12 × 32 (MC and NC are multiples of both tiles' sides).
    int avx512 = isa == LOUPE_ISA_AVX512;
    size_t tile_rows = avx512 ? LOUPE_MR512 : LOUPE_MR, tile_columns = avx512 ? LOUPE_NR512 : LOUPE_NR;
    for (size_t j0 = 0; j0 < n; j0 += NC) {
        size_t nc = n - j0 < NC ? n - j0 : NC;
        for (size_t p0 = 0; p0 < k; p0 += KC) {
            size_t kc = k - p0 < KC ? k - p0 : KC;
            pack_b_slab(b, p0, kc, j0, nc, tile_columns, packed_b);
            for (size_t i0 = 0; i0 < m; i0 += MC) {
                size_t mc = m - i0 < MC ? m - i0 : MC;
                if (avx512) {
                    loupe_pack_a_tall(mc, kc, a + i0 * lda + p0, lda, packed_a);
                } else {
                    loupe_pack_a(mc, kc, a + i0 * lda + p0, lda, packed_a);
                }
                for (size_t jr = 0; jr < nc; jr += tile_columns) {
                    size_t nr = nc - jr < tile_columns ? nc - jr : tile_columns;
                    const float *panel_b = packed_b + jr * kc;
                    for (size_t ir = 0; ir < mc; ir += tile_rows) {
                        size_t mr = mc - ir < tile_rows ? mc - ir : tile_rows;
                        float *tile = c + (i0 + ir) * ldc + j0 + jr;
                        const float *panel_a = packed_a + ir * kc;
                        if (avx512) {
                            microkernel_12x32(kc, panel_a, panel_b, tile, ldc, mr, nr);
                        } else if (avx2) {
                            loupe_microkernel_6x16(kc, panel_a, panel_b, tile, ldc, mr, nr);
                        } else {
                            microkernel_baseline(kc, panel_a, panel_b, tile, ldc, mr, nr);
                        }
                    }
                }
            }
        }
    }
    free(packed_a);
    free(packed_b);
    return 0;
}

int loupe_sgemm_blocked_isa(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *b, size_t ldb,
                            float *c, size_t ldc, loupe_isa widest) {
    b_source source = {.f32 = b, .ld = ldb};
    return gemm_blocked(m, n, k, a, lda, &source, c, ldc, widest);
}

int loupe_sgemm_blocked(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *b, size_t ldb, float *c,
                        size_t ldc) {
    return loupe_sgemm_blocked_isa(m, n, k, a, lda, b, ldb, c, ldc, LOUPE_ISA_AVX512);
}

int loupe_matmul_int8(size_t m, size_t n, size_t k, const float *a, size_t lda, const int8_t *weight,
                      const float *scales, float *c, size_t ldc) {
    b_source source = {.i8 = weight, .scales = scales, .ld = k};
    return gemm_blocked(m, n, k, a, lda, &source, c, ldc, LOUPE_ISA_AVX512);
}

// The triple loop once, compiled twice: inlined into an AVX2+FMA function and a plain one.
static inline __attribute__((always_inline)) void naive_body(
    size_t m, size_t n, size_t k, const float *a, const float *b, float *c) {
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            float sum = 0;
            for (size_t p = 0; p < k; p++) sum += a[i * k + p] * b[p * n + j];
            c[i * n + j] = sum;
        }
}

LOUPE_AVX2 static void naive_avx2(size_t m, size_t n, size_t k, const float *a, const float *b, float *c) {
    naive_body(m, n, k, a, b, c);
}

static void naive_baseline(size_t m, size_t n, size_t k, const float *a, const float *b, float *c) {
    naive_body(m, n, k, a, b, c);
}

void loupe_sgemm_naive(size_t m, size_t n, size_t k, const float *a, const float *b, float *c) {
    if (loupe_has_avx2_fma()) {
        naive_avx2(m, n, k, a, b, c);
    } else {
        naive_baseline(m, n, k, a, b, c);
    }
}

void loupe_quantize_rows_int8(size_t rows, size_t columns, const float *weight, int8_t *quantized, float *scales) {
    for (size_t r = 0; r < rows; r++) {
        const float *row = weight + r * columns;
        float largest = 0;
        for (size_t j = 0; j < columns; j++) {
            float magnitude = row[j] < 0 ? -row[j] : row[j];
            if (magnitude > largest) largest = magnitude;
        }
        float scale = largest > 0 ? largest / 127.0f : 1.0f;
        float inverse = 1.0f / scale;
        for (size_t j = 0; j < columns; j++) {
            float q = __builtin_roundf(row[j] * inverse);
            quantized[r * columns + j] = (int8_t)(q > 127 ? 127 : (q < -127 ? -127 : q));
        }
        scales[r] = scale;
    }
}
