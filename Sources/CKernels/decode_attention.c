// Decode attention: one query token of every head against a sequence's cached keys and values,
// grouped-query (the query heads of a group read their key/value head once), with the keys
// streamed past in chunks and an online softmax, so no score row longer than a chunk exists.
//
// Per key/value head g and chunk of CHUNK keys: the group's scores s[h][j] = q_h · k_j · scale;
// each head's running maximum m, sum l and unnormalised output o are brought to the chunk's
// maximum (o, l times exp(m_old − m_new)); p = exp(s − m_new) is summed into l and o += Σ_j p_j
// v_j. A part over keys [begin, end) leaves (o, m, l); parts over disjoint ranges (threads, or
// blocks of a paged cache) merge as o = Σ exp(m_p − M) o_p / Σ exp(m_p − M) l_p.
//
// The chunks are the outer loop and the key/value heads the inner one, so the cache streams past
// once, row after row, and the next chunk's rows are prefetched while this one computes (a deep
// cache comes from memory: 23.6 MB a decode step at 512 keys). A head's own operations, chunk by
// chunk, are the same in either order. Head-major order read each row three times a third at a
// time and waited on memory: 4.4 ms a step at 576 keys against 1.9 ms now (30 layers, one thread).
//
// Against the sgemm per head it replaces (two calls per head and layer: 540 per token for
// SmolLM2-135M): each key and value row is read once for its group's three query heads, not three
// times, and nothing is packed or dispatched per call.
//
// Every form (AVX-512, AVX2, portable) computes the same bits, so an answer does not depend on
// the CPU that runs it (and the prompt path, which attends each row with this kernel, gives the
// decode path's bits row by row). The arithmetic all three perform:
//   score: per span of 64 columns, 16 lanes; lane i starts at the rounded product q[i]·k[i] and
//     takes fma(q, k, lane) for columns i + 16, i + 32, …; the lanes are added pairwise (i and
//     i + 8, then + 4, + 2, + 1); the spans' sums are added in order, then multiplied by scale.
//   softmax: e^x by `exp_twin` (the scalar twin of loupe_exp256, the same fused operations);
//     each chunk's probabilities are summed in 8 lanes over its full groups of 8 (reduced as
//     loupe_hsum256 does) plus the rest one by one: l = l·correction + lanes + rest.
//   output: o = o·correction, then o = fma(p_j, v_j, o) key by key.
// FP_CONTRACT is off so the compiler fuses nothing else (a target("fma") function would).
#include "ckernels.h"
#include "internal.h"
#include <math.h>
#include <string.h>

#pragma STDC FP_CONTRACT OFF

// CHUNK: keys per softmax step. GROUP: query heads handled together (a larger group goes in
// several passes). SPAN512, SPAN256: columns of a head whose queries and outputs stay in registers
// (GROUP × 4 vectors of each, of the 32 zmm or 16 ymm registers).
enum { CHUNK = 64, GROUP = 4, SPAN512 = 64, SPAN256 = 16 };

// e^x as loupe_exp256 computes each lane: the same clamps (a NaN becomes −87.3, as vmaxps gives
// its second operand), the same fused multiply-adds, the same exponent bits.
static inline __attribute__((always_inline)) float exp_twin(float x) {
    x = x > -87.3f ? x : -87.3f;
    x = x < 88.3f ? x : 88.3f;
    const float shift = 12582912.0f;
    float shifted = fmaf(x, 1.44269504f, shift);
    float n = shifted - shift;
    float r = fmaf(-n, 0.69314575f, x);
    r = fmaf(-n, 1.4286068e-6f, r);
    float p = 1.0f / 720;
    p = fmaf(p, r, 1.0f / 120);
    p = fmaf(p, r, 1.0f / 24);
    p = fmaf(p, r, 1.0f / 6);
    p = fmaf(p, r, 0.5f);
    p = fmaf(p, r, 1.0f);
    p = fmaf(p, r, 1.0f);
    uint32_t bits;
    memcpy(&bits, &shifted, sizeof bits);
    bits = (bits + (uint32_t)(127 - 0x4B400000)) << 23;
    float power;
    memcpy(&power, &bits, sizeof power);
    return p * power;
}

