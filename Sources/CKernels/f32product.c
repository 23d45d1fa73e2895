// Float products of a weight matrix repacked once, y[t][o] = Σ_p x[t][p] · w[o][p], in which
// every output is summed in one fixed order: per block of 32 columns a chain of fused
// multiply-adds from zero (acc = fma(x[t][p], w[o][p], acc), p in order), and the blocks' sums
// added in order (y = b₀, then y + b₁, …; a chain of 32, not of the whole row, keeps the rounding
// near a blocked sgemm's). That fixes each output's bits whatever else is computed beside it: one token (a decode step) or many (a prefill), any
// tile of tokens and outputs, any split across threads, and every instruction form (AVX-512,
// AVX2 and the portable loop perform the same operations). OpenBLAS's sgemv and sgemm sum in
// other orders for one row and for many, and in other orders again on other CPUs.
//
// Layout: panels of 16 outputs; panel g holds, for each column p, the 16 weights w[16g + j][p]
// side by side (`packed[(g · columns + p) · 16 + j]`), rows past the matrix's last zero. A vector
// of a panel's column is one aligned load, each lane one output's running sum, so no horizontal
// sum is ever taken.
#include "ckernels.h"
#include "internal.h"
#include <math.h>
#include <string.h>

#pragma STDC FP_CONTRACT OFF

enum { PANEL = 16, BLOCK = 32 };

size_t loupe_f32_packed_floats(size_t rows, size_t columns) { return (rows + PANEL - 1) / PANEL * PANEL * columns; }

void loupe_f32_repack(size_t rows, size_t columns, const float *w, float *packed) {
    size_t panels = (rows + PANEL - 1) / PANEL;
    for (size_t g = 0; g < panels; g++)
        for (size_t j = 0; j < PANEL; j++) {
            size_t r = g * PANEL + j;
            float *target = packed + g * columns * PANEL + j;
            if (r < rows) {
                const float *source = w + r * columns;
                for (size_t p = 0; p < columns; p++) target[p * PANEL] = source[p];
            } else {
                for (size_t p = 0; p < columns; p++) target[p * PANEL] = 0;
            }
        }
}

void loupe_f32_packed_row(size_t rows, size_t columns, const float *packed, size_t row, float *out) {
    if (row >= rows) return;
    const float *source = packed + (row / PANEL) * columns * PANEL + row % PANEL;
    for (size_t p = 0; p < columns; p++) out[p] = source[p * PANEL];
}

// The outputs of panel g that exist: 16, or fewer in the last panel.
static inline size_t panel_width(size_t rows, size_t g) { return rows - g * PANEL < PANEL ? rows - g * PANEL : PANEL; }

// ---- portable ----

static void product_portable(size_t rows, size_t columns, const float *packed, size_t tokens, const float *x,
                             size_t ldx, float *y, size_t ldy, size_t begin, size_t end) {
    for (size_t g = begin; g < end; g++) {
        const float *panel = packed + g * columns * PANEL;
        size_t width = panel_width(rows, g);
        for (size_t t = 0; t < tokens; t++) {
            float total[PANEL] = {0};
            const float *row = x + t * ldx;
            for (size_t p0 = 0; p0 < columns; p0 += BLOCK) {
                size_t end = columns - p0 < BLOCK ? columns : p0 + BLOCK;
                float acc[PANEL] = {0};
                for (size_t p = p0; p < end; p++)
                    for (size_t j = 0; j < PANEL; j++) acc[j] = fmaf(row[p], panel[p * PANEL + j], acc[j]);
                for (size_t j = 0; j < PANEL; j++) total[j] = p0 == 0 ? acc[j] : total[j] + acc[j];
            }
            memcpy(y + t * ldy + g * PANEL, total, width * sizeof(float));
        }
    }
}

// ---- AVX2: a panel's 16 lanes in two ymm; tiles of up to 6 tokens ----

#define TARGET_AVX2 __attribute__((target("avx2,fma")))

