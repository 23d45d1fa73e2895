// Int8 linear layers, as dynamic quantisation does them: weights quantised once per output
// channel (symmetric, scale = max|w| / 127), activations per row when they arrive (scale =
// max|x| / 127, stored as q + 128 in an unsigned byte), products summed in int32 and scaled back
// to fp32 with the bias added in the same pass. The unsigned shift is what the u8 × s8 dot-product
// instructions need; its effect, 128 · Σ_k w[j][k], is subtracted per column.
//
// With AVX-512 VNNI, vpdpbusd multiplies four u8 × s8 pairs and adds them into each int32 lane, 64
// multiply-adds an instruction, into int32 (no 16-bit saturation as vpmaddubsw has). The register
// tile is 12 rows × 32 columns (24 accumulators of the 32 zmm registers). With AMX, tile registers
// and tdpbusd do 256 times as many an instruction (below). With AVX2 alone, vpmaddwd on bytes
// widened to int16 (below); without AVX2 a plain C loop. All give the same integers.
#include "ckernels.h"
#include "internal.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { I8_MR = 12, I8_NR = 32 };

static size_t up_to(size_t value, size_t step) { return (value + step - 1) / step * step; }

size_t loupe_int8_packed_bytes(size_t n, size_t k) { return up_to(n, I8_NR) * up_to(k, 4); }

size_t loupe_int8_row_bytes(size_t k) { return up_to(k, 4); }

void loupe_int8_pack_weights(size_t n, size_t k, const float *weight, int8_t *packed, float *scales,
                             int32_t *column_sums) {
    size_t k4 = up_to(k, 4), n32 = up_to(n, I8_NR);
    memset(packed, 0, n32 * k4);
    for (size_t j = 0; j < n; j++) {
        const float *row = weight + j * k;
        float maximum = loupe_largest_magnitude(row, k);
        float scale = maximum > 0 ? maximum / 127.0f : 1.0f;
        scales[j] = scale;
        int32_t sum = 0;
        // Panel j / 32; within it, k-group p / 4 holds 32 columns × 4 bytes, column j % 32 at 4 · (j % 32).
        int8_t *panel = packed + (j / I8_NR) * I8_NR * k4;
        for (size_t p = 0; p < k; p++) {
            float q = nearbyintf(row[p] / scale);
            q = q > 127 ? 127 : (q < -127 ? -127 : q);
            panel[(p / 4) * I8_NR * 4 + (j % I8_NR) * 4 + p % 4] = (int8_t)q;
            sum += (int32_t)q;
        }
        column_sums[j] = sum;
    }
}

// The loops once, compiled for each instruction set (AVX-512, AVX2 + FMA, plain): clang
// vectorises the bounds and the rounding of the AVX2 and plain forms. Asymmetric: each row's range
// [min(0, lo), max(0, hi)] is mapped onto 0…255 with a zero point, so a row that is almost all
// positive (GELU's output) keeps all 256 levels.
//
// A row's lowest and highest value (each multiplied by its column's multiplier when there are
// multipliers), 0 included. The compiler keeps fminf/fmaxf reductions scalar (their NaN rules), so
// the vector forms are written with intrinsics. Each ends here: its lanes' bounds (`lanes` of
// them), then the row's columns from `from` one by one (a NaN is passed over throughout).
static inline __attribute__((always_inline)) void finish_bounds(const float *lanes_low, const float *lanes_high,
                                                                int lanes, const float *row, const float *multipliers,
                                                                size_t from, size_t k, float *lo, float *hi) {
    float l = 0, h = 0;
    for (int lane = 0; lane < lanes; lane++) {
        l = lanes_low[lane] < l ? lanes_low[lane] : l;
        h = lanes_high[lane] > h ? lanes_high[lane] : h;
    }
    for (size_t p = from; p < k; p++) {
        float v = multipliers ? row[p] * multipliers[p] : row[p];
        l = v < l ? v : l;
        h = v > h ? v : h;
    }
    *lo = l;
    *hi = h;
}

LOUPE_AVX2 static void row_bounds_avx2(const float *row, const float *multipliers, size_t k, float *lo, float *hi) {
    __m256 low = _mm256_setzero_ps(), high = _mm256_setzero_ps();
    size_t p = 0;
    for (; p + 8 <= k; p += 8) {
        __m256 v = _mm256_loadu_ps(row + p);
        if (multipliers) v = _mm256_mul_ps(v, _mm256_loadu_ps(multipliers + p));
        low = _mm256_min_ps(low, v);
        high = _mm256_max_ps(high, v);
    }
    float lanes_low[8], lanes_high[8];
    _mm256_storeu_ps(lanes_low, low);
    _mm256_storeu_ps(lanes_high, high);
    finish_bounds(lanes_low, lanes_high, 8, row, multipliers, p, k, lo, hi);
}