// Lanes added as loupe_hsum256 adds them: (i, i + 4), then (0, 2) and (1, 3), then the two.
static inline float sum8(const float a[8]) {
    float t0 = a[0] + a[4], t1 = a[1] + a[5], t2 = a[2] + a[6], t3 = a[3] + a[7];
    return (t0 + t2) + (t1 + t3);
}

// 16 lanes: (i, i + 8) first, then as sum8.
static inline float sum16(const float a[16]) {
    float t[8];
    for (int i = 0; i < 8; i++) t[i] = a[i] + a[i + 8];
    return sum8(t);
}

// The element offset of row t's first element (key or value, the view's type) in `kv`.
typedef struct {
    size_t block;  // index into the block table
    size_t row;    // row within the block
} cursor;

static inline size_t cursor_offset(const loupe_kv_view *kv, cursor c) {
    size_t block = kv->blocks ? (size_t)kv->blocks[c.block] : 0;
    return block * kv->block_stride + c.row * kv->row_stride;
}

static inline cursor cursor_at(const loupe_kv_view *kv, size_t t) {
    if (!kv->blocks) return (cursor){0, t};
    return (cursor){t / kv->block_rows, t % kv->block_rows};
}

static inline void cursor_next(const loupe_kv_view *kv, cursor *c) {
    if (kv->blocks && ++c->row == kv->block_rows) {
        c->row = 0;
        c->block++;
    } else if (!kv->blocks) {
        c->row++;
    }
}

// The offsets of the chunk of keys from row t (at cursor `c`, which moves past it) into `rows`,
// and when `next` is given, the following chunk's into `next` (what the chunk prefetches), their
// count into `ahead`. Returns the chunk's length.
static inline __attribute__((always_inline)) size_t chunk_rows(const loupe_kv_view *kv, cursor *c, size_t t,
                                                                size_t end, size_t rows[CHUNK], size_t next[CHUNK],
                                                                size_t *ahead) {
    size_t n = end - t < CHUNK ? end - t : CHUNK;
    for (size_t j = 0; j < n; j++, cursor_next(kv, c)) rows[j] = cursor_offset(kv, *c);
    if (next) {
        *ahead = end - t - n < CHUNK ? end - t - n : CHUNK;
        cursor peek = *c;
        for (size_t j = 0; j < *ahead; j++, cursor_next(kv, &peek)) next[j] = cursor_offset(kv, peek);
    }
    return n;
}

// Asks for one head's slice (`bytes` from element `offset`) of a key or value row: the next
// chunk's, while this chunk computes, the keys during the scores and the values during the
// output sums. A cache deeper than the caches hold comes from memory, and the hardware's
// prefetchers alone left the kernel waiting on each chunk (half of a decode step's attention time
// at 576 keys). Spread one row per key computed, rather than a chunk's worth at once, the
// requests never queue. No arithmetic changes.
static inline __attribute__((always_inline)) void prefetch_slice(const void *base, size_t offset, size_t bytes,
                                                                  size_t element) {
    const char *row = (const char *)base + offset * element;
    for (size_t byte = 0; byte < bytes; byte += 64) __builtin_prefetch(row + byte, 0, 2);
}

// The first chunk's rows, every head's slice, asked for at once: nothing computes before them.
static inline __attribute__((always_inline)) void prefetch_chunk(const loupe_kv_view *kv, cursor c, size_t count,
                                                                  size_t width, int half) {
    for (size_t j = 0; j < count; j++, cursor_next(kv, &c)) {
        prefetch_slice(kv->keys, cursor_offset(kv, c), width * (half ? 2 : 4), half ? 2 : 4);
        prefetch_slice(kv->values, cursor_offset(kv, c), width * (half ? 2 : 4), half ? 2 : 4);
    }
}

// The chunk's softmax step for `group` heads: scores s[h][0..n) (scaled) become probabilities
// against the new running maximum, and the correction each head's o and l take. Returns nothing;
// writes `correction[h]`.
static inline __attribute__((always_inline)) void chunk_softmax_portable(size_t group, size_t n, float s[][CHUNK],
                                                                        float *m, float *l, float *correction) {
    for (size_t h = 0; h < group; h++) {
        float top = m[h];
        for (size_t j = 0; j < n; j++) top = s[h][j] > top ? s[h][j] : top;
        correction[h] = m[h] == -INFINITY ? 0 : exp_twin(m[h] - top);
        float lanes[8] = {0};
        size_t j = 0;
        for (; j + 8 <= n; j += 8)
            for (size_t i = 0; i < 8; i++) lanes[i] += (s[h][j + i] = exp_twin(s[h][j + i] - top));
        float rest = 0;
        for (; j < n; j++) rest += (s[h][j] = exp_twin(s[h][j] - top));
        l[h] = l[h] * correction[h] + sum8(lanes) + rest;
        m[h] = top;
    }
}

