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

// ---- flash-style (Dao et al. 2022, on a CPU). K is packed once as 6-row panels and V once as
// 16-column panels. For each block of BR query rows, Qᵀ is packed as 16-column panels, and K and
// V stream past in blocks of BC keys. The block's scores are computed transposed, Sᵀ = K·Qᵀ, into
// a BC × BR tile in L1, for two reasons:
// - the online softmax then runs across eight query rows at once (a key's scores for eight
//   queries are eight adjacent floats), with no horizontal reductions;
// - six adjacent queries' probabilities for one key are six adjacent floats, which is what the
//   micro-kernel reads as one step of a packed A panel. So P · V reads P in place, with a step of
//   BR instead of 6, and P is never packed.
// Each query row keeps a running maximum m and sum l, and its output row is rescaled when m
// grows. Extra memory is the packed K and V, the block's Qᵀ panels, the tile and m, l:
// O(T·d + BR·BC), never T × T.
// Against packing Kᵀ and V again for every query block (T = 2048, d = 64, one core): 17.0 ms
// with them repacked, 12.8 ms packed once, 11.8 ms with the transposed tile. ----

enum { BR = 48, BC = 96 };  // BR: a multiple of 16 and 8 (Qᵀ panels, softmax lanes); BC: of 6 (K panels)

static size_t up(size_t value, size_t step) { return (value + step - 1) / step * step; }

// ---- AVX-512: the 12 × 32 tile of internal.h over panels packed 32 columns wide (which also
// hold the AVX2 path's panels of 16). ----

enum { WIDE = LOUPE_NR512, ROWS512 = LOUPE_MR512 };

// As microkernel_rows_6x16: A read in place (row i at a + i · lda), rows past mr repeating the
// last real one, the mr × nr corner stored (`overwrite`) or added.
LOUPE_AVX512 static void microkernel_rows_12x32(size_t kc, const float *a, size_t lda, const float *b, float *c,
                                                size_t ldc, size_t mr, size_t nr, int overwrite) {
    __m512 acc[ROWS512][2];
    for (int i = 0; i < ROWS512; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    const float *rows[ROWS512];
    for (size_t i = 0; i < ROWS512; i++) rows[i] = a + (i < mr ? i : mr - 1) * lda;
    for (size_t p = 0; p < kc; p++) {
        __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
#pragma GCC unroll 12
        for (int i = 0; i < ROWS512; i++) {
            __m512 x = _mm512_set1_ps(rows[i][p]);
            acc[i][0] = _mm512_fmadd_ps(x, b0, acc[i][0]);
            acc[i][1] = _mm512_fmadd_ps(x, b1, acc[i][1]);
        }
        b += WIDE;
    }
    loupe_store_12x32(acc, c, ldc, mr, nr, overwrite);
}

// The AVX-512 form's blocks: BR512 a multiple of 32 (Qᵀ panels) and of 12 (P · V row tiles), BC512
// of 12 (K panels).
enum { BR512 = 96, BC512 = 96 };

static size_t flash_floats(size_t t, size_t d, loupe_isa isa) {
    if (isa == LOUPE_ISA_AVX512)
        return up(t, ROWS512) * d + t * up(d, WIDE) + d * BR512 + BC512 * BR512 + 2 * BR512;
    return up(t, LOUPE_MR) * d + t * up(d, LOUPE_NR) + d * BR + BC * BR + 2 * BR;
}

size_t loupe_attention_flash_scratch(size_t t, size_t d) {
    return flash_floats(t, d, loupe_usable_isa(LOUPE_ISA_AVX512)) * sizeof(float);
}

// The online softmax on the transposed tile (`columns` keys × `ld` queries), eight queries a lane
// group: each query's block maximum, its new running maximum, P = exp(S·scale − m) in place, the
// sum into l, and its output row rescaled by exp(m_old − m_new). Lanes past `rows` hold zeros
// (the tile starts zeroed and the scores never reach them) and are never read back.
LOUPE_AVX2 static void flash_softmax_transposed(size_t rows, size_t columns, float *st, size_t ld, float *m, float *l,
                                                float *o, size_t d, float scale) {
    __m256 vscale = _mm256_set1_ps(scale);
    for (size_t g = 0; g < rows; g += 8) {
        __m256 vmax = _mm256_set1_ps(-INFINITY);
        for (size_t j = 0; j < columns; j++) vmax = _mm256_max_ps(vmax, _mm256_loadu_ps(st + j * ld + g));
        __m256 m_old = _mm256_loadu_ps(m + g);
        __m256 m_new = _mm256_max_ps(m_old, _mm256_mul_ps(vmax, vscale));
        __m256 sum = _mm256_setzero_ps();
        for (size_t j = 0; j < columns; j++) {
            __m256 p = loupe_exp256(_mm256_fmsub_ps(_mm256_loadu_ps(st + j * ld + g), vscale, m_new));
            _mm256_storeu_ps(st + j * ld + g, p);
            sum = _mm256_add_ps(sum, p);
        }
        // exp(−inf − m) on the first block: the exp clamps its input, so this is ~1e-38, and l
        // and the output rows it scales are still zero.
        __m256 correction = loupe_exp256(_mm256_sub_ps(m_old, m_new));
        _mm256_storeu_ps(l + g, _mm256_fmadd_ps(_mm256_loadu_ps(l + g), correction, sum));
        _mm256_storeu_ps(m + g, m_new);
        float factors[8];
        _mm256_storeu_ps(factors, correction);
        for (size_t i = g; i < rows && i < g + 8; i++) {
            float factor = factors[i - g];
            if (factor == 1.0f) continue;
            __m256 c = _mm256_set1_ps(factor);
            size_t p = 0;
            for (; p + 8 <= d; p += 8) _mm256_storeu_ps(o + i * d + p, _mm256_mul_ps(_mm256_loadu_ps(o + i * d + p), c));
            for (; p < d; p++) o[i * d + p] *= factor;
        }
    }
}

// e^x for 16 lanes: loupe_exp256's range reduction and polynomial on zmm registers. With
// `precise` 0 (for weights rounded to bf16 next; they are ≤ 0 after the max is taken off, so only
// the lower clamp is kept), ln 2 in one part and a degree-4 polynomial: relative error under 4e-5,
// a hundredth of bf16's half step of 2e-3.
LOUPE_AVX512 static inline __attribute__((always_inline)) __m512 exp512_form(__m512 x, int precise) {
    x = _mm512_max_ps(x, _mm512_set1_ps(-87.3f));
    if (precise) x = _mm512_min_ps(x, _mm512_set1_ps(88.3f));
    const __m512 shift = _mm512_set1_ps(12582912.0f);
    __m512 shifted = _mm512_fmadd_ps(x, _mm512_set1_ps(1.44269504f), shift);
    __m512 n = _mm512_sub_ps(shifted, shift);
    __m512 r, p;
    if (precise) {
        r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.69314575f), x);
        r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.4286068e-6f), r);
        p = _mm512_set1_ps(1.0f / 720);
        p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
        p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
    } else {
        r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.69314718f), x);
        p = _mm512_set1_ps(1.0f / 24);
    }
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    __m512i e = _mm512_slli_epi32(
        _mm512_add_epi32(_mm512_castps_si512(shifted), _mm512_set1_epi32(127 - 0x4B400000)), 23);
    return _mm512_mul_ps(p, _mm512_castsi512_ps(e));
}