// Sixteen lanes, two chains each way: one min and one max a step would wait on the last one's
// latency.
LOUPE_AVX512 static void row_bounds_avx512(const float *row, const float *multipliers, size_t k, float *lo, float *hi) {
    __m512 low = _mm512_setzero_ps(), high = _mm512_setzero_ps(), low2 = low, high2 = high;
    size_t p = 0;
    for (; p + 32 <= k; p += 32) {
        __m512 v = _mm512_loadu_ps(row + p), w = _mm512_loadu_ps(row + p + 16);
        if (multipliers) {
            v = _mm512_mul_ps(v, _mm512_loadu_ps(multipliers + p));
            w = _mm512_mul_ps(w, _mm512_loadu_ps(multipliers + p + 16));
        }
        low = _mm512_min_ps(low, v);
        high = _mm512_max_ps(high, v);
        low2 = _mm512_min_ps(low2, w);
        high2 = _mm512_max_ps(high2, w);
    }
    for (; p + 16 <= k; p += 16) {
        __m512 v = _mm512_loadu_ps(row + p);
        if (multipliers) v = _mm512_mul_ps(v, _mm512_loadu_ps(multipliers + p));
        low = _mm512_min_ps(low, v);
        high = _mm512_max_ps(high, v);
    }
    float lanes_low[16], lanes_high[16];
    _mm512_storeu_ps(lanes_low, _mm512_min_ps(low, low2));
    _mm512_storeu_ps(lanes_high, _mm512_max_ps(high, high2));
    finish_bounds(lanes_low, lanes_high, 16, row, multipliers, p, k, lo, hi);
}

// The rounding sixteen lanes at a time. The AVX2 form's compiler contracts v · inverse + offset
// into one FMA, and so does this one, so the two store the same bytes. The pack saturates as
// unsigned, so a lane below 0 (a rounding sliver that truncation takes to 0 in the loops) is
// clamped to 0 first.
LOUPE_AVX512 static void quantize_row_avx512(const float *row, const float *multipliers, size_t k, float inverse,
                                             float offset, uint8_t *out) {
    const __m512 inverses = _mm512_set1_ps(inverse), offsets = _mm512_set1_ps(offset);
    const __m512i top = _mm512_set1_epi32(255), bottom = _mm512_setzero_si512();
    for (size_t p = 0; p < k; p += 16) {
        __mmask16 mask = k - p >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (k - p)) - 1);
        __m512 v = _mm512_maskz_loadu_ps(mask, row + p);
        if (multipliers) v = _mm512_mul_ps(v, _mm512_maskz_loadu_ps(mask, multipliers + p));
        __m512i level = _mm512_cvttps_epi32(_mm512_fmadd_ps(v, inverses, offsets));
        level = _mm512_max_epi32(_mm512_min_epi32(level, top), bottom);
        _mm512_mask_cvtusepi32_storeu_epi8(out + p, mask, level);
    }
}

// `isa`: 2 AVX-512, 1 AVX2, 0 plain.
static inline __attribute__((always_inline)) void quantize_rows_body(size_t m, size_t k, const float *x, size_t ldx,
                                                                     const float *column_multipliers, uint8_t *q,
                                                                     size_t ldq, float *scales, int32_t *zeros,
                                                                     int isa) {
    size_t k4 = up_to(k, 4);
    for (size_t i = 0; i < m; i++) {
        const float *row = x + i * ldx;
        float lo, hi;
        if (isa == 2) {
            row_bounds_avx512(row, column_multipliers, k, &lo, &hi);
        } else if (isa == 1) {
            row_bounds_avx2(row, column_multipliers, k, &lo, &hi);
        } else {
            finish_bounds(NULL, NULL, 0, row, column_multipliers, 0, k, &lo, &hi);
        }
        float scale = hi > lo ? (hi - lo) / 255.0f : 1.0f, inverse = 1.0f / scale;
        float zero = floorf(-lo * inverse + 0.5f);
        scales[i] = scale;
        zeros[i] = (int32_t)zero;
        uint8_t *out = q + i * ldq;
        // + 0.5 and truncation round half up: the sum is ≥ 0 but for rounding (a sliver below 0
        // truncates to 0, as the clamp would), and the clamp catches one that rounds to 256.
        float offset = zero + 0.5f;
        if (isa == 2) {
            quantize_row_avx512(row, column_multipliers, k, inverse, offset, out);
        } else if (column_multipliers) {
            for (size_t p = 0; p < k; p++) {
                int v = (int)(row[p] * column_multipliers[p] * inverse + offset);
                out[p] = (uint8_t)(v > 255 ? 255 : v);
            }
        } else {
            for (size_t p = 0; p < k; p++) {
                int v = (int)(row[p] * inverse + offset);
                out[p] = (uint8_t)(v > 255 ? 255 : v);
            }
        }
        // The padding meets zero weights.
        for (size_t p = k; p < k4; p++) out[p] = (uint8_t)zeros[i];
    }
}