LOUPE_AVX2 static inline __attribute__((always_inline)) void chunk_softmax_avx2(size_t group, size_t n,
                                                                              float s[][CHUNK], float *m, float *l,
                                                                              float *correction) {
    for (size_t h = 0; h < group; h++) {
        float top = m[h];
        for (size_t j = 0; j < n; j++) top = s[h][j] > top ? s[h][j] : top;
        correction[h] = m[h] == -INFINITY ? 0 : exp_twin(m[h] - top);
        __m256 shift = _mm256_set1_ps(top), sum = _mm256_setzero_ps();
        size_t j = 0;
        for (; j + 8 <= n; j += 8) {
            __m256 p = loupe_exp256(_mm256_sub_ps(_mm256_loadu_ps(s[h] + j), shift));
            _mm256_storeu_ps(s[h] + j, p);
            sum = _mm256_add_ps(sum, p);
        }
        float rest = 0;
        for (; j < n; j++) rest += (s[h][j] = exp_twin(s[h][j] - top));
        l[h] = l[h] * correction[h] + loupe_hsum256(sum) + rest;
        m[h] = top;
    }
}

// ---- portable ----

static inline float element(const void *base, size_t index, int half) {
    return half ? loupe_half_to_float(((const uint16_t *)base)[index]) : ((const float *)base)[index];
}

static inline __attribute__((always_inline)) void part_portable(const loupe_kv_view *kv, size_t heads,
                                                               size_t kv_heads, size_t d, const float *q, float scale,
                                                               size_t begin, size_t end, float *o, float *m, float *l,
                                                               int half) {
    size_t group_size = heads / kv_heads;
    float s[GROUP][CHUNK];
    float correction[GROUP];
    size_t offsets[CHUNK];
    size_t rows[CHUNK];
    cursor c = cursor_at(kv, begin);
    for (size_t t = begin; t < end; t += CHUNK) {
        size_t n = chunk_rows(kv, &c, t, end, rows, NULL, NULL);
        for (size_t g = 0; g < kv_heads; g++)
            for (size_t first = g * group_size; first < (g + 1) * group_size; first += GROUP) {
                size_t group = (g + 1) * group_size - first < GROUP ? (g + 1) * group_size - first : GROUP;
                for (size_t j = 0; j < n; j++) offsets[j] = rows[j] + g * d;
                for (size_t h = 0; h < group; h++)
                    for (size_t j = 0; j < n; j++) {
                        const float *query = q + (first + h) * d;
                        for (size_t p0 = 0; p0 < d; p0 += SPAN512) {
                            size_t columns = d - p0 < SPAN512 ? d - p0 : SPAN512;
                            float lanes[16];
                            for (size_t i = 0; i < 16; i++)
                                lanes[i] = i < columns ? query[p0 + i] * element(kv->keys, offsets[j] + p0 + i, half)
                                                       : 0;
                            for (size_t p = 16; p < columns; p++)
                                lanes[p % 16] =
                                    fmaf(query[p0 + p], element(kv->keys, offsets[j] + p0 + p, half), lanes[p % 16]);
                            float dot = sum16(lanes);
                            s[h][j] = p0 == 0 ? dot : s[h][j] + dot;
                        }
                        s[h][j] *= scale;
                    }
                chunk_softmax_portable(group, n, s, m + first, l + first, correction);
                for (size_t h = 0; h < group; h++) {
                    float *out = o + (first + h) * d;
                    for (size_t p = 0; p < d; p++) out[p] *= correction[h];
                    for (size_t j = 0; j < n; j++)
                        for (size_t p = 0; p < d; p++)
                            out[p] = fmaf(s[h][j], element(kv->values, offsets[j] + p, half), out[p]);
                }
            }
        }
}

static void part_portable_f32(const loupe_kv_view *kv, size_t heads, size_t kv_heads, size_t d, const float *q,
                              float scale, size_t begin, size_t end, float *o, float *m, float *l) {
    part_portable(kv, heads, kv_heads, d, q, scale, begin, end, o, m, l, 0);
}