LOUPE_AVX512 static inline __m512 exp512(__m512 x) { return exp512_form(x, 1); }

// flash_softmax_transposed sixteen queries a lane group (`ld` a multiple of 16).
LOUPE_AVX512 static void flash_softmax_transposed512(size_t rows, size_t columns, float *st, size_t ld, float *m,
                                                     float *l, float *o, size_t d, float scale) {
    __m512 vscale = _mm512_set1_ps(scale);
    for (size_t g = 0; g < rows; g += 16) {
        __m512 vmax = _mm512_set1_ps(-INFINITY);
        for (size_t j = 0; j < columns; j++) vmax = _mm512_max_ps(vmax, _mm512_loadu_ps(st + j * ld + g));
        __m512 m_old = _mm512_loadu_ps(m + g);
        __m512 m_new = _mm512_max_ps(m_old, _mm512_mul_ps(vmax, vscale));
        __m512 sum = _mm512_setzero_ps();
        for (size_t j = 0; j < columns; j++) {
            __m512 p = exp512(_mm512_fmsub_ps(_mm512_loadu_ps(st + j * ld + g), vscale, m_new));
            _mm512_storeu_ps(st + j * ld + g, p);
            sum = _mm512_add_ps(sum, p);
        }
        __m512 correction = exp512(_mm512_sub_ps(m_old, m_new));
        _mm512_storeu_ps(l + g, _mm512_fmadd_ps(_mm512_loadu_ps(l + g), correction, sum));
        _mm512_storeu_ps(m + g, m_new);
        float factors[16];
        _mm512_storeu_ps(factors, correction);
        for (size_t i = g; i < rows && i < g + 16; i++) {
            float factor = factors[i - g];
            if (factor == 1.0f) continue;
            __m512 c = _mm512_set1_ps(factor);
            size_t p = 0;
            for (; p + 16 <= d; p += 16) _mm512_storeu_ps(o + i * d + p, _mm512_mul_ps(_mm512_loadu_ps(o + i * d + p), c));
            for (; p < d; p++) o[i * d + p] *= factor;
        }
    }
}

// The flash loops once, for either tile: blocks of `block_rows` queries × `block_keys` keys, a
// `tile_rows` × `width` register tile (`tile`, A at a step), K packed `tile_rows` tall by `pack_k`,
// V and each block's Qᵀ `width` wide by `pack_v` and `pack_qt`, and the online softmax on the
// transposed tile. Inlined into each form, so every call is direct and every size constant.
typedef void (*pack_fn)(size_t, size_t, const float *, size_t, float *);
typedef void (*step_tile_fn)(size_t, const float *, size_t, const float *, float *, size_t, size_t, size_t, int);
typedef void (*online_softmax_fn)(size_t, size_t, float *, size_t, float *, float *, float *, size_t, float);

static inline __attribute__((always_inline)) void flash_body(
    size_t t, size_t d, const float *q, const float *k, const float *v, float *o, float *memory, size_t block_rows,
    size_t block_keys, size_t tile_rows, size_t width, pack_fn pack_k, pack_fn pack_v, pack_fn pack_qt,
    step_tile_fn tile, online_softmax_fn softmax) {
    float *k_panel = memory;                                // K: T × d in panels tile_rows tall
    float *v_panel = k_panel + up(t, tile_rows) * d;        // V: T × d in panels `width` wide
    float *q_panel = v_panel + t * up(d, width);            // the block's Qᵀ: d × block_rows, `width` wide
    float *st = q_panel + d * block_rows;                   // Sᵀ, then Pᵀ: block_keys × block_rows
    float *m = st + block_keys * block_rows, *l = m + block_rows;  // each query's running maximum and sum
    pack_k(t, d, k, d, k_panel);
    pack_v(t, d, v, d, v_panel);
    float scale = 1.0f / sqrtf((float)d);
    memset(o, 0, t * d * sizeof(float));
    for (size_t i0 = 0; i0 < t; i0 += block_rows) {
        size_t rows = t - i0 < block_rows ? t - i0 : block_rows;
        pack_qt(d, rows, q + i0 * d, d, q_panel);
        for (size_t i = 0; i < block_rows; i++) {
            m[i] = -INFINITY;
            l[i] = 0;
        }
        float *o_block = o + i0 * d;
        for (size_t j0 = 0; j0 < t; j0 += block_keys) {
            size_t columns = t - j0 < block_keys ? t - j0 : block_keys;
            // Sᵀ = K_block · Q_blockᵀ, stored over the tile.
            for (size_t jr = 0; jr < columns; jr += tile_rows)
                for (size_t ic = 0; ic < rows; ic += width)
                    tile(d, k_panel + (j0 + jr) * d, tile_rows, q_panel + ic * d, st + jr * block_rows + ic,
                         block_rows, columns - jr < tile_rows ? columns - jr : tile_rows,
                         rows - ic < width ? rows - ic : width, 1);
            softmax(rows, columns, st, block_rows, m, l, o_block, d, scale);
            // O_block += P · V_block, P read in place from the tile: tile_rows queries' probabilities
            // for key j are st[j · block_rows + ir …].
            for (size_t jc = 0; jc < d; jc += width)
                for (size_t ir = 0; ir < rows; ir += tile_rows)
                    tile(columns, st + ir, block_rows, v_panel + jc * t + j0 * width, o_block + ir * d + jc, d,
                         rows - ir < tile_rows ? rows - ir : tile_rows, d - jc < width ? d - jc : width, 0);
        }
        for (size_t i = 0; i < rows; i++) {
            float inverse = 1.0f / l[i];
            for (size_t p = 0; p < d; p++) o_block[i * d + p] *= inverse;
        }
    }
}

