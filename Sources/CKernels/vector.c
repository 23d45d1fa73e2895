#include "ckernels.h"
#include "internal.h"

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
    for (; i < n; i++) {
        ra += q[i] * a[i];
        rb += q[i] * b[i];
        rc += q[i] * c[i];
        rd += q[i] * d[i];
    }
    out[0] = ra;
    out[1] = rb;
    out[2] = rc;
    out[3] = rd;
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