TARGET_AVX2 static inline __attribute__((always_inline)) void tile_avx2(size_t tokens, size_t columns,
                                                                       const float *panel, const float *x, size_t ldx,
                                                                       float *y, size_t ldy, size_t width) {
    __m256 low[6], high[6];
    for (size_t p0 = 0; p0 < columns; p0 += BLOCK) {
        size_t end = columns - p0 < BLOCK ? columns : p0 + BLOCK;
        for (size_t t = 0; t < tokens; t++) low[t] = high[t] = _mm256_setzero_ps();
        for (size_t p = p0; p < end; p++) {
            __m256 w0 = _mm256_loadu_ps(panel + p * PANEL), w1 = _mm256_loadu_ps(panel + p * PANEL + 8);
            for (size_t t = 0; t < tokens; t++) {
                __m256 v = _mm256_broadcast_ss(x + t * ldx + p);
                low[t] = _mm256_fmadd_ps(v, w0, low[t]);
                high[t] = _mm256_fmadd_ps(v, w1, high[t]);
            }
        }
        // The running totals live in y (the first block stores, later ones add), as on AVX-512.
        for (size_t t = 0; t < tokens; t++) {
            float lanes[PANEL], *target = y + t * ldy;
            if (width < PANEL) memcpy(lanes, target, width * sizeof(float));
            float *sums = width == PANEL ? target : lanes;
            __m256 a = low[t], b = high[t];
            if (p0 > 0) {
                a = _mm256_add_ps(_mm256_loadu_ps(sums), a);
                b = _mm256_add_ps(_mm256_loadu_ps(sums + 8), b);
            }
            _mm256_storeu_ps(sums, a);
            _mm256_storeu_ps(sums + 8, b);
            if (width < PANEL) memcpy(target, lanes, width * sizeof(float));
        }
    }
}

TARGET_AVX2 static void product_avx2(size_t rows, size_t columns, const float *packed, size_t tokens, const float *x,
                                     size_t ldx, float *y, size_t ldy, size_t begin, size_t end) {
    for (size_t g = begin; g < end; g++) {
        const float *panel = packed + g * columns * PANEL;
        size_t width = panel_width(rows, g);
        size_t t = 0;
        for (; t + 6 <= tokens; t += 6) tile_avx2(6, columns, panel, x + t * ldx, ldx, y + t * ldy + g * PANEL, ldy, width);
        switch (tokens - t) {
        case 5: tile_avx2(5, columns, panel, x + t * ldx, ldx, y + t * ldy + g * PANEL, ldy, width); break;
        case 4: tile_avx2(4, columns, panel, x + t * ldx, ldx, y + t * ldy + g * PANEL, ldy, width); break;
        case 3: tile_avx2(3, columns, panel, x + t * ldx, ldx, y + t * ldy + g * PANEL, ldy, width); break;
        case 2: tile_avx2(2, columns, panel, x + t * ldx, ldx, y + t * ldy + g * PANEL, ldy, width); break;
        case 1: tile_avx2(1, columns, panel, x + t * ldx, ldx, y + t * ldy + g * PANEL, ldy, width); break;
        default: break;
        }
    }
}

// ---- AVX-512: a panel's 16 lanes in one zmm; tiles of up to 12 tokens × 2 panels ----

#define TARGET_AVX512 __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,fma,avx2")))