LOUPE_AVX2 static void flash_avx2(size_t t, size_t d, const float *q, const float *k, const float *v, float *o,
                                  float *memory) {
    flash_body(t, d, q, k, v, o, memory, BR, BC, LOUPE_MR, LOUPE_NR, loupe_pack_a, loupe_pack_b,
               loupe_pack_b_transposed, loupe_tile_6x16, flash_softmax_transposed);
}

// On the 12 × 32 tile: K in 12-row panels, V and each block's Qᵀ in 32-column panels, blocks of
// 96 queries × 96 keys, the softmax sixteen queries a lane group.
LOUPE_AVX512 static void flash_avx512(size_t t, size_t d, const float *q, const float *k, const float *v, float *o,
                                      float *memory) {
    flash_body(t, d, q, k, v, o, memory, BR512, BC512, ROWS512, WIDE, loupe_pack_a_tall, loupe_pack_b_wide,
               loupe_pack_b_transposed_wide, loupe_tile_12x32, flash_softmax_transposed512);
}

int loupe_attention_flash_isa(size_t t, size_t d, const float *q, const float *k, const float *v, float *o,
                              loupe_isa widest) {
    loupe_isa isa = loupe_usable_isa(widest);
    // The tiles are written for AVX2 and AVX-512; without either, the naive form gives the same result.
    if (isa == LOUPE_ISA_PORTABLE) return loupe_attention_naive(t, d, q, k, v, o);
    float *memory = calloc(flash_floats(t, d, isa), sizeof(float));
    if (!memory) return -1;
    if (isa == LOUPE_ISA_AVX512) {
        flash_avx512(t, d, q, k, v, o, memory);
    } else {
        flash_avx2(t, d, q, k, v, o, memory);
    }
    free(memory);
    return 0;
}

int loupe_attention_flash(size_t t, size_t d, const float *q, const float *k, const float *v, float *o) {
    return loupe_attention_flash_isa(t, d, q, k, v, o, LOUPE_ISA_AVX512);
}

// ---- one sequence of a BERT layer, every head at once: Q, K and V are the `[T, heads · d]`
// outputs of the projections (a head is a column block, row stride `stride`), and only the
// first `length` rows are real. Each head's Kᵀ and V are packed once; for each block of BR query
// rows the BR × length scores are a GEMM into a tile that stays in L2, softmax runs on the tile
// in place (exp vectorised), and P · V accumulates straight into the head's columns of O. With
// T ≤ 512 a full row of scores fits, so no online rescaling is needed. ----

typedef struct {
    float *k_panel, *v_panel, *s_tile;
} heads_scratch;

// The 6 × 16 register tile with A read in place, row-major (row i of the 6 at a + i · lda):
// six broadcasts from six rows instead of one packed panel. Q and P are each used by one tile
// row only, so packing them would cost a transposing copy for no reuse. `overwrite` stores the
// tile instead of adding it (the scores), sparing a pass that zeroes them.
LOUPE_AVX2 static void microkernel_rows_6x16(size_t kc, const float *a, size_t lda, const float *b, float *c,
                                             size_t ldc, size_t mr, size_t nr, int overwrite) {
    __m256 acc[LOUPE_MR][2];
    for (int i = 0; i < LOUPE_MR; i++) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
    const float *rows[LOUPE_MR];
    // Rows past mr repeat the last real one: their sums are computed and thrown away.
    for (size_t i = 0; i < LOUPE_MR; i++) rows[i] = a + (i < mr ? i : mr - 1) * lda;
    for (size_t p = 0; p < kc; p++) {
        __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
        for (int i = 0; i < LOUPE_MR; i++) {
            __m256 x = _mm256_broadcast_ss(rows[i] + p);
            acc[i][0] = _mm256_fmadd_ps(x, b0, acc[i][0]);
            acc[i][1] = _mm256_fmadd_ps(x, b1, acc[i][1]);
        }
        b += LOUPE_NR;
    }
    if (nr == LOUPE_NR) {
        for (size_t i = 0; i < mr; i++) {
            float *row = c + i * ldc;
            if (overwrite) {
                _mm256_storeu_ps(row, acc[i][0]);
                _mm256_storeu_ps(row + 8, acc[i][1]);
            } else {
                _mm256_storeu_ps(row, _mm256_add_ps(_mm256_loadu_ps(row), acc[i][0]));
                _mm256_storeu_ps(row + 8, _mm256_add_ps(_mm256_loadu_ps(row + 8), acc[i][1]));
            }
        }
        return;
    }
    float tile[LOUPE_NR];
    for (size_t i = 0; i < mr; i++) {
        _mm256_storeu_ps(tile, acc[i][0]);
        _mm256_storeu_ps(tile + 8, acc[i][1]);
        for (size_t j = 0; j < nr; j++) c[i * ldc + j] = overwrite ? tile[j] : c[i * ldc + j] + tile[j];
    }
}