static void part_portable_f16(const loupe_kv_view *kv, size_t heads, size_t kv_heads, size_t d, const float *q,
                              float scale, size_t begin, size_t end, float *o, float *m, float *l) {
    part_portable(kv, heads, kv_heads, d, q, scale, begin, end, o, m, l, 1);
}

// ---- AVX2: 8 floats a vector, d a multiple of 16 (the AVX-512 form's lanes in two halves) ----

#define LOUPE_AVX2_F16C __attribute__((target("avx2,fma,f16c")))

LOUPE_AVX2_F16C static inline __m256 load8(const void *base, size_t index, int half) {
    if (half) return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)base + index)));
    return _mm256_loadu_ps((const float *)base + index);
}

LOUPE_AVX2_F16C static inline __attribute__((always_inline)) void part_avx2(const loupe_kv_view *kv, size_t heads,
                                                                          size_t kv_heads, size_t d, const float *q,
                                                                          float scale, size_t begin, size_t end,
                                                                          float *o, float *m, float *l, int half) {
    size_t group_size = heads / kv_heads;
    float s[GROUP][CHUNK];
    float correction[GROUP];
    size_t offsets[CHUNK];
    size_t rows[CHUNK], next[CHUNK];  // this chunk's rows and the next one's
    cursor c = cursor_at(kv, begin);
    prefetch_chunk(kv, c, end - begin < CHUNK ? end - begin : CHUNK, kv_heads * d, half);
    for (size_t t = begin; t < end; t += CHUNK) {
        size_t ahead;
        size_t n = chunk_rows(kv, &c, t, end, rows, next, &ahead);
        for (size_t g = 0; g < kv_heads; g++)
            for (size_t first = g * group_size; first < (g + 1) * group_size; first += GROUP) {
                size_t group = (g + 1) * group_size - first < GROUP ? (g + 1) * group_size - first : GROUP;
                for (size_t j = 0; j < n; j++) offsets[j] = rows[j] + g * d;
                // The AVX-512 form's 16 lanes as two halves: lanes 0–7 in `low`, 8–15 in `high`.
                for (size_t j = 0; j < n; j++) {
                    if (first == g * group_size && j < ahead) {  // both here: this form's output loop is column-major
                        prefetch_slice(kv->keys, next[j] + g * d, d * (half ? 2 : 4), half ? 2 : 4);
                        prefetch_slice(kv->values, next[j] + g * d, d * (half ? 2 : 4), half ? 2 : 4);
                    }
                    for (size_t p0 = 0; p0 < d; p0 += SPAN512) {
                        size_t vectors = (d - p0 < SPAN512 ? d - p0 : SPAN512) / 16;
                        __m256 low[GROUP], high[GROUP];
                        __m256 k0 = load8(kv->keys, offsets[j] + p0, half);
                        __m256 k1 = load8(kv->keys, offsets[j] + p0 + 8, half);
                        for (size_t h = 0; h < group; h++) {
                            low[h] = _mm256_mul_ps(_mm256_loadu_ps(q + (first + h) * d + p0), k0);
                            high[h] = _mm256_mul_ps(_mm256_loadu_ps(q + (first + h) * d + p0 + 8), k1);
                        }
                        for (size_t v = 1; v < vectors; v++) {
                            k0 = load8(kv->keys, offsets[j] + p0 + v * 16, half);
                            k1 = load8(kv->keys, offsets[j] + p0 + v * 16 + 8, half);
                            for (size_t h = 0; h < group; h++) {
                                const float *query = q + (first + h) * d + p0 + v * 16;
                                low[h] = _mm256_fmadd_ps(_mm256_loadu_ps(query), k0, low[h]);
                                high[h] = _mm256_fmadd_ps(_mm256_loadu_ps(query + 8), k1, high[h]);
                            }
                        }
                        for (size_t h = 0; h < group; h++) {
                            float dot = loupe_hsum256(_mm256_add_ps(low[h], high[h]));
                            s[h][j] = p0 == 0 ? dot : s[h][j] + dot;
                        }
                    }
                    for (size_t h = 0; h < group; h++) s[h][j] *= scale;
                }
                chunk_softmax_avx2(group, n, s, m + first, l + first, correction);
                for (size_t h = 0; h < group; h++) {
                    float *out = o + (first + h) * d;
                    __m256 factor = _mm256_set1_ps(correction[h]);
                    for (size_t p = 0; p < d; p += 8)
                        _mm256_storeu_ps(out + p, _mm256_mul_ps(_mm256_loadu_ps(out + p), factor));
                }
                for (size_t p = 0; p < d; p += 8) {
                    __m256 acc[GROUP];
                    for (size_t h = 0; h < group; h++) acc[h] = _mm256_loadu_ps(o + (first + h) * d + p);
                    for (size_t j = 0; j < n; j++) {
                        __m256 v = load8(kv->values, offsets[j] + p, half);
                        for (size_t h = 0; h < group; h++)
                            acc[h] = _mm256_fmadd_ps(_mm256_set1_ps(s[h][j]), v, acc[h]);
                    }
                    for (size_t h = 0; h < group; h++) _mm256_storeu_ps(o + (first + h) * d + p, acc[h]);
                }
            }
        }
}