LOUPE_AVX512 static void quantize_rows_avx512(size_t m, size_t k, const float *x, size_t ldx, const float *multipliers,
                                            uint8_t *q, size_t ldq, float *scales, int32_t *zeros) {
    quantize_rows_body(m, k, x, ldx, multipliers, q, ldq, scales, zeros, 2);
}

LOUPE_AVX2 static void quantize_rows_avx2(size_t m, size_t k, const float *x, size_t ldx, const float *multipliers,
                                          uint8_t *q, size_t ldq, float *scales, int32_t *zeros) {
    quantize_rows_body(m, k, x, ldx, multipliers, q, ldq, scales, zeros, 1);
}

static void quantize_rows_baseline(size_t m, size_t k, const float *x, size_t ldx, const float *multipliers,
                                   uint8_t *q, size_t ldq, float *scales, int32_t *zeros) {
    quantize_rows_body(m, k, x, ldx, multipliers, q, ldq, scales, zeros, 0);
}

void loupe_int8_quantize_rows(size_t m, size_t k, const float *x, size_t ldx, const float *column_multipliers,
                              uint8_t *q, size_t ldq, float *scales, int32_t *zeros) {
    if (loupe_has_avx512()) {
        quantize_rows_avx512(m, k, x, ldx, column_multipliers, q, ldq, scales, zeros);
    } else if (loupe_has_avx2_fma()) {
        quantize_rows_avx2(m, k, x, ldx, column_multipliers, q, ldq, scales, zeros);
    } else {
        quantize_rows_baseline(m, k, x, ldx, column_multipliers, q, ldq, scales, zeros);
    }
}

int loupe_has_avx512_vnni(void) {
    static int known = -1;
    if (known < 0)
        known = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
    return known;
}

#define LOUPE_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,fma")))

// c = (acc − z · Σw) · sx · sw + bias for sixteen columns of one row, masked at the edge: the
// epilogue of both the VNNI tile and the AMX tiles, so the two store the same bits.
LOUPE_VNNI static inline __attribute__((always_inline)) void int8_store16(__m512i acc, __m512i column_sums, __m512 ws,
                                                                          __m512 bv, float a_scale, int32_t a_zero,
                                                                          float *c, __mmask16 mask) {
    __m512i shift = _mm512_mullo_epi32(column_sums, _mm512_set1_epi32(a_zero));
    __m512 v = _mm512_cvtepi32_ps(_mm512_sub_epi32(acc, shift));
    __m512 y = _mm512_fmadd_ps(v, _mm512_mul_ps(ws, _mm512_set1_ps(a_scale)), bv);
    _mm512_mask_storeu_ps(c, mask, y);
}

// The sixteen-column groups of a panel's `nr` columns: the first column, the mask, and the column
// sums, weight scales and bias under it (`h0` the group's first column, `mask` its columns).
#define INT8_FOR_EACH_HALF(nr, sums, w_scales, bias, body)                                                            \
    for (size_t half = 0; half < 2 && 16 * half < (nr); half++) {                                                      \
        size_t h0 = 16 * half, width = (nr) - h0 < 16 ? (nr) - h0 : 16;                                                \
        __mmask16 mask = (__mmask16)((1u << width) - 1);                                                               \
        __m512i column_sums = _mm512_maskz_loadu_epi32(mask, (sums) + h0);                                             \
        __m512 ws = _mm512_maskz_loadu_ps(mask, (w_scales) + h0);                                                      \
        __m512 bv = (bias) ? _mm512_maskz_loadu_ps(mask, (bias) + h0) : _mm512_setzero_ps();                           \
        body                                                                                                           \
    }

LOUPE_VNNI static void int8_tile_vnni(size_t groups, const uint8_t *a, size_t lda, size_t mr, const int8_t *b,
                                      const float *a_scales, const int32_t *a_zeros, const float *w_scales,
                                      const int32_t *sums, const float *bias, float *c, size_t ldc, size_t nr) {
    __m512i acc[I8_MR][2];
    for (int i = 0; i < I8_MR; i++) acc[i][0] = acc[i][1] = _mm512_setzero_si512();
    const uint8_t *rows[I8_MR];
    // Rows past mr repeat the last real one: their sums are computed and thrown away.
    for (size_t i = 0; i < I8_MR; i++) rows[i] = a + (i < mr ? i : mr - 1) * lda;
    for (size_t g = 0; g < groups; g++) {
        __m512i b0 = _mm512_loadu_si512(b), b1 = _mm512_loadu_si512(b + 64);
        // The weight panel 16 groups ahead: the first row tile of a panel reads it from L3 or
        // memory, and without the prefetch it waits for each line (3–12% over MiniLM's 24 layers).
        _mm_prefetch((const char *)(b + 16 * I8_NR * 4), _MM_HINT_T0);
        _mm_prefetch((const char *)(b + 16 * I8_NR * 4 + 64), _MM_HINT_T0);
        for (int i = 0; i < I8_MR; i++) {
            int32_t four;
            memcpy(&four, rows[i] + 4 * g, 4);
            __m512i x = _mm512_set1_epi32(four);
            acc[i][0] = _mm512_dpbusd_epi32(acc[i][0], x, b0);
            acc[i][1] = _mm512_dpbusd_epi32(acc[i][1], x, b1);
        }
        b += I8_NR * 4;
    }
    INT8_FOR_EACH_HALF(nr, sums, w_scales, bias, {
        for (size_t i = 0; i < mr; i++)
            int8_store16(acc[i][half], column_sums, ws, bv, a_scales[i], a_zeros[i], c + i * ldc + h0, mask);
    })
}