static size_t heads_floats(size_t length, size_t d) {
    size_t columns = up(length, WIDE);
    return d * columns + length * up(d, WIDE) + BR * columns;
}

LOUPE_AVX2 static void heads_softmax(size_t rows, size_t length, size_t ld, float *s, float scale) {
    __m256 vscale = _mm256_set1_ps(scale);
    for (size_t i = 0; i < rows; i++) {
        float *row = s + i * ld;
        size_t j = 0;
        __m256 vmax = _mm256_set1_ps(-INFINITY);
        for (; j + 8 <= length; j += 8) vmax = _mm256_max_ps(vmax, _mm256_loadu_ps(row + j));
        float maximum = loupe_hmax256(vmax);
        for (; j < length; j++) maximum = row[j] > maximum ? row[j] : maximum;
        // exp(scale · s − scale · max): the scale is folded into one fused multiply-subtract.
        __m256 shift = _mm256_set1_ps(maximum * scale), vsum = _mm256_setzero_ps();
        for (j = 0; j + 8 <= length; j += 8) {
            __m256 e = loupe_exp256(_mm256_fmsub_ps(_mm256_loadu_ps(row + j), vscale, shift));
            _mm256_storeu_ps(row + j, e);
            vsum = _mm256_add_ps(vsum, e);
        }
        float sum = loupe_hsum256(vsum);
        for (; j < length; j++) sum += (row[j] = expf(row[j] * scale - maximum * scale));
        __m256 inverse = _mm256_set1_ps(1.0f / sum);
        for (j = 0; j + 8 <= length; j += 8) _mm256_storeu_ps(row + j, _mm256_mul_ps(_mm256_loadu_ps(row + j), inverse));
        for (; j < length; j++) row[j] *= 1.0f / sum;
    }
}

// The heads' loops once, for either tile: `rows_step` × `width` is the register tile, `pack_kt` and
// `pack_v` pack Kᵀ and V in panels `width` wide, `tile` is the micro-kernel reading A in place and
// `softmax` the row softmax. Inlined into each form, so every call is direct and every size constant.
typedef void (*rows_tile_fn)(size_t, const float *, size_t, const float *, float *, size_t, size_t, size_t, int);
typedef void (*softmax_fn)(size_t, size_t, size_t, float *, float);

static inline __attribute__((always_inline)) void attention_heads_body(
    size_t length, size_t heads, size_t d, size_t stride, const float *q, const float *k, const float *v, float *o,
    size_t o_stride, float *probabilities, heads_scratch s, size_t rows_step, size_t width, pack_fn pack_kt,
    pack_fn pack_v, rows_tile_fn tile, softmax_fn softmax) {
    float scale = 1.0f / sqrtf((float)d);
    size_t columns = up(length, width);
    for (size_t h = 0; h < heads; h++) {
        const float *qh = q + h * d, *kh = k + h * d, *vh = v + h * d;
        float *oh = o + h * d;
        pack_kt(d, length, kh, stride, s.k_panel);
        pack_v(length, d, vh, stride, s.v_panel);
        for (size_t i0 = 0; i0 < length; i0 += BR) {
            size_t rows = length - i0 < BR ? length - i0 : BR;
            for (size_t jr = 0; jr < length; jr += width)
                for (size_t ir = 0; ir < rows; ir += rows_step)
                    tile(d, qh + (i0 + ir) * stride, stride, s.k_panel + jr * d, s.s_tile + ir * columns + jr, columns,
                         rows - ir < rows_step ? rows - ir : rows_step, length - jr < width ? length - jr : width, 1);
            softmax(rows, length, columns, s.s_tile, scale);
            if (probabilities)
                for (size_t i = 0; i < rows; i++)
                    memcpy(probabilities + (h * length + i0 + i) * length, s.s_tile + i * columns,
                           length * sizeof(float));
            for (size_t jr = 0; jr < d; jr += width)
                for (size_t ir = 0; ir < rows; ir += rows_step)
                    tile(length, s.s_tile + ir * columns, columns, s.v_panel + jr * length,
                         oh + (i0 + ir) * o_stride + jr, o_stride, rows - ir < rows_step ? rows - ir : rows_step,
                         d - jr < width ? d - jr : width, 0);
        }
    }
}

LOUPE_AVX2 static void attention_heads_avx2(size_t length, size_t heads, size_t d, size_t stride, const float *q,
                                            const float *k, const float *v, float *o, size_t o_stride,
                                            float *probabilities, heads_scratch s) {
    attention_heads_body(length, heads, d, stride, q, k, v, o, o_stride, probabilities, s, LOUPE_MR, LOUPE_NR,
                         loupe_pack_b_transposed, loupe_pack_b, microkernel_rows_6x16, heads_softmax);
}

// ---- The same on AVX-512: a 12 × 32 tile of 24 zmm accumulators (BR = 48 is four of its row
// blocks; MiniLM's head size of 32 is one panel of P · V), the panels packed 32 columns wide. ----