LOUPE_AVX2_F16C static void part_avx2_f32(const loupe_kv_view *kv, size_t heads, size_t kv_heads, size_t d,
                                          const float *q, float scale, size_t begin, size_t end, float *o, float *m,
                                          float *l) {
    if (d == 64) return part_avx2(kv, heads, kv_heads, 64, q, scale, begin, end, o, m, l, 0);
    part_avx2(kv, heads, kv_heads, d, q, scale, begin, end, o, m, l, 0);
}

LOUPE_AVX2_F16C static void part_avx2_f16(const loupe_kv_view *kv, size_t heads, size_t kv_heads, size_t d,
                                          const float *q, float scale, size_t begin, size_t end, float *o, float *m,
                                          float *l) {
    if (d == 64) return part_avx2(kv, heads, kv_heads, 64, q, scale, begin, end, o, m, l, 1);
    part_avx2(kv, heads, kv_heads, d, q, scale, begin, end, o, m, l, 1);
}

// ---- AVX-512: 16 floats a vector, d a multiple of 16 ----

#define LOUPE_AVX512_F16C __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,fma,avx2,f16c")))

LOUPE_AVX512_F16C static inline __m512 load16(const void *base, size_t index, int half) {
    if (half) return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)((const uint16_t *)base + index)));
    return _mm512_loadu_ps((const float *)base + index);
}

