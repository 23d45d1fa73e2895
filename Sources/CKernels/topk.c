// Each row's k largest values, as column indices: the TopK activation of a sparse autoencoder.
#include "ckernels.h"
#include "internal.h"
#include <stdlib.h>

// A min-heap of the best k so far (values and their columns); its root is the least kept.
static inline __attribute__((always_inline)) void swap_entries(float *values, int32_t *columns, size_t a, size_t b) {
    float v = values[a];
    values[a] = values[b];
    values[b] = v;
    int32_t c = columns[a];
    columns[a] = columns[b];
    columns[b] = c;
}

static inline __attribute__((always_inline)) void offer(float *values, int32_t *columns, size_t k, size_t *count,
                                                        float value, int32_t column) {
    if (*count < k) {
        size_t child = (*count)++;
        values[child] = value;
        columns[child] = column;
        while (child > 0) {
            size_t parent = (child - 1) / 2;
            if (values[parent] <= values[child]) break;
            swap_entries(values, columns, parent, child);
            child = parent;
        }
    } else if (value > values[0]) {
        values[0] = value;
        columns[0] = column;
        size_t parent = 0;
        for (;;) {
            size_t left = 2 * parent + 1;
            if (left >= k) break;
            size_t right = left + 1;
            size_t smaller = right < k && values[right] < values[left] ? right : left;
            if (values[parent] <= values[smaller]) break;
            swap_entries(values, columns, parent, smaller);
            parent = smaller;
        }
    }
}

/// Which of the `lanes` values at `x` are above `least` (NaN is not), one bit each.
typedef uint32_t (*beats_fn)(const float *x, float least);

/// The largest of the `count` values at `x`, or NaN when one of them is NaN.
typedef float (*largest_fn)(const float *x, size_t count);

static inline __attribute__((always_inline)) uint32_t beats1(const float *x, float least) { return x[0] > least; }

static inline __attribute__((always_inline)) float largest1(const float *x, size_t count) {
    float largest = -INFINITY;
    for (size_t i = 0; i < count; i++) {
        if (x[i] != x[i]) return NAN;
        largest = x[i] > largest ? x[i] : largest;
    }
    return largest;
}

LOUPE_AVX512 static inline __attribute__((always_inline)) uint32_t beats16(const float *x, float least) {
    return _mm512_cmp_ps_mask(_mm512_loadu_ps(x), _mm512_set1_ps(least), _CMP_GT_OQ);
}

LOUPE_AVX512 static inline __attribute__((always_inline)) float largest16(const float *x, size_t count) {
    __m512 top = _mm512_set1_ps(-INFINITY);
    __mmask16 unordered = 0;
    size_t i = 0;
    for (; i + 16 <= count; i += 16) {
        __m512 v = _mm512_loadu_ps(x + i);
        unordered |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
        top = _mm512_max_ps(top, v);
    }
    if (i < count) {
        __mmask16 tail = (__mmask16)((1u << (count - i)) - 1);
        __m512 v = _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), tail, x + i);
        unordered |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
        top = _mm512_max_ps(top, v);
    }
    return unordered ? NAN : _mm512_reduce_max_ps(top);
}

LOUPE_AVX2 static inline __attribute__((always_inline)) uint32_t beats8(const float *x, float least) {
    return (uint32_t)_mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x), _mm256_set1_ps(least), _CMP_GT_OQ));
}

LOUPE_AVX2 static inline __attribute__((always_inline)) float largest8(const float *x, size_t count) {
    __m256 top = _mm256_set1_ps(-INFINITY), unordered = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        unordered = _mm256_or_ps(unordered, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        top = _mm256_max_ps(top, v);
    }
    // The tail past a multiple of 8, one at a time.
    float largest = loupe_hmax256(top), rest = largest1(x + i, count - i);
    if (_mm256_movemask_ps(unordered) || rest != rest) return NAN;
    return rest > largest ? rest : largest;
}

// A row's k largest:
// - Cut: the least of k group maxima (groups of width / k values) has at least k values of the
//   row at or above it, so no value below it is among the k largest. Only the values at or above
//   it, found `lanes` at a time, are offered to the heap, in column order: a few times k of them
//   instead of every value, and far fewer heap updates, whose branches mispredict.
// - Every value offered, in column order: a row with a NaN or nothing above -inf (which the cut
//   cannot bound) and a row too narrow to cut.
// Every form finds the same cut and offers the same values, so they agree to the order.
static inline __attribute__((always_inline)) void top_k_rows(size_t rows, size_t width, size_t k,
                                                             const float *x, int32_t *chosen, float *values,
                                                             int32_t *columns, size_t lanes, beats_fn beats,
                                                             largest_fn largest) {
    size_t group = width / k;
    for (size_t r = 0; r < rows; r++) {
        const float *row = x + r * width;
        size_t count = 0, j = 0;
        float cut = NAN;
        if (group >= 2) {
            cut = INFINITY;
            for (size_t g = 0; g < k && cut == cut; g++) {
                float top = largest(row + g * group, group);
                cut = top < cut || top != top ? top : cut;
            }
        }
        if (cut == cut && cut > -INFINITY) {
            // Values at or above the cut: above its next float down.
            float below = nextafterf(cut, -INFINITY);
            for (; j + lanes <= width; j += lanes) {
                for (uint32_t above = beats(row + j, below); above; above &= above - 1) {
                    size_t lane = (size_t)__builtin_ctz(above);
                    offer(values, columns, k, &count, row[j + lane], (int32_t)(j + lane));
                }
            }
            for (; j < width; j++) {
                if (row[j] >= cut) offer(values, columns, k, &count, row[j], (int32_t)j);
            }
        } else {
            for (; j < width; j++) offer(values, columns, k, &count, row[j], (int32_t)j);
        }
        for (size_t slot = 0; slot < k; slot++) chosen[r * k + slot] = slot < count ? columns[slot] : -1;
    }
}

LOUPE_AVX512 static void top_k_avx512(size_t rows, size_t width, size_t k, const float *x, int32_t *chosen,
                                      float *values, int32_t *columns) {
    top_k_rows(rows, width, k, x, chosen, values, columns, 16, beats16, largest16);
}

LOUPE_AVX2 static void top_k_avx2(size_t rows, size_t width, size_t k, const float *x, int32_t *chosen,
                                  float *values, int32_t *columns) {
    top_k_rows(rows, width, k, x, chosen, values, columns, 8, beats8, largest8);
}

static void top_k_portable(size_t rows, size_t width, size_t k, const float *x, int32_t *chosen, float *values,
                           int32_t *columns) {
    top_k_rows(rows, width, k, x, chosen, values, columns, 1, beats1, largest1);
}

int loupe_top_k_rows(size_t rows, size_t width, size_t k, const float *x, int32_t *chosen, loupe_isa widest) {
    if (k == 0) return 0;
    float *values = malloc(k * sizeof(float));
    int32_t *columns = malloc(k * sizeof(int32_t));
    if (!values || !columns) {
        free(values);
        free(columns);
        return -1;
    }
    switch (loupe_usable_isa(widest)) {
    case LOUPE_ISA_AVX512: top_k_avx512(rows, width, k, x, chosen, values, columns); break;
    case LOUPE_ISA_AVX2: top_k_avx2(rows, width, k, x, chosen, values, columns); break;
    default: top_k_portable(rows, width, k, x, chosen, values, columns); break;
    }
    free(values);
    free(columns);
    return 0;
}
