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