// heads_softmax sixteen lanes at a time; the row's tail past a multiple of 16 as there.
LOUPE_AVX512 static void heads_softmax512(size_t rows, size_t length, size_t ld, float *s, float scale) {
    __m512 vscale = _mm512_set1_ps(scale);
    for (size_t i = 0; i < rows; i++) {
        float *row = s + i * ld;
        size_t j = 0;
        __m512 vmax = _mm512_set1_ps(-INFINITY);
        for (; j + 16 <= length; j += 16) vmax = _mm512_max_ps(vmax, _mm512_loadu_ps(row + j));
        float maximum = _mm512_reduce_max_ps(vmax);
        for (; j < length; j++) maximum = row[j] > maximum ? row[j] : maximum;
        __m512 shift = _mm512_set1_ps(maximum * scale), vsum = _mm512_setzero_ps();
        for (j = 0; j + 16 <= length; j += 16) {
            __m512 e = exp512(_mm512_fmsub_ps(_mm512_loadu_ps(row + j), vscale, shift));
            _mm512_storeu_ps(row + j, e);
            vsum = _mm512_add_ps(vsum, e);
        }
        float sum = _mm512_reduce_add_ps(vsum);
        for (; j < length; j++) sum += (row[j] = expf(row[j] * scale - maximum * scale));
        __m512 inverse = _mm512_set1_ps(1.0f / sum);
        for (j = 0; j + 16 <= length; j += 16) _mm512_storeu_ps(row + j, _mm512_mul_ps(_mm512_loadu_ps(row + j), inverse));
        for (; j < length; j++) row[j] *= 1.0f / sum;
    }
}

LOUPE_AVX512 static void attention_heads_avx512(size_t length, size_t heads, size_t d, size_t stride, const float *q,
                                                const float *k, const float *v, float *o, size_t o_stride,
                                                float *probabilities, heads_scratch s) {
    attention_heads_body(length, heads, d, stride, q, k, v, o, o_stride, probabilities, s, ROWS512, WIDE,
                         loupe_pack_b_transposed_wide, loupe_pack_b_wide, microkernel_rows_12x32, heads_softmax512);
}

// Without AVX2: scores, softmax and P · V row by row in plain C (the same arithmetic).
static void attention_heads_baseline(size_t length, size_t heads, size_t d, size_t stride, const float *q,
                                     const float *k, const float *v, float *o, size_t o_stride, float *probabilities,
                                     float *row) {
    float scale = 1.0f / sqrtf((float)d);
    for (size_t h = 0; h < heads; h++)
        for (size_t i = 0; i < length; i++) {
            const float *qi = q + i * stride + h * d;
            for (size_t j = 0; j < length; j++) {
                const float *kj = k + j * stride + h * d;
                float dot = 0;
                for (size_t p = 0; p < d; p++) dot += qi[p] * kj[p];
                row[j] = dot * scale;
            }
            loupe_softmax_three_pass(row, row, 1, length);
            if (probabilities) memcpy(probabilities + (h * length + i) * length, row, length * sizeof(float));
            float *oi = o + i * o_stride + h * d;
            for (size_t j = 0; j < length; j++)
                for (size_t p = 0; p < d; p++) oi[p] += row[j] * v[j * stride + h * d + p];
        }
}

int loupe_attention_heads_isa(size_t length, size_t heads, size_t d, size_t stride, const float *q, const float *k,
                              const float *v, float *o, size_t o_stride, float *probabilities, loupe_isa widest) {
    if (length == 0) return 0;
    loupe_isa isa = loupe_usable_isa(widest);
    if (isa == LOUPE_ISA_PORTABLE) {
        float *row = malloc(length * sizeof(float));
        if (!row) return -1;
        attention_heads_baseline(length, heads, d, stride, q, k, v, o, o_stride, probabilities, row);
        free(row);
        return 0;
    }
    float *memory = malloc(heads_floats(length, d) * sizeof(float));
    if (!memory) return -1;
    size_t columns = up(length, WIDE);
    heads_scratch s;
    s.k_panel = memory;
    s.v_panel = s.k_panel + d * columns;
    s.s_tile = s.v_panel + length * up(d, WIDE);
    if (isa == LOUPE_ISA_AVX512) {
        attention_heads_avx512(length, heads, d, stride, q, k, v, o, o_stride, probabilities, s);
    } else {
        attention_heads_avx2(length, heads, d, stride, q, k, v, o, o_stride, probabilities, s);
    }
    free(memory);
    return 0;
}

int loupe_attention_heads(size_t length, size_t heads, size_t d, size_t stride, const float *q, const float *k,
                          const float *v, float *o, size_t o_stride, float *probabilities) {
    return loupe_attention_heads_isa(length, heads, d, stride, q, k, v, o, o_stride, probabilities,
                                     LOUPE_ISA_AVX512);
}

// ---- The heads in bf16 (the int8 encoder's attention). Q, K, V and P are rounded to bf16 (8 bits
// of mantissa, as the int8 layers around it keep about 8 bits); the scores, the softmax and the
// sums stay fp32. Two forms share the packing and the softmax:
// - AMX tiles: with a head of 32, one tdpbf16ps multiplies 16 queries by 16 keys over the whole
//   head (16 × 16 × 32 multiply-adds into fp32), and P · V takes 32 keys a step into two
//   16-column tiles. Tiles: 0–3 scores (four key blocks) or the two halves of O; 4 the A operand
//   (Q, then P); 5–7 B operands.
// - AVX-512 BF16 registers (Zen 4, Cooper Lake and later): vdpbf16ps multiplies a pair of bf16 in
//   each of 16 lanes and adds both products into fp32, twice the multiply-adds of an fp32 FMA.
//   The packed tiles serve as they are: a row of the packed K (16 keys × one dimension pair) with
//   a query's pair broadcast gives 16 partial scores, a row of the packed V (16 columns × a pair
//   of keys) with a pair of weights broadcast 16 partial outputs. ----

#define LOUPE_BF16 __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx512bf16,fma")))
#define LOUPE_AMX_BF16 __attribute__((target("amx-tile,amx-bf16,avx512f,avx512vl,avx512dq,avx512bw,avx512bf16,fma")))

static int has_avx512_bf16(void) {
    static int known = -1;
    if (known < 0) known = loupe_has_avx512() && __builtin_cpu_supports("avx512bf16");
    return known;
}

static int has_amx_bf16(void) {
    static int known = -1;
    if (known < 0) known = has_avx512_bf16() && __builtin_cpu_supports("amx-bf16") && loupe_amx_permitted();
    return known;
}