// With AVX2 alone (Haswell to Skylake, Zen 1 to 3): the products in 16 bits, exact. vpmaddubsw
// (u8 × s8 pairs summed into int16, as an AVX2 int8 GEMM usually does) saturates: 255 · 127 · 2 is
// past 32,767, so it would change the sums wherever a row's bytes and a column's weights are both
// large, and with them the bits VNNI and AMX store. Here both sides are widened to int16 and
// vpmaddwd multiplies pairs into int32, 16 multiply-adds an instruction (a quarter of vpdpbusd's
// 64, with a vpaddd beside it); the weight panel is widened once per call into a scratch copy, the
// row's four bytes are widened as they are broadcast. A lane holds one column's sum over an input
// pair, so a register is 4 columns × 2 pairs and the pairs are added as the tile is stored. Tile 2
// rows × 16 columns: 8 accumulators, 4 weight registers and the broadcast of the 16 ymm registers
// (at 3 rows the compiler spilled accumulators every group, and ran at less than half the speed).
enum { I8_AVX2_MR = 2 };

// c = (acc − z · Σw) · sx · sw + bias for eight columns of one row: int8_store16's arithmetic in
// eight lanes, so the vector forms (and the plain loop's fmaf) store the same bits.
LOUPE_AVX2 static inline __attribute__((always_inline)) void int8_store8(__m256i acc, __m256i column_sums, __m256 ws,
                                                                         __m256 bv, float a_scale, int32_t a_zero,
                                                                         float *c, size_t width) {
    __m256i shift = _mm256_mullo_epi32(column_sums, _mm256_set1_epi32(a_zero));
    __m256 v = _mm256_cvtepi32_ps(_mm256_sub_epi32(acc, shift));
    __m256 y = _mm256_fmadd_ps(v, _mm256_mul_ps(ws, _mm256_set1_ps(a_scale)), bv);
    if (width == 8) {
        _mm256_storeu_ps(c, y);
    } else {
        float lanes[8];
        _mm256_storeu_ps(lanes, y);
        memcpy(c, lanes, width * sizeof(float));
    }
}

// The panel's bytes (groups × 32 columns × 4) as int16, in the same order.
LOUPE_AVX2 static void int8_widen_panel(size_t groups, const int8_t *panel, int16_t *wide) {
    for (size_t i = 0; i < groups * I8_NR * 4; i += 16)
        _mm256_storeu_si256((__m256i *)(wide + i), _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(panel + i))));
}

// Sixteen columns (`h0` the first within the widened panel `wide`) of up to two rows.
LOUPE_AVX2 static void int8_tile_avx2(size_t groups, const uint8_t *a, size_t lda, size_t mr, const int16_t *wide,
                                      size_t h0, const float *a_scales, const int32_t *a_zeros, const float *w_scales,
                                      const int32_t *sums, const float *bias, float *c, size_t ldc, size_t nr) {
    __m256i acc[I8_AVX2_MR][4];
    for (int i = 0; i < I8_AVX2_MR; i++)
        for (int q = 0; q < 4; q++) acc[i][q] = _mm256_setzero_si256();
    const uint8_t *rows[I8_AVX2_MR];
    for (size_t i = 0; i < I8_AVX2_MR; i++) rows[i] = a + (i < mr ? i : mr - 1) * lda;
    const int16_t *w = wide + 4 * h0;
    for (size_t g = 0; g < groups; g++, w += I8_NR * 4) {
        for (int i = 0; i < I8_AVX2_MR; i++) {
            int32_t four;
            memcpy(&four, rows[i] + 4 * g, 4);
            // The row's four bytes as int16, once in each 64-bit quarter: the four inputs of a column.
            __m256i x = _mm256_cvtepu8_epi16(_mm_set1_epi32(four));
            for (int q = 0; q < 4; q++)
                acc[i][q] = _mm256_add_epi32(
                    acc[i][q], _mm256_madd_epi16(x, _mm256_loadu_si256((const __m256i *)(w + 16 * q))));
        }
    }
    for (size_t half = 0; half < 2 && 8 * half < nr; half++) {
        size_t c0 = 8 * half, width = nr - c0 < 8 ? nr - c0 : 8;
        // Masked loads: past the last column, nothing is read.
        __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)width), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        __m256i column_sums = _mm256_maskload_epi32(sums + c0, mask);
        __m256 ws = _mm256_maskload_ps(w_scales + c0, mask);
        __m256 bv = bias ? _mm256_maskload_ps(bias + c0, mask) : _mm256_setzero_ps();
        for (size_t i = 0; i < mr; i++) {
            // Columns 0–3 and 4–7 each as pairs of lanes: hadd gives 0 1 4 5 | 2 3 6 7, the
            // permutation puts them in order.
            __m256i pairs = _mm256_hadd_epi32(acc[i][2 * half], acc[i][2 * half + 1]);
            __m256i total = _mm256_permute4x64_epi64(pairs, _MM_SHUFFLE(3, 1, 2, 0));
            int8_store8(total, column_sums, ws, bv, a_scales[i], a_zeros[i], c + i * ldc + c0, width);
        }
    }
}