TARGET_AVX512 static inline __attribute__((always_inline)) void tile_avx512(
    size_t tokens, size_t panels, size_t rows, size_t columns, const float *packed, size_t g, const float *x,
    size_t ldx, float *y, size_t ldy) {
    // The running totals live in y (the first block stores, later ones add): registers hold
    // only the block's chains.
    __m512 acc[12][2];
    const float *panel0 = packed + g * columns * PANEL, *panel1 = panel0 + columns * PANEL;
    __mmask16 masks[2];
    for (size_t q = 0; q < panels; q++) {
        size_t width = panel_width(rows, g + q);
        masks[q] = width == PANEL ? 0xFFFF : (__mmask16)((1u << width) - 1);
    }
    for (size_t p0 = 0; p0 < columns; p0 += BLOCK) {
        size_t end = columns - p0 < BLOCK ? columns : p0 + BLOCK;
        for (size_t t = 0; t < tokens; t++)
            for (size_t q = 0; q < panels; q++) acc[t][q] = _mm512_setzero_ps();
        for (size_t p = p0; p < end; p++) {
            __m512 w0 = _mm512_loadu_ps(panel0 + p * PANEL);
            __m512 w1 = panels > 1 ? _mm512_loadu_ps(panel1 + p * PANEL) : w0;
            for (size_t t = 0; t < tokens; t++) {
                __m512 v = _mm512_set1_ps(x[t * ldx + p]);
                acc[t][0] = _mm512_fmadd_ps(v, w0, acc[t][0]);
                if (panels > 1) acc[t][1] = _mm512_fmadd_ps(v, w1, acc[t][1]);
            }
        }
        for (size_t q = 0; q < panels; q++)
            for (size_t t = 0; t < tokens; t++) {
                float *target = y + t * ldy + (g + q) * PANEL;
                __m512 sum = p0 == 0 ? acc[t][q] : _mm512_add_ps(_mm512_maskz_loadu_ps(masks[q], target), acc[t][q]);
                _mm512_mask_storeu_ps(target, masks[q], sum);
            }
    }
}

TARGET_AVX512 static inline __attribute__((always_inline)) void tokens_avx512(
    size_t panels, size_t rows, size_t columns, const float *packed, size_t g, size_t tokens, const float *x,
    size_t ldx, float *y, size_t ldy) {
    size_t t = 0;
    for (; t + 12 <= tokens; t += 12) tile_avx512(12, panels, rows, columns, packed, g, x + t * ldx, ldx, y + t * ldy, ldy);
    size_t left = tokens - t;
    if (left >= 8) {
        tile_avx512(8, panels, rows, columns, packed, g, x + t * ldx, ldx, y + t * ldy, ldy);
        t += 8;
        left -= 8;
    }
    if (left >= 4) {
        tile_avx512(4, panels, rows, columns, packed, g, x + t * ldx, ldx, y + t * ldy, ldy);
        t += 4;
        left -= 4;
    }
    if (left >= 2) {
        tile_avx512(2, panels, rows, columns, packed, g, x + t * ldx, ldx, y + t * ldy, ldy);
        t += 2;
        left -= 2;
    }
    if (left == 1) tile_avx512(1, panels, rows, columns, packed, g, x + t * ldx, ldx, y + t * ldy, ldy);
}

TARGET_AVX512 static void product_avx512(size_t rows, size_t columns, const float *packed, size_t tokens,
                                         const float *x, size_t ldx, float *y, size_t ldy, size_t begin, size_t end) {
    size_t g = begin;
    for (; g + 2 <= end; g += 2) tokens_avx512(2, rows, columns, packed, g, tokens, x, ldx, y, ldy);
    if (g < end) tokens_avx512(1, rows, columns, packed, g, tokens, x, ldx, y, ldy);
}

void loupe_f32_product(size_t rows, size_t columns, const float *packed, size_t tokens, const float *x, size_t ldx,
                       float *y, size_t ldy, size_t panel_begin, size_t panel_end, loupe_isa widest) {
    switch (loupe_usable_isa(widest)) {
    case LOUPE_ISA_AVX512:
        product_avx512(rows, columns, packed, tokens, x, ldx, y, ldy, panel_begin, panel_end);
        break;
    case LOUPE_ISA_AVX2:
        product_avx2(rows, columns, packed, tokens, x, ldx, y, ldy, panel_begin, panel_end);
        break;
    default:
        product_portable(rows, columns, packed, tokens, x, ldx, y, ldy, panel_begin, panel_end);
    }
}