LOUPE_AVX512_F16C static inline __attribute__((always_inline)) void part_avx512(
    const loupe_kv_view *kv, size_t heads, size_t kv_heads, size_t d, const float *q, float scale, size_t begin,
    size_t end, float *o, float *m, float *l, int half) {
    size_t group_size = heads / kv_heads;
    float s[GROUP][CHUNK];
    float correction[GROUP];
    size_t offsets[CHUNK];
    size_t rows[CHUNK], next[CHUNK];  // this chunk's rows and the next one's
    cursor c = cursor_at(kv, begin);
    prefetch_chunk(kv, c, end - begin < CHUNK ? end - begin : CHUNK, kv_heads * d, half);
    for (size_t t = begin; t < end; t += CHUNK) {
        size_t ahead;
        size_t n = chunk_rows(kv, &c, t, end, rows, next, &ahead);
        for (size_t g = 0; g < kv_heads; g++)
            for (size_t first = g * group_size; first < (g + 1) * group_size; first += GROUP) {
                size_t group = (g + 1) * group_size - first < GROUP ? (g + 1) * group_size - first : GROUP;
                for (size_t j = 0; j < n; j++) offsets[j] = rows[j] + g * d;
                // Scores, SPAN columns of the head at a time with the group's queries in registers.
                for (size_t p0 = 0; p0 < d; p0 += SPAN512) {
                    size_t vectors = (d - p0 < SPAN512 ? d - p0 : SPAN512) / 16;
                    __m512 query[GROUP][SPAN512 / 16];
                    for (size_t h = 0; h < group; h++)
                        for (size_t v = 0; v < vectors; v++)
                            query[h][v] = _mm512_loadu_ps(q + (first + h) * d + p0 + v * 16);
                    for (size_t j = 0; j < n; j++) {
                        if (first == g * group_size && p0 == 0 && j < ahead)
                            prefetch_slice(kv->keys, next[j] + g * d, d * (half ? 2 : 4), half ? 2 : 4);
                        __m512 key[SPAN512 / 16];
                        for (size_t v = 0; v < vectors; v++) key[v] = load16(kv->keys, offsets[j] + p0 + v * 16, half);
                        for (size_t h = 0; h < group; h++) {
                            __m512 acc = _mm512_mul_ps(query[h][0], key[0]);
                            for (size_t v = 1; v < vectors; v++) acc = _mm512_fmadd_ps(query[h][v], key[v], acc);
                            // 16 lanes to 8 (i + 8), then loupe_hsum256's order.
                            float dot = loupe_hsum256(
                                _mm256_add_ps(_mm512_castps512_ps256(acc), _mm512_extractf32x8_ps(acc, 1)));
                            s[h][j] = p0 == 0 ? dot : s[h][j] + dot;
                        }
                    }
                }
                for (size_t h = 0; h < group; h++)
                    for (size_t j = 0; j < n; j++) s[h][j] *= scale;
                chunk_softmax_avx2(group, n, s, m + first, l + first, correction);
                // o = o · correction + Σ_j p_j v_j, SPAN columns at a time in registers.
                for (size_t p0 = 0; p0 < d; p0 += SPAN512) {
                    size_t vectors = (d - p0 < SPAN512 ? d - p0 : SPAN512) / 16;
                    __m512 acc[GROUP][SPAN512 / 16];
                    for (size_t h = 0; h < group; h++) {
                        __m512 factor = _mm512_set1_ps(correction[h]);
                        for (size_t v = 0; v < vectors; v++)
                            acc[h][v] = _mm512_mul_ps(_mm512_loadu_ps(o + (first + h) * d + p0 + v * 16), factor);
                    }
                    for (size_t j = 0; j < n; j++) {
                        if (first == g * group_size && p0 == 0 && j < ahead)
                            prefetch_slice(kv->values, next[j] + g * d, d * (half ? 2 : 4), half ? 2 : 4);
                        __m512 value[SPAN512 / 16];
                        for (size_t v = 0; v < vectors; v++)
                            value[v] = load16(kv->values, offsets[j] + p0 + v * 16, half);
                        for (size_t h = 0; h < group; h++) {
                            __m512 p = _mm512_set1_ps(s[h][j]);
                            for (size_t v = 0; v < vectors; v++) acc[h][v] = _mm512_fmadd_ps(p, value[v], acc[h][v]);
                        }
                    }
                    for (size_t h = 0; h < group; h++)
                        for (size_t v = 0; v < vectors; v++)
                            _mm512_storeu_ps(o + (first + h) * d + p0 + v * 16, acc[h][v]);
                }
            }
        }
}

LOUPE_AVX512_F16C static void part_avx512_f32(const loupe_kv_view *kv, size_t heads, size_t kv_heads, size_t d,
                                              const float *q, float scale, size_t begin, size_t end, float *o,
                                              float *m, float *l) {
    if (d == 64) return part_avx512(kv, heads, kv_heads, 64, q, scale, begin, end, o, m, l, 0);
    part_avx512(kv, heads, kv_heads, d, q, scale, begin, end, o, m, l, 0);
}

LOUPE_AVX512_F16C static void part_avx512_f16(const loupe_kv_view *kv, size_t heads, size_t kv_heads, size_t d,
                                              const float *q, float scale, size_t begin, size_t end, float *o,
                                              float *m, float *l) {
    if (d == 64) return part_avx512(kv, heads, kv_heads, 64, q, scale, begin, end, o, m, l, 1);
    part_avx512(kv, heads, kv_heads, d, q, scale, begin, end, o, m, l, 1);
}

// ---- entry points ----

static int has_f16c(void) {
    static int known = -1;
    if (known < 0) known = __builtin_cpu_supports("f16c");
    return known;
}

loupe_isa loupe_decode_attention_usable(size_t d, loupe_isa widest) {
    loupe_isa isa = loupe_usable_isa(widest);
    if (!has_f16c()) return LOUPE_ISA_PORTABLE;
    if (isa == LOUPE_ISA_AVX512 && d % 16 == 0) return LOUPE_ISA_AVX512;
    if (isa >= LOUPE_ISA_AVX2 && d % 16 == 0) return LOUPE_ISA_AVX2;
    return LOUPE_ISA_PORTABLE;
}

