#include "ckernels.h"
#include "internal.h"
#include <math.h>

LOUPE_AVX2 static float dot_avx2(const float *a, const float *b, size_t n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
    }
    float sum = loupe_hsum256(_mm256_add_ps(s0, s1));
    for (; i < n; i++) sum += a[i] * b[i];
    return sum;
}

float loupe_dot_f32(const float *a, const float *b, size_t count) {
    if (loupe_has_avx2_fma()) return dot_avx2(a, b, count);
    float sum = 0;
    for (size_t i = 0; i < count; i++) sum += a[i] * b[i];
    return sum;
}

/* Starts a row's first lines on their way; the hardware prefetcher follows the stream from there
   (prefetching every line costs more instructions than the misses it hides). */
static inline void prefetch_row(const float *row, size_t count) {
    size_t lines = count < 64 ? count : 64;
    for (size_t i = 0; i < lines; i += 16) __builtin_prefetch(row + i, 0, 3);
}

/* The elements past a four-row kernel's vector loop, added one at a time, and its four sums out. */
#define DOT4_FINISH(q, a, b, c, d, i, n, ra, rb, rc, rd, out) \
    do {                                                      \
        for (; (i) < (n); (i)++) {                            \
            (ra) += (q)[i] * (a)[i];                          \
            (rb) += (q)[i] * (b)[i];                          \
            (rc) += (q)[i] * (c)[i];                          \
            (rd) += (q)[i] * (d)[i];                          \
        }                                                     \
        (out)[0] = (ra);                                      \
        (out)[1] = (rb);                                      \
        (out)[2] = (rc);                                      \
        (out)[3] = (rd);                                      \
    } while (0)

LOUPE_AVX2 static void dot4_avx2(const float *q, const float *a, const float *b, const float *c, const float *d,
                                 size_t n, float *out) {
    __m256 sa = _mm256_setzero_ps(), sb = _mm256_setzero_ps(), sc = _mm256_setzero_ps(), sd = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_loadu_ps(q + i);
        sa = _mm256_fmadd_ps(x, _mm256_loadu_ps(a + i), sa);
        sb = _mm256_fmadd_ps(x, _mm256_loadu_ps(b + i), sb);
        sc = _mm256_fmadd_ps(x, _mm256_loadu_ps(c + i), sc);
        sd = _mm256_fmadd_ps(x, _mm256_loadu_ps(d + i), sd);
    }
    float ra = loupe_hsum256(sa), rb = loupe_hsum256(sb), rc = loupe_hsum256(sc), rd = loupe_hsum256(sd);
    DOT4_FINISH(q, a, b, c, d, i, n, ra, rb, rc, rd, out);
}

void loupe_dot_rows_f32(const float *query, const float *rows, const int32_t *ids, size_t n, size_t count,
                        float *out) {
    int avx = loupe_has_avx2_fma();
    for (size_t j = 0; j < n && j < 4; j++) prefetch_row(rows + (size_t)ids[j] * count, count);
    size_t i = 0;
    for (; avx && i + 4 <= n; i += 4) {
        for (size_t j = i + 4; j < n && j < i + 8; j++) prefetch_row(rows + (size_t)ids[j] * count, count);
        dot4_avx2(query, rows + (size_t)ids[i] * count, rows + (size_t)ids[i + 1] * count,
                  rows + (size_t)ids[i + 2] * count, rows + (size_t)ids[i + 3] * count, count, out + i);
    }
    if (avx && i < n) {
        /* One to three left: a last batch of four repeating the final row. */
        float rest[4];
        const float *r[4];
        for (size_t j = 0; j < 4; j++) r[j] = rows + (size_t)ids[i + j < n ? i + j : n - 1] * count;
        dot4_avx2(query, r[0], r[1], r[2], r[3], count, rest);
        for (size_t j = 0; i + j < n; j++) out[i + j] = rest[j];
        return;
    }
    for (; i < n; i++) out[i] = loupe_dot_f32(query, rows + (size_t)ids[i] * count, count);
}

/* ---- int8 rows against an int16 query (HNSW's beam in 8 bits). A row's 16 codes are widened to
   int16 (one vpmovsxbw) and multiplied by the query's 16 in pairs (vpmaddwd), summed into eight
   int32 lanes. The caller keeps |query| · |code| · count below 2³¹ (loupe_quantize_query_i16). */

LOUPE_AVX2 static inline __m256i widen16(const int8_t *p) {
    return _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)p));
}

LOUPE_AVX2 static inline int32_t hsum_epi32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return _mm_cvtsi128_si32(s);
}

LOUPE_AVX2 static void dot4_i8_avx2(const int16_t *q, const int8_t *a, const int8_t *b, const int8_t *c,
                                    const int8_t *d, size_t n, int32_t *out) {
    __m256i sa = _mm256_setzero_si256(), sb = _mm256_setzero_si256(), sc = _mm256_setzero_si256(),
            sd = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i x = _mm256_loadu_si256((const __m256i *)(q + i));
        sa = _mm256_add_epi32(sa, _mm256_madd_epi16(x, widen16(a + i)));
        sb = _mm256_add_epi32(sb, _mm256_madd_epi16(x, widen16(b + i)));
        sc = _mm256_add_epi32(sc, _mm256_madd_epi16(x, widen16(c + i)));
        sd = _mm256_add_epi32(sd, _mm256_madd_epi16(x, widen16(d + i)));
    }
    int32_t ra = hsum_epi32(sa), rb = hsum_epi32(sb), rc = hsum_epi32(sc), rd = hsum_epi32(sd);
    DOT4_FINISH(q, a, b, c, d, i, n, ra, rb, rc, rd, out);
}