// Panels outside, rows inside, as the VNNI form: each panel is widened once and stays in L2 (24
// KiB at 384 inputs, 96 KiB at 1,536) while the rows pass over it. Returns -1, having done nothing, when the
// scratch copy cannot be had.
static int int8_linear_avx2(size_t m, size_t n, size_t groups, const uint8_t *a, size_t lda, const float *a_scales,
                             const int32_t *a_zeros, const int8_t *packed, const float *w_scales,
                             const int32_t *column_sums, const float *bias, float *c, size_t ldc) {
    int16_t *wide = aligned_alloc(64, groups * I8_NR * 4 * sizeof(int16_t));
    if (!wide) return -1;
    for (size_t j0 = 0; j0 < n; j0 += I8_NR) {
        size_t nr = n - j0 < I8_NR ? n - j0 : I8_NR;
        int8_widen_panel(groups, packed + (j0 / I8_NR) * I8_NR * groups * 4, wide);
        for (size_t i0 = 0; i0 < m; i0 += I8_AVX2_MR) {
            size_t mr = m - i0 < I8_AVX2_MR ? m - i0 : I8_AVX2_MR;
            for (size_t h0 = 0; h0 < nr; h0 += 16)
                int8_tile_avx2(groups, a + i0 * lda, lda, mr, wide, h0, a_scales + i0, a_zeros + i0,
                               w_scales + j0 + h0, column_sums + j0 + h0, bias ? bias + j0 + h0 : NULL,
                               c + i0 * ldc + j0 + h0, ldc, nr - h0 < 16 ? nr - h0 : 16);
        }
    }
    free(wide);
    return 0;
}

// AMX (Sapphire Rapids and later): eight tile registers of 16 rows × 64 bytes, and tdpbusd, which
// multiplies a 16 × 64 u8 tile by a 16 × 64 s8 tile holding 16 groups of 4 inputs for 16 columns
// (the bytes vpdpbusd reads, 16 columns wide) into 16 × 16 int32: 16,384 multiply-adds an
// instruction, about eleven times what vpdpbusd does a cycle here. A 32-column weight panel is two
// such B tiles side by side (row stride 128 bytes), so the VNNI packing serves unchanged.
//
// Tiles 0–3 hold C, 32 rows × 32 columns (row block r, column half h in tile 2r + h); 4 and 5 the
// two row blocks of A; 6 and 7 the two halves of B. The sums are the same integers as VNNI's, and
// the epilogue is the same code, so the two forms store the same bits. Inputs are taken 64 at a
// time, so AMX runs when k is a multiple of 64 (MiniLM's 384 and 1536) and VNNI otherwise.
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

int loupe_amx_permitted(void) {
    static int known = -1;
    if (known < 0) {
        int usable = 0;
#if defined(__linux__) && defined(SYS_arch_prctl)
        // Linux gives a process the 8 KiB tile state only once it asks (arch_prctl
        // ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA, Linux 5.16+); before that the first tile
        // instruction is a fault. The permission is the whole process's.
        enum { ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18 };
        usable = __builtin_cpu_supports("amx-tile") && syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
#endif
        known = usable;
    }
    return known;
}

int loupe_has_amx_int8(void) {
    static int known = -1;
    if (known < 0) known = loupe_has_avx512_vnni() && __builtin_cpu_supports("amx-int8") && loupe_amx_permitted();
    return known;
}

#define LOUPE_AMX __attribute__((target("amx-tile,amx-int8,avx512f,avx512bw,avx512vl,avx512vnni,fma")))

