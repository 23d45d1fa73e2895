// Row-wise kernels: softmax (three-pass and online single-pass) and layer normalisation.
#include "ckernels.h"
#include "internal.h"
#include <math.h>

// ---- softmax, three passes: max; exp and sum (writing e); scale. ----

LOUPE_AVX2 static void softmax3_avx2(float *y, const float *x, size_t n) {
    size_t i = 0;
    __m256 vmax = _mm256_set1_ps(-INFINITY);
    for (; i + 8 <= n; i += 8) vmax = _mm256_max_ps(vmax, _mm256_loadu_ps(x + i));
    float maximum = loupe_hmax256(vmax);
    for (; i < n; i++) maximum = x[i] > maximum ? x[i] : maximum;
    __m256 vm = _mm256_set1_ps(maximum), vsum = _mm256_setzero_ps();
    for (i = 0; i + 8 <= n; i += 8) {
        __m256 e = loupe_exp256(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm));
        _mm256_storeu_ps(y + i, e);
        vsum = _mm256_add_ps(vsum, e);
    }
    float sum = loupe_hsum256(vsum);
    for (; i < n; i++) sum += (y[i] = expf(x[i] - maximum));
    __m256 inverse = _mm256_set1_ps(1.0f / sum);
    for (i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(y + i), inverse));
    for (; i < n; i++) y[i] *= 1.0f / sum;
}

// ---- softmax, online (Milakov & Gimelshein 2018): one pass finds the maximum and the sum
// together, rescaling the running sum whenever the maximum grows; a second pass writes. ----

LOUPE_AVX2 static void softmax_online_avx2(float *y, const float *x, size_t n) {
    // Per lane running maximum and sum; blocks of 64 share one rescale, and two independent
    // sums keep the adds off one dependency chain.
    __m256 vm = _mm256_set1_ps(-INFINITY), vs = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m256 v[8];
        for (int j = 0; j < 8; j++) v[j] = _mm256_loadu_ps(x + i + 8 * j);
        __m256 block = _mm256_max_ps(
            _mm256_max_ps(_mm256_max_ps(v[0], v[1]), _mm256_max_ps(v[2], v[3])),
            _mm256_max_ps(_mm256_max_ps(v[4], v[5]), _mm256_max_ps(v[6], v[7])));
        __m256 m = _mm256_max_ps(vm, block);
        __m256 e0 = _mm256_mul_ps(vs, loupe_exp256(_mm256_sub_ps(vm, m))), e1 = _mm256_setzero_ps();
        for (int j = 0; j < 8; j += 2) {
            e0 = _mm256_add_ps(e0, loupe_exp256(_mm256_sub_ps(v[j], m)));
            e1 = _mm256_add_ps(e1, loupe_exp256(_mm256_sub_ps(v[j + 1], m)));
        }
        vs = _mm256_add_ps(e0, e1);
        vm = m;
    }
    // Combine the lanes, then the tail.
    float maximum = loupe_hmax256(vm);
    float lanes_m[8], lanes_s[8];
    _mm256_storeu_ps(lanes_m, vm);
    _mm256_storeu_ps(lanes_s, vs);
    float sum = 0;
    for (int lane = 0; lane < 8; lane++)
        if (lanes_s[lane] > 0) sum += lanes_s[lane] * expf(lanes_m[lane] - maximum);
    for (; i < n; i++) {
        if (x[i] > maximum) {
            sum *= expf(maximum - x[i]);
            maximum = x[i];
        }
        sum += expf(x[i] - maximum);
    }
    __m256 shift = _mm256_set1_ps(maximum), inverse = _mm256_set1_ps(1.0f / sum);
    for (i = 0; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_mul_ps(loupe_exp256(_mm256_sub_ps(_mm256_loadu_ps(x + i), shift)), inverse));
    for (; i < n; i++) y[i] = expf(x[i] - maximum) / sum;
}

static void softmax_baseline(float *y, const float *x, size_t n) {
    float maximum = -INFINITY;
    for (size_t i = 0; i < n; i++) maximum = x[i] > maximum ? x[i] : maximum;
    float sum = 0;
    for (size_t i = 0; i < n; i++) sum += (y[i] = expf(x[i] - maximum));
    for (size_t i = 0; i < n; i++) y[i] /= sum;
}