enum { BF_HEAD = 32 };

loupe_attention_form loupe_attention_usable_form(size_t d, loupe_attention_form widest) {
    if (d != BF_HEAD) return LOUPE_ATTENTION_FP32;
    if (widest >= LOUPE_ATTENTION_BF16_AMX && has_amx_bf16()) return LOUPE_ATTENTION_BF16_AMX;
    if (widest >= LOUPE_ATTENTION_BF16_AVX512 && has_avx512_bf16()) return LOUPE_ATTENTION_BF16_AVX512;
    return LOUPE_ATTENTION_FP32;
}

static _Atomic loupe_attention_form attention_widest = LOUPE_ATTENTION_BF16_AMX;

void loupe_attention_set_widest(loupe_attention_form widest) { attention_widest = widest; }

loupe_attention_form loupe_attention_widest(void) { return loupe_attention_usable_form(BF_HEAD, attention_widest); }

// 32 floats (fewer when `count` < 32, the rest zero) as 32 bf16, rounded to nearest even.
LOUPE_BF16 static inline __m512i bf16_32(const float *x, size_t count) {
    __mmask16 low = count >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << count) - 1);
    __mmask16 high = count >= 32 ? (__mmask16)0xFFFF : count > 16 ? (__mmask16)((1u << (count - 16)) - 1) : 0;
    __m512 lo = _mm512_maskz_loadu_ps(low, x), hi = _mm512_maskz_loadu_ps(high, x + 16);
    return (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
}

// Q's rows as bf16 (row i at qb + 32 i; rows past `length` up to a multiple of 16 zero). K as
// B tiles for Q · Kᵀ: block b of 16 keys is 16 rows (dimension pairs) of 16 keys × 2 bf16, i.e.
// the 16 × 16 transpose of the keys' dimension pairs. V as B tiles for P · V: block b of 32 keys,
// half c of the columns, is 16 rows (key pairs) of 16 columns × 2 bf16, two keys interleaved.
LOUPE_BF16 static void bf16_pack_head(size_t length, size_t stride, const float *q, const float *k, const float *v,
                                      uint16_t *qb, uint32_t *kb, uint16_t *vb) {
    size_t rows16 = up(length, 16), rows32 = up(length, 32);
    for (size_t i = 0; i < rows16; i++)
        _mm512_storeu_si512(qb + i * BF_HEAD, i < length ? bf16_32(q + i * stride, BF_HEAD) : _mm512_setzero_si512());
    for (size_t j0 = 0; j0 < rows16; j0 += 16) {
        uint32_t pairs[16][16];
        for (size_t j = 0; j < 16; j++)
            _mm512_storeu_si512(pairs[j], j0 + j < length ? bf16_32(k + (j0 + j) * stride, BF_HEAD)
                                                          : _mm512_setzero_si512());
        uint32_t *block = kb + j0 * 16;
        for (size_t r = 0; r < 16; r++)
            for (size_t j = 0; j < 16; j++) block[r * 16 + j] = pairs[j][r];
    }
    // Output lane 2t holds key 2r's column t and lane 2t + 1 key 2r + 1's (16 + t for the second half).
    __m512i first, second;
    {
        uint16_t lanes[2][32];
        for (int t = 0; t < 16; t++) {
            lanes[0][2 * t] = (uint16_t)t;
            lanes[0][2 * t + 1] = (uint16_t)(32 + t);
            lanes[1][2 * t] = (uint16_t)(16 + t);
            lanes[1][2 * t + 1] = (uint16_t)(48 + t);
        }
        first = _mm512_loadu_si512(lanes[0]);
        second = _mm512_loadu_si512(lanes[1]);
    }
    for (size_t j0 = 0; j0 < rows32; j0 += 32) {
        uint16_t *block = vb + j0 * BF_HEAD;
        for (size_t r = 0; r < 16; r++) {
            size_t a = j0 + 2 * r, b = a + 1;
            __m512i x = a < length ? bf16_32(v + a * stride, BF_HEAD) : _mm512_setzero_si512();
            __m512i y = b < length ? bf16_32(v + b * stride, BF_HEAD) : _mm512_setzero_si512();
            _mm512_storeu_si512(block + r * 32, _mm512_permutex2var_epi16(x, first, y));
            _mm512_storeu_si512(block + 512 + r * 32, _mm512_permutex2var_epi16(x, second, y));
        }
    }
}

// The softmax of 16 rows of scores (`length` real columns, row stride `ls`), written as bf16
// weights into `pb` (row stride `rows32`, zero past `length`): the maximum (`maxima`, one a row,
// when the scores' pass took it, else a pass of its own), then exp(scale · s − scale · max) kept in
// place and summed (exp512_form's bf16 form), then the division folded into the rounding to bf16.
LOUPE_BF16 static void bf16_softmax(size_t length, float scale, float *s, size_t ls, uint16_t *pb, size_t rows32,
                                    const float *maxima) {
    const __m512 vscale = _mm512_set1_ps(scale);
    for (size_t i = 0; i < 16; i++) {
        float *row = s + i * ls;
        float maximum;
        if (maxima) {
            maximum = maxima[i];
        } else {
            __m512 vmax = _mm512_set1_ps(-INFINITY);
            for (size_t j = 0; j < length; j += 16) {
                __mmask16 mask = length - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (length - j)) - 1);
                vmax = _mm512_mask_max_ps(vmax, mask, vmax, _mm512_maskz_loadu_ps(mask, row + j));
            }
            maximum = _mm512_reduce_max_ps(vmax);
        }
        __m512 shift = _mm512_set1_ps(maximum * scale), vsum = _mm512_setzero_ps();
        for (size_t j = 0; j < length; j += 16) {
            __mmask16 mask = length - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (length - j)) - 1);
            __m512 e = exp512_form(_mm512_fmsub_ps(_mm512_maskz_loadu_ps(mask, row + j), vscale, shift), 0);
            e = _mm512_maskz_mov_ps(mask, e);
            _mm512_storeu_ps(row + j, e);
            vsum = _mm512_add_ps(vsum, e);
        }
        __m512 inverse = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(vsum));
        for (size_t p = 0; p < rows32; p += 32) {
            __m512 lo = p < length ? _mm512_mul_ps(_mm512_loadu_ps(row + p), inverse) : _mm512_setzero_ps();
            __m512 hi = p + 16 < length ? _mm512_mul_ps(_mm512_loadu_ps(row + p + 16), inverse) : _mm512_setzero_ps();
            _mm512_storeu_si512(pb + i * rows32 + p, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
        }
    }
}