// The 64 bytes `ldtilecfg` reads: palette 1 has eight tiles of up to 16 rows × 64 bytes.
typedef struct {
    uint8_t palette, start_row, reserved[14];
    uint16_t bytes_per_row[16];
    uint8_t rows[16];
} amx_config;

__attribute__((target("amx-tile"))) void loupe_amx_configure(size_t top, size_t bottom) {
    amx_config config;
    memset(&config, 0, sizeof config);
    config.palette = 1;
    const uint8_t rows[8] = {(uint8_t)top, (uint8_t)top, (uint8_t)bottom, (uint8_t)bottom,
                             (uint8_t)top, (uint8_t)bottom, 16, 16};
    for (int t = 0; t < 8; t++) {
        config.rows[t] = rows[t];
        config.bytes_per_row[t] = rows[t] ? 64 : 0;
    }
    _tile_loadconfig(&config);
}

// One 32-column panel against `mr` ≤ 32 rows of A, the int32 sums stored in `out` (32 × 32).
LOUPE_AMX static inline __attribute__((always_inline)) void amx_block(size_t steps, const uint8_t *a, size_t lda,
                                                                    int two, const int8_t *panel, int32_t *out) {
    _tile_zero(0);
    _tile_zero(1);
    if (two) {
        _tile_zero(2);
        _tile_zero(3);
    }
    for (size_t s = 0; s < steps; s++) {
        const int8_t *b = panel + s * 16 * I8_NR * 4;
        _tile_loadd(6, b, I8_NR * 4);
        _tile_loadd(7, b + 64, I8_NR * 4);
        _tile_loadd(4, a + 64 * s, lda);
        _tile_dpbusd(0, 4, 6);
        _tile_dpbusd(1, 4, 7);
        if (two) {
            _tile_loadd(5, a + 16 * lda + 64 * s, lda);
            _tile_dpbusd(2, 5, 6);
            _tile_dpbusd(3, 5, 7);
        }
    }
    _tile_stored(0, out, 32 * 4);
    _tile_stored(1, out + 16, 32 * 4);
    if (two) {
        _tile_stored(2, out + 16 * 32, 32 * 4);
        _tile_stored(3, out + 16 * 32 + 16, 32 * 4);
    }
}

// The epilogue of one block: `mr` ≤ 32 rows from row i0 against the panel of columns from p0,
// their int32 sums in `out`.
LOUPE_AMX static inline __attribute__((always_inline)) void amx_store(size_t i0, size_t mr, size_t p0, size_t n,
                                                                    const float *a_scales, const int32_t *a_zeros,
                                                                    const float *w_scales, const int32_t *column_sums,
                                                                    const float *bias, float *c, size_t ldc,
                                                                    const int32_t *out) {
    size_t nr = n - p0 < I8_NR ? n - p0 : I8_NR;
    const int32_t *sums = column_sums + p0;
    const float *scales = w_scales + p0, *b = bias ? bias + p0 : NULL;
    INT8_FOR_EACH_HALF(nr, sums, scales, b, {
        for (size_t i = 0; i < mr; i++)
            int8_store16(_mm512_loadu_si512(out + i * 32 + h0), column_sums, ws, bv, a_scales[i0 + i], a_zeros[i0 + i],
                         c + (i0 + i) * ldc + p0 + h0, mask);
    })
}

// The `mr` ≤ 32 rows from row i0 against every panel. The epilogue of panel p − 1 comes after
// the tile instructions of panel p in program order, so the core works on it while the tile unit
// works through p's products (two buffers of sums).
LOUPE_AMX static void amx_rows(size_t steps, size_t i0, size_t mr, size_t n, const uint8_t *a, size_t lda,
                               const float *a_scales, const int32_t *a_zeros, const int8_t *packed,
                               const float *w_scales, const int32_t *column_sums, const float *bias, float *c,
                               size_t ldc) {
    int32_t out[2][32 * 32];
    size_t panels = (n + I8_NR - 1) / I8_NR;
    for (size_t p = 0; p <= panels; p++) {
        if (p < panels) amx_block(steps, a + i0 * lda, lda, mr > 16, packed + p * I8_NR * steps * 64, out[p & 1]);
        if (p > 0)
            amx_store(i0, mr, (p - 1) * I8_NR, n, a_scales, a_zeros, w_scales, column_sums, bias, c, ldc,
                      out[(p - 1) & 1]);
    }
}

LOUPE_AMX static void int8_linear_amx(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, const float *a_scales,
                                      const int32_t *a_zeros, const int8_t *packed, const float *w_scales,
                                      const int32_t *column_sums, const float *bias, float *c, size_t ldc) {
    size_t steps = k / 64, full = m / 32 * 32;
    // Row blocks outside, panels inside: a block of A (32 rows) stays in L1 across the panels. The
    // other order (each panel across the row blocks) measured the same.
    if (full) {
        loupe_amx_configure(16, 16);
        for (size_t i0 = 0; i0 < full; i0 += 32)
            amx_rows(steps, i0, 32, n, a, lda, a_scales, a_zeros, packed, w_scales, column_sums, bias, c, ldc);
    }
    if (full < m) {
        size_t mr = m - full, top = mr < 16 ? mr : 16;
        loupe_amx_configure(top, mr - top);
        amx_rows(steps, full, mr, n, a, lda, a_scales, a_zeros, packed, w_scales, column_sums, bias, c, ldc);
    }
    _tile_release();
}