/* The same with AVX-512: 32 codes widened at a time, and vpdpwssd multiplies, pairs and adds in one
   instruction (no saturation: the bound above holds for each of the 16 lanes). */
#define LOUPE_VNNI512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

LOUPE_VNNI512 static inline __m512i widen32(const int8_t *p) {
    return _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)p));
}

LOUPE_VNNI512 static void dot4_i8_vnni(const int16_t *q, const int8_t *a, const int8_t *b, const int8_t *c,
                                       const int8_t *d, size_t n, int32_t *out) {
    __m512i sa = _mm512_setzero_si512(), sb = _mm512_setzero_si512(), sc = _mm512_setzero_si512(),
            sd = _mm512_setzero_si512();
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m512i x = _mm512_loadu_si512((const void *)(q + i));
        sa = _mm512_dpwssd_epi32(sa, x, widen32(a + i));
        sb = _mm512_dpwssd_epi32(sb, x, widen32(b + i));
        sc = _mm512_dpwssd_epi32(sc, x, widen32(c + i));
        sd = _mm512_dpwssd_epi32(sd, x, widen32(d + i));
    }
    int32_t ra = _mm512_reduce_add_epi32(sa), rb = _mm512_reduce_add_epi32(sb), rc = _mm512_reduce_add_epi32(sc),
            rd = _mm512_reduce_add_epi32(sd);
    DOT4_FINISH(q, a, b, c, d, i, n, ra, rb, rc, rd, out);
}

static int32_t dot_i8(const int16_t *q, const int8_t *row, size_t n) {
    int32_t sum = 0;
    for (size_t i = 0; i < n; i++) sum += q[i] * row[i];
    return sum;
}

/* All of an int8 row's lines (a 384-code row is six), one prefetch per line, and its scale. */
static inline void prefetch_codes(const int8_t *codes, const float *scales, int32_t id, size_t count) {
    const int8_t *row = codes + (size_t)id * count;
    for (size_t i = 0; i < count; i += 64) __builtin_prefetch(row + i, 0, 3);
    __builtin_prefetch(scales + id, 0, 3);
}

float loupe_quantize_query_i16(const float *query, size_t count, int16_t *out) {
    float largest = loupe_largest_magnitude(query, count);
    /* Each int32 lane adds count / 8 pairs of |q| ≤ limit times |code| ≤ 127. */
    double bound = 2147483647.0 / (127.0 * (double)(count > 0 ? count : 1));
    double limit = bound < 32767.0 ? floor(bound) : 32767.0;
    if (largest == 0 || limit < 1) {
        for (size_t i = 0; i < count; i++) out[i] = 0;
        return 0;
    }
    float scale = (float)limit / largest;
    for (size_t i = 0; i < count; i++) out[i] = (int16_t)lrintf(query[i] * scale);
    return 1 / scale;
}

float loupe_quantize_row_i8(const float *row, size_t count, int8_t *out) {
    float largest = loupe_largest_magnitude(row, count);
    if (largest == 0) {
        for (size_t i = 0; i < count; i++) out[i] = 0;
        return 0;
    }
    float scale = 127 / largest;
    for (size_t i = 0; i < count; i++) out[i] = (int8_t)lrintf(row[i] * scale);
    return 1 / scale;
}

void loupe_dot_rows_i8(const int16_t *query, float query_scale, const int8_t *codes, const float *scales,
                       const int32_t *ids, size_t n, size_t count, float *out) {
    int avx = loupe_has_avx2_fma();
    void (*dot4)(const int16_t *, const int8_t *, const int8_t *, const int8_t *, const int8_t *, size_t, int32_t *) =
        loupe_has_avx512_vnni() ? dot4_i8_vnni : dot4_i8_avx2;
    for (size_t j = 0; j < n && j < 4; j++) prefetch_codes(codes, scales, ids[j], count);
    int32_t sums[4];
    size_t i = 0;
    for (; avx && i + 4 <= n; i += 4) {
        for (size_t j = i + 4; j < n && j < i + 8; j++) prefetch_codes(codes, scales, ids[j], count);
        dot4(query, codes + (size_t)ids[i] * count, codes + (size_t)ids[i + 1] * count,
             codes + (size_t)ids[i + 2] * count, codes + (size_t)ids[i + 3] * count, count, sums);
        for (size_t j = 0; j < 4; j++) out[i + j] = (float)sums[j] * scales[ids[i + j]] * query_scale;
    }
    if (avx && i < n) {
        /* One to three left: a last batch of four repeating the final row. */
        const int8_t *r[4];
        for (size_t j = 0; j < 4; j++) r[j] = codes + (size_t)ids[i + j < n ? i + j : n - 1] * count;
        dot4(query, r[0], r[1], r[2], r[3], count, sums);
        for (size_t j = 0; i + j < n; j++) out[i + j] = (float)sums[j] * scales[ids[i + j]] * query_scale;
        return;
    }
    for (; i < n; i++)
        out[i] = (float)dot_i8(query, codes + (size_t)ids[i] * count, count) * scales[ids[i]] * query_scale;
}

void loupe_dot_code_rows_i8(const int8_t *codes, const float *scales, int32_t from, const int32_t *ids, size_t n,
                            size_t count, int16_t *scratch, float *out) {
    /* Row `from` widened to 16 bits is a query like any other: with |code| ≤ 127 no int32 lane
       comes near overflow below 133,000 codes a row. */
    const int8_t *row = codes + (size_t)from * count;
    for (size_t i = 0; i < count; i++) scratch[i] = row[i];
    loupe_dot_rows_i8(scratch, scales[from], codes, scales, ids, n, count, out);
}