// Sixteen query rows from i0 of one head on AMX tiles: scores into `s` (16 × `ls` floats),
// softmax, P in bf16 into `pb` (16 × rows32), and P · V added into O.
LOUPE_AMX_BF16 static void bf16_query_block(size_t length, size_t i0, float scale, const uint16_t *qb,
                                            const uint32_t *kb, const uint16_t *vb, float *s, size_t ls,
                                            uint16_t *pb, float *o, size_t o_stride) {
    size_t blocks = up(length, 16) / 16, rows32 = up(length, 32);
    _tile_loadd(4, qb + i0 * BF_HEAD, 64);
    size_t b = 0;
    for (; b + 4 <= blocks; b += 4) {
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
        _tile_loadd(5, kb + b * 256, 64);
        _tile_dpbf16ps(0, 4, 5);
        _tile_loadd(6, kb + (b + 1) * 256, 64);
        _tile_dpbf16ps(1, 4, 6);
        _tile_loadd(7, kb + (b + 2) * 256, 64);
        _tile_dpbf16ps(2, 4, 7);
        _tile_loadd(5, kb + (b + 3) * 256, 64);
        _tile_dpbf16ps(3, 4, 5);
        _tile_stored(0, s + b * 16, ls * 4);
        _tile_stored(1, s + (b + 1) * 16, ls * 4);
        _tile_stored(2, s + (b + 2) * 16, ls * 4);
        _tile_stored(3, s + (b + 3) * 16, ls * 4);
    }
    for (; b < blocks; b++) {
        _tile_zero(0);
        _tile_loadd(5, kb + b * 256, 64);
        _tile_dpbf16ps(0, 4, 5);
        _tile_stored(0, s + b * 16, ls * 4);
    }
    bf16_softmax(length, scale, s, ls, pb, rows32, NULL);
    _tile_zero(0);
    _tile_zero(1);
    for (size_t j0 = 0; j0 < rows32; j0 += 32) {
        _tile_loadd(4, pb + j0, rows32 * 2);
        _tile_loadd(5, vb + j0 * BF_HEAD, 64);
        _tile_dpbf16ps(0, 4, 5);
        _tile_loadd(6, vb + j0 * BF_HEAD + 512, 64);
        _tile_dpbf16ps(1, 4, 6);
    }
    float out[16 * BF_HEAD];
    _tile_stored(0, out, BF_HEAD * 4);
    _tile_stored(1, out + 16, BF_HEAD * 4);
    size_t rows = length - i0 < 16 ? length - i0 : 16;
    for (size_t i = 0; i < rows; i++) {
        float *row = o + (i0 + i) * o_stride;
        _mm512_storeu_ps(row, _mm512_add_ps(_mm512_loadu_ps(row), _mm512_loadu_ps(out + i * BF_HEAD)));
        _mm512_storeu_ps(row + 16, _mm512_add_ps(_mm512_loadu_ps(row + 16), _mm512_loadu_ps(out + i * BF_HEAD + 16)));
    }
}

// The same sixteen query rows on AVX-512 BF16 registers, a register tile of 8 queries × 32 keys
// (or columns of O): 16 accumulators, two B rows and the broadcast pair. Each row's maximum is
// taken from the accumulators as they are stored, sparing the softmax its first pass (6–8% of the
// kernel at 128 and 256 tokens, alternating in one process).
LOUPE_BF16 static inline __attribute__((always_inline)) __m512bh bf16_pair(const uint32_t *pair) {
    return (__m512bh)_mm512_set1_epi32((int)*pair);
}