static void int8_tile_baseline(size_t groups, const uint8_t *a, size_t lda, size_t mr, const int8_t *b,
                               const float *a_scales, const int32_t *a_zeros, const float *w_scales,
                               const int32_t *sums, const float *bias, float *c, size_t ldc, size_t nr) {
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++) {
            int32_t acc = 0;
            for (size_t g = 0; g < groups; g++)
                for (size_t t = 0; t < 4; t++)
                    acc += (int32_t)a[i * lda + 4 * g + t] * (int32_t)b[g * I8_NR * 4 + j * 4 + t];
            // Fused as the vector epilogues are (one rounding), so every form stores the same bits.
            c[i * ldc + j] = fmaf((float)(acc - a_zeros[i] * sums[j]), w_scales[j] * a_scales[i], bias ? bias[j] : 0);
        }
}

// The widest form up to `widest` that this CPU and, for AMX, the operating system allow.
static loupe_int8_form usable_form(loupe_int8_form widest) {
    if (widest >= LOUPE_INT8_AMX && loupe_has_amx_int8()) return LOUPE_INT8_AMX;
    if (widest >= LOUPE_INT8_VNNI && loupe_has_avx512_vnni()) return LOUPE_INT8_VNNI;
    if (widest >= LOUPE_INT8_AVX2 && loupe_has_avx2_fma()) return LOUPE_INT8_AVX2;
    return LOUPE_INT8_PORTABLE;
}

void loupe_int8_linear_form(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, const float *a_scales,
                            const int32_t *a_zeros, const int8_t *packed, const float *w_scales,
                            const int32_t *column_sums, const float *bias, float *c, size_t ldc,
                            loupe_int8_form widest) {
    loupe_int8_form form = usable_form(widest);
    size_t k4 = up_to(k, 4), groups = k4 / 4;
    if (m == 0) return;
    if (form == LOUPE_INT8_AMX && k4 % 64 == 0) {
        int8_linear_amx(m, n, k4, a, lda, a_scales, a_zeros, packed, w_scales, column_sums, bias, c, ldc);
        return;
    }
    if (form == LOUPE_INT8_AVX2 &&
        int8_linear_avx2(m, n, groups, a, lda, a_scales, a_zeros, packed, w_scales, column_sums, bias, c, ldc) == 0)
        return;
    for (size_t j0 = 0; j0 < n; j0 += I8_NR) {
        size_t nr = n - j0 < I8_NR ? n - j0 : I8_NR;
        const int8_t *panel = packed + (j0 / I8_NR) * I8_NR * groups * 4;
        for (size_t i0 = 0; i0 < m; i0 += I8_MR) {
            size_t mr = m - i0 < I8_MR ? m - i0 : I8_MR;
            if (form >= LOUPE_INT8_VNNI) {
                int8_tile_vnni(groups, a + i0 * lda, lda, mr, panel, a_scales + i0, a_zeros + i0, w_scales + j0,
                               column_sums + j0, bias ? bias + j0 : NULL, c + i0 * ldc + j0, ldc, nr);
            } else {
                int8_tile_baseline(groups, a + i0 * lda, lda, mr, panel, a_scales + i0, a_zeros + i0, w_scales + j0,
                                   column_sums + j0, bias ? bias + j0 : NULL, c + i0 * ldc + j0, ldc, nr);
            }
        }
    }
}

static _Atomic loupe_int8_form process_widest = LOUPE_INT8_AMX;

void loupe_int8_set_widest(loupe_int8_form widest) { process_widest = widest; }

loupe_int8_form loupe_int8_widest(void) { return usable_form(process_widest); }

void loupe_int8_linear(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, const float *a_scales,
                       const int32_t *a_zeros, const int8_t *packed, const float *w_scales, const int32_t *column_sums,
                       const float *bias, float *c, size_t ldc) {
    loupe_int8_linear_form(m, n, k, a, lda, a_scales, a_zeros, packed, w_scales, column_sums, bias, c, ldc,
                           process_widest);
}

// The int8 compute roof: independent multiply-add chains on registers, as the fp32 FMA loop in
// measure.c does for FP32. An operation is a multiply or an add, so a u8 × s8 multiply-add is 2.