void loupe_decode_attention_part(const loupe_kv_view *kv, size_t heads, size_t kv_heads, size_t d, const float *q,
                                 float scale, size_t begin, size_t end, float *o, float *m, float *l,
                                 loupe_isa widest) {
    for (size_t h = 0; h < heads; h++) {
        m[h] = -INFINITY;
        l[h] = 0;
    }
    memset(o, 0, heads * d * sizeof(float));
    if (begin >= end || kv_heads == 0 || heads % kv_heads != 0) return;
    int half = kv->type == LOUPE_KV_F16;
    switch (loupe_decode_attention_usable(d, widest)) {
    case LOUPE_ISA_AVX512:
        (half ? part_avx512_f16 : part_avx512_f32)(kv, heads, kv_heads, d, q, scale, begin, end, o, m, l);
        break;
    case LOUPE_ISA_AVX2:
        (half ? part_avx2_f16 : part_avx2_f32)(kv, heads, kv_heads, d, q, scale, begin, end, o, m, l);
        break;
    default:
        (half ? part_portable_f16 : part_portable_f32)(kv, heads, kv_heads, d, q, scale, begin, end, o, m, l);
    }
}

void loupe_decode_attention_merge(size_t parts, size_t heads, size_t d, const float *o, const float *m,
                                  const float *l, float *out) {
    for (size_t h = 0; h < heads; h++) {
        float top = -INFINITY;
        for (size_t p = 0; p < parts; p++) top = m[p * heads + h] > top ? m[p * heads + h] : top;
        float *target = out + h * d;
        memset(target, 0, d * sizeof(float));
        if (top == -INFINITY) continue;  // no keys: a zero output, as an empty sum gives
        float total = 0;
        for (size_t p = 0; p < parts; p++) {
            float mp = m[p * heads + h];
            if (mp == -INFINITY) continue;
            float w = exp_twin(mp - top);
            total += w * l[p * heads + h];
            const float *source = o + (p * heads + h) * d;
            for (size_t c = 0; c < d; c++) target[c] += w * source[c];
        }
        float inverse = 1 / total;
        for (size_t c = 0; c < d; c++) target[c] *= inverse;
    }
}

void loupe_decode_attention(const loupe_kv_view *kv, size_t heads, size_t kv_heads, size_t d, const float *q,
                            float scale, size_t length, float *out, float *scratch, loupe_isa widest) {
    float *m = scratch, *l = scratch + heads;
    loupe_decode_attention_part(kv, heads, kv_heads, d, q, scale, 0, length, out, m, l, widest);
    for (size_t h = 0; h < heads; h++) {
        float inverse = l[h] > 0 ? 1 / l[h] : 0;
        for (size_t c = 0; c < d; c++) out[h * d + c] *= inverse;
    }
}

// Round to nearest even, as F16C's conversion does: overflow to infinity, NaN kept quiet.
static uint16_t float_to_half(float value) {
    uint32_t x;
    memcpy(&x, &value, sizeof x);
    uint32_t sign = (x >> 16) & 0x8000, magnitude = x & 0x7fffffff;
    if (magnitude >= 0x7f800000) return (uint16_t)(sign | 0x7c00 | (magnitude > 0x7f800000 ? 0x200 : 0));
    if (magnitude >= 0x477ff000) return (uint16_t)(sign | 0x7c00);  // 65520 and up round past 65504
    if (magnitude < 0x38800000) {                                     // below 2^-14: a subnormal half
        float scaled;
        memcpy(&scaled, &magnitude, sizeof scaled);
        return (uint16_t)(sign | (uint32_t)lrintf(scaled * 16777216.0f));  // exact scaling, then rounded
    }
    // Rebias the exponent (127 → 15) and round the 13 dropped bits to nearest even.
    uint32_t rounded = magnitude + 0xc8000fffu + ((magnitude >> 13) & 1);
    return (uint16_t)(sign | (rounded >> 13));
}

LOUPE_AVX2_F16C static void float_to_half_f16c(size_t count, const float *x, uint16_t *out) {
    size_t i = 0;
    for (; i + 8 <= count; i += 8)
        _mm_storeu_si128((__m128i *)(out + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    for (; i < count; i++) out[i] = float_to_half(x[i]);
}

void loupe_float_to_half_rows(size_t count, const float *x, uint16_t *out, loupe_isa widest) {
    if (widest >= LOUPE_ISA_AVX2 && has_f16c() && loupe_has_avx2_fma()) return float_to_half_f16c(count, x, out);
    for (size_t i = 0; i < count; i++) out[i] = float_to_half(x[i]);
}