void loupe_softmax_three_pass(float *y, const float *x, size_t rows, size_t columns) {
    for (size_t r = 0; r < rows; r++) {
        if (loupe_has_avx2_fma()) {
            softmax3_avx2(y + r * columns, x + r * columns, columns);
        } else {
            softmax_baseline(y + r * columns, x + r * columns, columns);
        }
    }
}

void loupe_softmax_online(float *y, const float *x, size_t rows, size_t columns) {
    for (size_t r = 0; r < rows; r++) {
        if (loupe_has_avx2_fma()) {
            softmax_online_avx2(y + r * columns, x + r * columns, columns);
        } else {
            softmax_baseline(y + r * columns, x + r * columns, columns);
        }
    }
}

// ---- layer normalisation: one pass for the sum and the sum of squares (float lanes, combined
// in double), one to normalise and write. The second pass needs gamma and beta beside the row:
// with 4096 columns that is 64 KiB a row (x, y, gamma, beta), twice L1, so row by row every
// element re-read gamma and beta from L2. Rows go eight at a time instead: their moments first,
// then 512 columns at a time across the eight, so a 4 KiB slice of gamma and beta stays in L1
// for all of them (measured at 384 × 4096 on one core: 40 → 56 GB/s). The arithmetic per element
// is unchanged, so the results are bit-identical to row by row. ----

enum { LAYERNORM_ROWS = 8, LAYERNORM_COLUMNS = 512 };

/// A row's mean and 1/sqrt(variance + epsilon).
LOUPE_AVX2 static void layernorm_moments_avx2(const float *x, size_t n, float epsilon, float *mean, float *scale) {
    // Four independent chains per sum hide the add latency.
    __m256 s[4], q[4];
    for (int j = 0; j < 4; j++) s[j] = q[j] = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        for (int j = 0; j < 4; j++) {
            __m256 a = _mm256_loadu_ps(x + i + 8 * j);
            s[j] = _mm256_add_ps(s[j], a);
            q[j] = _mm256_fmadd_ps(a, a, q[j]);
        }
    }
    double sum = loupe_hsum256(_mm256_add_ps(_mm256_add_ps(s[0], s[1]), _mm256_add_ps(s[2], s[3])));
    double squares = loupe_hsum256(_mm256_add_ps(_mm256_add_ps(q[0], q[1]), _mm256_add_ps(q[2], q[3])));
    for (; i < n; i++) {
        sum += x[i];
        squares += (double)x[i] * x[i];
    }
    double m = sum / (double)n;
    double variance = squares / (double)n - m * m;
    *mean = (float)m;
    *scale = (float)(1.0 / sqrt((variance > 0 ? variance : 0) + epsilon));
}

/// Up to `LAYERNORM_ROWS` rows: moments, then the normalised rows a column slice at a time.
LOUPE_AVX2 static void layernorm_rows_avx2(
    float *y, const float *x, const float *gamma, const float *beta, size_t rows, size_t n, float epsilon) {
    float mean[LAYERNORM_ROWS], scale[LAYERNORM_ROWS];
    for (size_t r = 0; r < rows; r++) layernorm_moments_avx2(x + r * n, n, epsilon, &mean[r], &scale[r]);
    size_t vectorised = n - n % 8;
    for (size_t c0 = 0; c0 < vectorised; c0 += LAYERNORM_COLUMNS) {
        size_t c1 = c0 + LAYERNORM_COLUMNS < vectorised ? c0 + LAYERNORM_COLUMNS : vectorised;
        for (size_t r = 0; r < rows; r++) {
            const float *xr = x + r * n;
            float *yr = y + r * n;
            __m256 vmean = _mm256_set1_ps(mean[r]), vscale = _mm256_set1_ps(scale[r]);
            for (size_t i = c0; i < c1; i += 8) {
                __m256 normal = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(xr + i), vmean), vscale);
                _mm256_storeu_ps(
                    yr + i, _mm256_fmadd_ps(normal, _mm256_loadu_ps(gamma + i), _mm256_loadu_ps(beta + i)));
            }
        }
    }
    for (size_t r = 0; r < rows; r++) {
        for (size_t i = vectorised; i < n; i++) {
            y[r * n + i] = (x[r * n + i] - mean[r]) * scale[r] * gamma[i] + beta[i];
        }
    }
}