LOUPE_BF16 static void bf16_query_block_avx512(size_t length, size_t i0, float scale, const uint16_t *qb,
                                               const uint32_t *kb, const uint16_t *vb, float *s, size_t ls,
                                               uint16_t *pb, float *o, size_t o_stride) {
    enum { PAIRS = BF_HEAD / 2 };
    size_t blocks = up(length, 16) / 16, rows32 = up(length, 32);
    float maxima[16];
    for (size_t top = 0; top < 16; top += 8) {
        const uint32_t *qt = (const uint32_t *)qb + (i0 + top) * PAIRS;
        __m512 vmax[8];
        for (int i = 0; i < 8; i++) vmax[i] = _mm512_set1_ps(-INFINITY);
        for (size_t b = 0; b < blocks; b += 2) {
            // An odd last block multiplies its keys twice and stores them once (one tile shape).
            int two = b + 1 < blocks;
            const uint32_t *k0 = kb + b * 256, *k1 = two ? k0 + 256 : k0;
            __m512 acc[8][2];
            for (int i = 0; i < 8; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
            for (int r = 0; r < PAIRS; r++) {
                __m512bh b0 = (__m512bh)_mm512_loadu_si512(k0 + r * 16), b1 = (__m512bh)_mm512_loadu_si512(k1 + r * 16);
                for (int i = 0; i < 8; i++) {
                    __m512bh a = bf16_pair(qt + i * PAIRS + r);
                    acc[i][0] = _mm512_dpbf16_ps(acc[i][0], a, b0);
                    acc[i][1] = _mm512_dpbf16_ps(acc[i][1], a, b1);
                }
            }
            // The row maxima over the real keys only (a padded key's score is 0).
            size_t real = length - b * 16;
            __mmask16 m0 = real >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << real) - 1);
            __mmask16 m1 = !two || real <= 16 ? 0 : real >= 32 ? (__mmask16)0xFFFF : (__mmask16)((1u << (real - 16)) - 1);
            for (int i = 0; i < 8; i++) {
                _mm512_storeu_ps(s + (top + i) * ls + b * 16, acc[i][0]);
                if (two) _mm512_storeu_ps(s + (top + i) * ls + b * 16 + 16, acc[i][1]);
                vmax[i] = _mm512_mask_max_ps(vmax[i], m0, vmax[i], acc[i][0]);
                vmax[i] = _mm512_mask_max_ps(vmax[i], m1, vmax[i], acc[i][1]);
            }
        }
        for (int i = 0; i < 8; i++) maxima[top + i] = _mm512_reduce_max_ps(vmax[i]);
    }
    bf16_softmax(length, scale, s, ls, pb, rows32, maxima);
    size_t rows = length - i0 < 16 ? length - i0 : 16;
    for (size_t top = 0; top < rows; top += 8) {
        const uint32_t *pt = (const uint32_t *)pb + top * (rows32 / 2);
        __m512 acc[8][2];
        for (int i = 0; i < 8; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
        for (size_t j0 = 0; j0 < rows32; j0 += 32) {
            const uint16_t *block = vb + j0 * BF_HEAD;
            for (int r = 0; r < 16; r++) {
                __m512bh b0 = (__m512bh)_mm512_loadu_si512(block + r * 32);
                __m512bh b1 = (__m512bh)_mm512_loadu_si512(block + 512 + r * 32);
                for (int i = 0; i < 8; i++) {
                    __m512bh a = bf16_pair(pt + i * (rows32 / 2) + j0 / 2 + r);
                    acc[i][0] = _mm512_dpbf16_ps(acc[i][0], a, b0);
                    acc[i][1] = _mm512_dpbf16_ps(acc[i][1], a, b1);
                }
            }
        }
        size_t count = rows - top < 8 ? rows - top : 8;
        for (size_t i = 0; i < count; i++) {
            float *row = o + (i0 + top + i) * o_stride;
            _mm512_storeu_ps(row, _mm512_add_ps(_mm512_loadu_ps(row), acc[i][0]));
            _mm512_storeu_ps(row + 16, _mm512_add_ps(_mm512_loadu_ps(row + 16), acc[i][1]));
        }
    }
}

// The heads' loop once for both forms (the scratch laid out as `loupe_attention_heads_bf16`
// sizes it): each head packed, then its query blocks of 16.
typedef void (*bf16_block_fn)(size_t, size_t, float, const uint16_t *, const uint32_t *, const uint16_t *, float *,
                              size_t, uint16_t *, float *, size_t);

static inline __attribute__((always_inline)) void bf16_heads_body(size_t length, size_t heads, size_t stride,
                                                                  const float *q, const float *k, const float *v,
                                                                  float *o, size_t o_stride, void *memory,
                                                                  bf16_block_fn block) {
    size_t rows16 = up(length, 16), rows32 = up(length, 32), ls = rows32;
    uint16_t *qb = memory;
    uint32_t *kb = (uint32_t *)(qb + rows16 * BF_HEAD);
    uint16_t *vb = (uint16_t *)(kb + rows16 * 16);
    uint16_t *pb = vb + rows32 * BF_HEAD;
    float *s = (float *)(pb + 16 * rows32);
    float scale = 1.0f / sqrtf((float)BF_HEAD);
    for (size_t h = 0; h < heads; h++) {
        bf16_pack_head(length, stride, q + h * BF_HEAD, k + h * BF_HEAD, v + h * BF_HEAD, qb, kb, vb);
        for (size_t i0 = 0; i0 < length; i0 += 16)
            block(length, i0, scale, qb, kb, vb, s, ls, pb, o + h * BF_HEAD, o_stride);
    }
}

LOUPE_AMX_BF16 static void attention_heads_bf16_amx(size_t length, size_t heads, size_t stride, const float *q,
                                                    const float *k, const float *v, float *o, size_t o_stride,
                                                    void *memory) {
    loupe_amx_configure(16, 16);
    bf16_heads_body(length, heads, stride, q, k, v, o, o_stride, memory, bf16_query_block);
    _tile_release();
}

LOUPE_BF16 static void attention_heads_bf16_avx512(size_t length, size_t heads, size_t stride, const float *q,
                                                   const float *k, const float *v, float *o, size_t o_stride,
                                                   void *memory) {
    bf16_heads_body(length, heads, stride, q, k, v, o, o_stride, memory, bf16_query_block_avx512);
}

int loupe_attention_heads_bf16(size_t length, size_t heads, size_t d, size_t stride, const float *q, const float *k,
                               const float *v, float *o, size_t o_stride, loupe_attention_form widest) {
    if (length == 0) return 0;
    loupe_attention_form form = loupe_attention_usable_form(d, widest);
    if (form == LOUPE_ATTENTION_FP32) return loupe_attention_heads(length, heads, d, stride, q, k, v, o, o_stride, NULL);
    size_t rows16 = up(length, 16), rows32 = up(length, 32);
    size_t bytes = rows16 * BF_HEAD * 2 + rows16 * 16 * 4 + rows32 * BF_HEAD * 2 + 16 * rows32 * 2 + 16 * rows32 * 4;
    void *memory = malloc(bytes);
    if (!memory) return -1;
    if (form == LOUPE_ATTENTION_BF16_AMX) {
        attention_heads_bf16_amx(length, heads, stride, q, k, v, o, o_stride, memory);
    } else {
        attention_heads_bf16_avx512(length, heads, stride, q, k, v, o, o_stride, memory);
    }
    free(memory);
    return 0;
}
