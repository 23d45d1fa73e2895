// Single-head scaled dot-product attention, O = softmax(Q·Kᵀ / √d) · V, two ways.
#include "ckernels.h"
#include "internal.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

// ---- naive: materialise the T × T scores, softmax each row, multiply by V. ----

// The loops once, compiled twice: inlined into an AVX2+FMA function and into a plain one.
static inline __attribute__((always_inline)) void naive_attention_body(
    size_t t, size_t d, const float *q, const float *k, const float *v, float *o, float *scores) {
    float scale = 1.0f / sqrtf((float)d);
    for (size_t i = 0; i < t; i++)
        for (size_t j = 0; j < t; j++) {
            float dot = 0;
            for (size_t p = 0; p < d; p++) dot += q[i * d + p] * k[j * d + p];
            scores[i * t + j] = dot * scale;
        }
    loupe_softmax_three_pass(scores, scores, t, t);
    memset(o, 0, t * d * sizeof(float));
    for (size_t i = 0; i < t; i++)
        for (size_t j = 0; j < t; j++) {
            float p = scores[i * t + j];
            for (size_t c = 0; c < d; c++) o[i * d + c] += p * v[j * d + c];
        }
}

LOUPE_AVX2 static void naive_attention_avx2(
    size_t t, size_t d, const float *q, const float *k, const float *v, float *o, float *scores) {
    naive_attention_body(t, d, q, k, v, o, scores);
}

static void naive_attention_baseline(
    size_t t, size_t d, const float *q, const float *k, const float *v, float *o, float *scores) {
    naive_attention_body(t, d, q, k, v, o, scores);
}

size_t loupe_attention_naive_scratch(size_t t) { return t * t * sizeof(float); }

int loupe_attention_naive(size_t t, size_t d, const float *q, const float *k, const float *v, float *o) {
    float *scores = malloc(loupe_attention_naive_scratch(t));
    if (!scores) return -1;
    if (loupe_has_avx2_fma()) {
        naive_attention_avx2(t, d, q, k, v, o, scores);
    } else {
        naive_attention_baseline(t, d, q, k, v, o, scores);
    }
    free(scores);
    return 0;
}

// ---- flash-style (Dao et al. 2022, on a CPU): for each block of BR query rows, stream K and
// V in blocks of BC rows; a BR × BC tile of scores lives in L1, each row keeps a running
// maximum m and sum l (online softmax), and the output block is rescaled when m grows. Extra
// memory is the packed panels, the tile and m, l: independent of T² (O(BR·(d + BC))). ----

enum { BR = 48, BC = 64 };

typedef struct {
    float *q_panel;   // BR × d, packed in 6-row panels
    float *k_panel;   // d × BC (Kᵀ), packed in 16-column panels
    float *v_panel;   // BC × d, packed in 16-column panels
    float *s_tile;    // BR × BC scores, then probabilities
    float *p_panel;   // BR × BC probabilities, packed in 6-row panels
    float *m, *l;     // BR running maxima and sums
} flash_scratch;

static size_t up(size_t value, size_t step) { return (value + step - 1) / step * step; }

static size_t flash_floats(size_t d) {
    size_t dq = up(BR, LOUPE_MR) * d, dk = d * up(BC, LOUPE_NR), dv = BC * up(d, LOUPE_NR);
    return dq + dk + dv + BR * BC + up(BR, LOUPE_MR) * BC + 2 * BR;
}

size_t loupe_attention_flash_scratch(size_t d) { return flash_floats(d) * sizeof(float); }