static void layernorm_baseline(
    float *y, const float *x, const float *gamma, const float *beta, size_t n, float epsilon) {
    double sum = 0, squares = 0;
    for (size_t i = 0; i < n; i++) {
        sum += x[i];
        squares += (double)x[i] * x[i];
    }
    double mean = sum / (double)n;
    double variance = squares / (double)n - mean * mean;
    float scale = (float)(1.0 / sqrt((variance > 0 ? variance : 0) + epsilon));
    for (size_t i = 0; i < n; i++) y[i] = (x[i] - (float)mean) * scale * gamma[i] + beta[i];
}

void loupe_layernorm(float *y, const float *x, const float *gamma, const float *beta, size_t rows, size_t columns,
                     float epsilon) {
    if (loupe_has_avx2_fma()) {
        for (size_t r = 0; r < rows; r += LAYERNORM_ROWS) {
            size_t count = rows - r < LAYERNORM_ROWS ? rows - r : LAYERNORM_ROWS;
            layernorm_rows_avx2(y + r * columns, x + r * columns, gamma, beta, count, columns, epsilon);
        }
        return;
    }
    for (size_t r = 0; r < rows; r++) {
        layernorm_baseline(y + r * columns, x + r * columns, gamma, beta, columns, epsilon);
    }
}

// ---- the transformer's residual add and layer norm in one pass over memory: x = LN(x + r). The
// variance is two-pass (the mean first, then squared deviations), as the Swift form it replaced
// computed it, not E[x²] − mean², which cancels badly when the mean is large against the spread. ----

LOUPE_AVX2 static void add_layernorm_avx2(float *x, const float *r, const float *gamma, const float *beta, size_t n,
                                          float epsilon) {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
        if (r) {
            a = _mm256_add_ps(a, _mm256_loadu_ps(r + i));
            b = _mm256_add_ps(b, _mm256_loadu_ps(r + i + 8));
            _mm256_storeu_ps(x + i, a);
            _mm256_storeu_ps(x + i + 8, b);
        }
        s0 = _mm256_add_ps(s0, a);
        s1 = _mm256_add_ps(s1, b);
    }
    float sum = loupe_hsum256(_mm256_add_ps(s0, s1));
    for (; i < n; i++) {
        if (r) x[i] += r[i];
        sum += x[i];
    }
    float mean = sum / (float)n;
    __m256 vmean = _mm256_set1_ps(mean);
    s0 = _mm256_setzero_ps();
    s1 = _mm256_setzero_ps();
    for (i = 0; i + 16 <= n; i += 16) {
        __m256 a = _mm256_sub_ps(_mm256_loadu_ps(x + i), vmean), b = _mm256_sub_ps(_mm256_loadu_ps(x + i + 8), vmean);
        s0 = _mm256_fmadd_ps(a, a, s0);
        s1 = _mm256_fmadd_ps(b, b, s1);
    }
    float squares = loupe_hsum256(_mm256_add_ps(s0, s1));
    for (; i < n; i++) squares += (x[i] - mean) * (x[i] - mean);
    float scale = 1.0f / sqrtf(squares / (float)n + epsilon);
    __m256 vscale = _mm256_set1_ps(scale);
    for (i = 0; i + 8 <= n; i += 8) {
        __m256 normal = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), vmean), vscale);
        _mm256_storeu_ps(x + i, _mm256_fmadd_ps(normal, _mm256_loadu_ps(gamma + i), _mm256_loadu_ps(beta + i)));
    }
    for (; i < n; i++) x[i] = (x[i] - mean) * scale * gamma[i] + beta[i];
}

static void add_layernorm_baseline(float *x, const float *r, const float *gamma, const float *beta, size_t n,
                                   float epsilon) {
    float sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (r) x[i] += r[i];
        sum += x[i];
    }
    float mean = sum / (float)n, squares = 0;
    for (size_t i = 0; i < n; i++) squares += (x[i] - mean) * (x[i] - mean);
    float scale = 1.0f / sqrtf(squares / (float)n + epsilon);
    for (size_t i = 0; i < n; i++) x[i] = (x[i] - mean) * scale * gamma[i] + beta[i];
}

void loupe_add_layernorm(float *x, const float *residual, const float *gamma, const float *beta, size_t rows,
                         size_t columns, float epsilon) {
    int avx2 = loupe_has_avx2_fma();
    for (size_t row = 0; row < rows; row++) {
        float *line = x + row * columns;
        const float *r = residual ? residual + row * columns : NULL;
        if (avx2) {
            add_layernorm_avx2(line, r, gamma, beta, columns, epsilon);
        } else {
            add_layernorm_baseline(line, r, gamma, beta, columns, epsilon);
        }
    }
}