LOUPE_VNNI static int32_t int8_peak_vnni(uint64_t iterations) {
    __m512i acc[12];
    for (int i = 0; i < 12; i++) acc[i] = _mm512_setzero_si512();
    const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
    for (uint64_t it = 0; it < iterations; it++) {
        for (int i = 0; i < 12; i++) acc[i] = _mm512_dpbusd_epi32(acc[i], a, b);
        __asm__ volatile("" : "+v"(acc[0]), "+v"(acc[1]), "+v"(acc[2]), "+v"(acc[3]), "+v"(acc[4]), "+v"(acc[5]),
                         "+v"(acc[6]), "+v"(acc[7]), "+v"(acc[8]), "+v"(acc[9]), "+v"(acc[10]), "+v"(acc[11]));
    }
    __m512i sum = acc[0];
    for (int i = 1; i < 12; i++) sum = _mm512_add_epi32(sum, acc[i]);
    return _mm512_reduce_add_epi32(sum);
}

// With AMX: four independent tdpbusd on tiles 0–3 from tiles 4–7, each 16 × 16 × 64 multiply-adds.
LOUPE_AMX static int32_t int8_peak_amx(uint64_t iterations) {
    loupe_amx_configure(16, 16);
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    _tile_zero(4);
    _tile_zero(5);
    _tile_zero(6);
    _tile_zero(7);
    for (uint64_t it = 0; it < iterations; it++) {
        _tile_dpbusd(0, 4, 6);
        _tile_dpbusd(1, 4, 7);
        _tile_dpbusd(2, 5, 6);
        _tile_dpbusd(3, 5, 7);
    }
    int32_t out[16 * 16];
    _tile_stored(0, out, 64);
    _tile_release();
    return out[0];
}

// Without VNNI: vpmaddwd on int16 and vpaddd, what the AVX2 tile does. The input passes through
// an empty asm each round, so the products are not hoisted out of the loop as loop-invariant (a
// loop over constants measures only the adds: 2.5 times this), and each chain has its own
// multiplier, so they are not one product either.
__attribute__((target("avx2"))) static int32_t int8_peak_avx2(uint64_t iterations) {
    __m256i acc[6], b[6];
    for (int i = 0; i < 6; i++) {
        acc[i] = _mm256_setzero_si256();
        b[i] = _mm256_set1_epi16((short)(-2 - i));
    }
    __m256i a = _mm256_set1_epi16(3);
    for (uint64_t it = 0; it < iterations; it++) {
        __asm__ volatile("" : "+x"(a));
        for (int i = 0; i < 6; i++) acc[i] = _mm256_add_epi32(acc[i], _mm256_madd_epi16(a, b[i]));
        __asm__ volatile("" : "+x"(acc[0]), "+x"(acc[1]), "+x"(acc[2]), "+x"(acc[3]), "+x"(acc[4]), "+x"(acc[5]));
    }
    __m256i sum = acc[0];
    for (int i = 1; i < 6; i++) sum = _mm256_add_epi32(sum, acc[i]);
    uint32_t lanes[8];
    _mm256_storeu_si256((__m256i *)lanes, sum);
    // Unsigned: the lanes wrap as the vector adds do, and a signed sum may overflow.
    uint32_t total = 0;
    for (int i = 0; i < 8; i++) total += lanes[i];
    return (int32_t)total;
}

int32_t loupe_int8_peak(uint64_t iterations) {
    if (loupe_has_amx_int8()) return int8_peak_amx(iterations);
    if (loupe_has_avx512_vnni()) return int8_peak_vnni(iterations);
    if (loupe_has_avx2_fma()) return int8_peak_avx2(iterations);
    // The portable kernel's own arithmetic: int32 multiply-adds of widened bytes.
    // Unsigned, so that a long loop wraps instead of overflowing (undefined for int32_t).
    uint32_t acc[64] = {0};
    volatile int8_t b = -2;
    for (uint64_t it = 0; it < iterations; it++) {
        for (int lane = 0; lane < 64; lane++) acc[lane] += (uint32_t)((int32_t)(uint8_t)(3 + lane) * b);
    }
    uint32_t total = 0;
    for (int lane = 0; lane < 64; lane++) total += acc[lane];
    return (int32_t)total;
}

uint64_t loupe_int8_ops_per_iteration(void) {
    if (loupe_has_amx_int8()) return 4 * 16 * 16 * 64 * 2;
    if (loupe_has_avx512_vnni()) return 12 * 64 * 2;
    if (loupe_has_avx2_fma()) return 6 * 16 * 2;
    return 64 * 2;
}

const char *loupe_int8_peak_method(void) {
    if (loupe_has_amx_int8()) return "tdpbusd loop, AMX-INT8 tiles";
    if (loupe_has_avx512_vnni()) return "vpdpbusd loop, AVX-512 VNNI";
    if (loupe_has_avx2_fma()) return "vpmaddwd + vpaddd loop, AVX2, 16-bit products";
    return "scalar int32 multiply-add loop";
}