LOUPE_AVX2 static void flash_block_softmax(size_t rows, size_t columns, float *s, float *m, float *l, float *o,
                                           size_t d, float scale) {
    for (size_t i = 0; i < rows; i++) {
        float *row = s + i * BC;
        float block_max = -INFINITY;
        for (size_t j = 0; j < columns; j++) block_max = row[j] > block_max ? row[j] : block_max;
        block_max *= scale;
        float m_new = block_max > m[i] ? block_max : m[i];
        __m256 vscale = _mm256_set1_ps(scale), shift = _mm256_set1_ps(m_new), vsum = _mm256_setzero_ps();
        size_t j = 0;
        for (; j + 8 <= columns; j += 8) {
            __m256 p = loupe_exp256(_mm256_fmsub_ps(_mm256_loadu_ps(row + j), vscale, shift));
            _mm256_storeu_ps(row + j, p);
            vsum = _mm256_add_ps(vsum, p);
        }
        float sum = loupe_hsum256(vsum);
        for (; j < columns; j++) sum += (row[j] = expf(row[j] * scale - m_new));
        for (; j < BC; j++) row[j] = 0;
        float correction = expf(m[i] - m_new);  // 0 on the first block (m = -inf)
        l[i] = l[i] * correction + sum;
        m[i] = m_new;
        if (correction != 1.0f) {
            __m256 c = _mm256_set1_ps(correction);
            size_t p = 0;
            for (; p + 8 <= d; p += 8) _mm256_storeu_ps(o + i * d + p, _mm256_mul_ps(_mm256_loadu_ps(o + i * d + p), c));
            for (; p < d; p++) o[i * d + p] *= correction;
        }
    }
}

int loupe_attention_flash(size_t t, size_t d, const float *q, const float *k, const float *v, float *o) {
    if (!loupe_has_avx2_fma()) {
        // The tiles are written for AVX2; without it, the naive form gives the same result.
        return loupe_attention_naive(t, d, q, k, v, o);
    }
    float *memory = malloc(loupe_attention_flash_scratch(d));
    if (!memory) return -1;
    flash_scratch s;
    s.q_panel = memory;
    s.k_panel = s.q_panel + up(BR, LOUPE_MR) * d;
    s.v_panel = s.k_panel + d * up(BC, LOUPE_NR);
    s.s_tile = s.v_panel + BC * up(d, LOUPE_NR);
    s.p_panel = s.s_tile + BR * BC;
    s.m = s.p_panel + up(BR, LOUPE_MR) * BC;
    s.l = s.m + BR;
    float scale = 1.0f / sqrtf((float)d);
    memset(o, 0, t * d * sizeof(float));
    for (size_t i0 = 0; i0 < t; i0 += BR) {
        size_t rows = t - i0 < BR ? t - i0 : BR;
        loupe_pack_a(rows, d, q + i0 * d, d, s.q_panel);
        for (size_t i = 0; i < rows; i++) {
            s.m[i] = -INFINITY;
            s.l[i] = 0;
        }
        float *o_block = o + i0 * d;
        for (size_t j0 = 0; j0 < t; j0 += BC) {
            size_t columns = t - j0 < BC ? t - j0 : BC;
            // S = Q_block · K_blockᵀ
            loupe_pack_b_transposed(d, columns, k + j0 * d, d, s.k_panel);
            memset(s.s_tile, 0, sizeof(float) * BR * BC);
            for (size_t jr = 0; jr < columns; jr += LOUPE_NR)
                for (size_t ir = 0; ir < rows; ir += LOUPE_MR)
                    loupe_microkernel_6x16(d, s.q_panel + ir * d, s.k_panel + jr * d, s.s_tile + ir * BC + jr, BC,
                                           rows - ir < LOUPE_MR ? rows - ir : LOUPE_MR,
                                           columns - jr < LOUPE_NR ? columns - jr : LOUPE_NR);
            // P = exp(S·scale − m), with m, l and the output rescaled.
            flash_block_softmax(rows, columns, s.s_tile, s.m, s.l, o_block, d, scale);
            // O_block += P · V_block
            loupe_pack_a(rows, columns, s.s_tile, BC, s.p_panel);
            loupe_pack_b(columns, d, v + j0 * d, d, s.v_panel);
            for (size_t jr = 0; jr < d; jr += LOUPE_NR)
                for (size_t ir = 0; ir < rows; ir += LOUPE_MR)
                    loupe_microkernel_6x16(columns, s.p_panel + ir * columns, s.v_panel + jr * columns,
                                           o_block + ir * d + jr, d, rows - ir < LOUPE_MR ? rows - ir : LOUPE_MR,
                                           d - jr < LOUPE_NR ? d - jr : LOUPE_NR);
        }
        for (size_t i = 0; i < rows; i++) {
            float inverse = 1.0f / s.l[i];
            for (size_t p = 0; p < d; p++) o_block[i * d + p] *= inverse;
        }
    }
    free(memory);
    return 0;
}
