// One Adam update over a parameter tensor, elementwise: the step of every training loop that
// touches every parameter.
#include "ckernels.h"
#include "internal.h"
#include <math.h>

// Each value is the same sequence of correctly rounded operations in every form (no fused
// multiply-adds), so the forms agree to the bit.
#pragma clang fp contract(off)

static void adam_portable(float *p, const float *g, float *m, float *v, size_t n, float b1, float b2, float step,
                          float inverse2, float eps) {
    for (size_t i = 0; i < n; i++) {
        float moment = b1 * m[i] + (1 - b1) * g[i];
        float square = b2 * v[i] + (1 - b2) * g[i] * g[i];
        m[i] = moment;
        v[i] = square;
        p[i] -= step * moment / (sqrtf(square * inverse2) + eps);
    }
}

LOUPE_AVX512 static void adam_avx512(float *p, const float *g, float *m, float *v, size_t n, float b1, float b2,
                                     float step, float inverse2, float eps) {
    const __m512 vb1 = _mm512_set1_ps(b1), vc1 = _mm512_set1_ps(1 - b1), vb2 = _mm512_set1_ps(b2),
                 vc2 = _mm512_set1_ps(1 - b2), vstep = _mm512_set1_ps(step), vinv = _mm512_set1_ps(inverse2),
                 veps = _mm512_set1_ps(eps);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 gradient = _mm512_loadu_ps(g + i);
        __m512 moment = _mm512_add_ps(_mm512_mul_ps(vb1, _mm512_loadu_ps(m + i)), _mm512_mul_ps(vc1, gradient));
        __m512 square = _mm512_add_ps(_mm512_mul_ps(vb2, _mm512_loadu_ps(v + i)),
                                      _mm512_mul_ps(_mm512_mul_ps(vc2, gradient), gradient));
        _mm512_storeu_ps(m + i, moment);
        _mm512_storeu_ps(v + i, square);
        __m512 denominator = _mm512_add_ps(_mm512_sqrt_ps(_mm512_mul_ps(square, vinv)), veps);
        _mm512_storeu_ps(p + i, _mm512_sub_ps(_mm512_loadu_ps(p + i),
                                              _mm512_div_ps(_mm512_mul_ps(vstep, moment), denominator)));
    }
    // The tail past a multiple of 16, one at a time.
    adam_portable(p + i, g + i, m + i, v + i, n - i, b1, b2, step, inverse2, eps);
}

void loupe_adam_step(float *p, const float *g, float *m, float *v, size_t n, float b1, float b2, float step,
                     float inverse2, float eps, loupe_isa widest) {
    if (loupe_usable_isa(widest) == LOUPE_ISA_AVX512) {
        adam_avx512(p, g, m, v, n, b1, b2, step, inverse2, eps);
    } else {
        adam_portable(p, g, m, v, n, b1, b2, step, inverse2, eps);
    }
}
