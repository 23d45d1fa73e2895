// GGUF's quantized weights (Q4_1, Q8_0) times activations quantized to 8 bits per block of 32, as
// integer dot products: per block, d_w · d_x · Σ q_w · q_x (+ m_w · s_x for Q4_1's min), the
// integer sum exact in every form.
//
// The weights are repacked once, when a matrix is loaded, into groups of 16 rows: for each block
// of 32 columns, row r's bytes for four columns sit in lane r of a 64-byte vector, so one
// vpdpbusd multiplies four columns of 16 rows by the same four activation bytes (broadcast) and
// adds them into the row's own lane. No horizontal sums, and each unpacked weight vector serves
// every token of a tile (prefill). Rows in lanes also make every form bit-identical: each row's
// blocks are accumulated one after another, in the same order and with the same fused
// multiply-adds, in the portable loop and in each SIMD form.
//
// Group layouts (the same bytes as GGUF's blocks, rearranged; 16 rows × one block each):
//   Q4_1, 320 bytes: 4 × 64 bytes of nibbles — vector h, lane r: bytes 4h…4h+3 of row r's qs,
//        whose low nibbles are columns 4h…4h+3 and high nibbles columns 16+4h…16+4h+3 — then the
//        16 rows' fp16 d, then their fp16 m.
//   Q8_0, 544 bytes: 8 × 64 bytes — vector g, lane r: row r's int8 columns 4g…4g+3 — then the 16
//        rows' fp16 d.
// Groups are stored group-major (all blocks of rows 0–15, then rows 16–31…), so a product
// streams the matrix once, in order; rows past the matrix's last are zero.
#include "ckernels.h"
#include "internal.h"
#include <math.h>
#include <string.h>

#pragma STDC FP_CONTRACT OFF

enum { QROWS = 16, QK = 32, Q4_1_GROUP = 320, Q8_0_GROUP = 544, Q4_1_BLOCK = 20, Q8_0_BLOCK = 34 };

#define TARGET_AVX2 __attribute__((target("avx2,fma,f16c")))
#define TARGET_AVXVNNI __attribute__((target("avx2,fma,f16c,avxvnni")))
#define TARGET_VNNI512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,fma,f16c")))

// fp16 → fp32, exact (every half is a float); the portable form's, and the repacking's.
static inline float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exponent = (h >> 10) & 0x1Fu, mantissa = h & 0x3FFu, bits;
    if (exponent == 0) {
        float magnitude = (float)mantissa * 0x1p-24f;  // zero or subnormal: exact
        memcpy(&bits, &magnitude, 4);
        bits |= sign;
    } else if (exponent == 31) {
        bits = sign | 0x7F800000u | (mantissa << 13);
    } else {
        bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
    }
    float out;
    memcpy(&out, &bits, 4);
    return out;
}

static inline uint16_t read_u16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }

float loupe_half_to_float(uint16_t half) { return half_to_float(half); }

// MARK: - Forms

static int has_avx2_f16c(void) {
    static int known = -1;
    if (known < 0)
        known = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
    return known;
}

static int has_avx_vnni(void) {
    static int known = -1;
    if (known < 0) known = has_avx2_f16c() && __builtin_cpu_supports("avxvnni");
    return known;
}

static int has_avx512_vnni(void) {
    static int known = -1;
    if (known < 0)
        known = has_avx2_f16c() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
    return known;
}

loupe_quant_form loupe_quant_usable_form(loupe_quant_form widest) {
    if (widest >= LOUPE_QUANT_AVX512_VNNI && has_avx512_vnni()) return LOUPE_QUANT_AVX512_VNNI;
    if (widest >= LOUPE_QUANT_AVX_VNNI && has_avx_vnni()) return LOUPE_QUANT_AVX_VNNI;
    if (widest >= LOUPE_QUANT_AVX2 && has_avx2_f16c()) return LOUPE_QUANT_AVX2;
    return LOUPE_QUANT_PORTABLE;
}

// MARK: - Activations

// One block: d = amax / 127, q = x · (1/d) clamped to ±127 (a NaN to −127, as max(v, −127) takes
// it in both forms), rounded to nearest even. The portable loop and the AVX-512 one perform the
// same float operations, so they store the same bytes.
static void quantize_block_portable(const float *x, loupe_q8_block *out) {
    float amax = 0;
    for (int j = 0; j < QK; j++) {
        float a = fabsf(x[j]);
        amax = a > amax ? a : amax;
    }
    float d = amax / 127.0f, inverse = d != 0 ? 1.0f / d : 0.0f;
    int32_t sum = 0;
    for (int j = 0; j < QK; j++) {
        float v = x[j] * inverse;
        v = v > -127.0f ? v : -127.0f;
        v = v < 127.0f ? v : 127.0f;
        int q = (int)nearbyintf(v);
        out->q[j] = (int8_t)q;
        sum += q;
    }
    out->d = d;
    out->sum = sum;
    out->s = d * (float)sum;
    out->reserved = 0;
}

TARGET_VNNI512 static void quantize_row_avx512(const float *x, size_t blocks, loupe_q8_block *out) {
    const __m512 low = _mm512_set1_ps(-127.0f), high = _mm512_set1_ps(127.0f);
    for (size_t b = 0; b < blocks; b++) {
        __m512 v0 = _mm512_loadu_ps(x + b * QK), v1 = _mm512_loadu_ps(x + b * QK + 16);
        // max(|x|, acc): a NaN lane keeps acc, as the portable loop passes over it.
        __m512 amax = _mm512_max_ps(_mm512_abs_ps(v0), _mm512_setzero_ps());
        amax = _mm512_max_ps(_mm512_abs_ps(v1), amax);
        float d = _mm512_reduce_max_ps(amax) / 127.0f, inverse = d != 0 ? 1.0f / d : 0.0f;
        __m512 inverses = _mm512_set1_ps(inverse);
        v0 = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(v0, inverses), low), high);
        v1 = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(v1, inverses), low), high);
        __m512i q0 = _mm512_cvtps_epi32(v0), q1 = _mm512_cvtps_epi32(v1);  // MXCSR: nearest even
        _mm_storeu_si128((__m128i *)out[b].q, _mm512_cvtepi32_epi8(q0));
        _mm_storeu_si128((__m128i *)(out[b].q + 16), _mm512_cvtepi32_epi8(q1));
        int32_t sum = _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
        out[b].d = d;
        out[b].sum = sum;
        out[b].s = d * (float)sum;
        out[b].reserved = 0;
    }
}

void loupe_q8_quantize_rows_form(size_t rows, size_t k, const float *x, size_t ldx, loupe_q8_block *out,
                                 loupe_quant_form widest) {
    size_t blocks = k / QK;
    int simd = loupe_quant_usable_form(widest) == LOUPE_QUANT_AVX512_VNNI;
    for (size_t i = 0; i < rows; i++) {
        const float *row = x + i * ldx;
        loupe_q8_block *blocks_out = out + i * blocks;
        if (simd) {
            quantize_row_avx512(row, blocks, blocks_out);
        } else {
            for (size_t b = 0; b < blocks; b++) quantize_block_portable(row + b * QK, blocks_out + b);
        }
    }
}

void loupe_q8_quantize_rows(size_t rows, size_t k, const float *x, size_t ldx, loupe_q8_block *out) {
    loupe_q8_quantize_rows_form(rows, k, x, ldx, out, LOUPE_QUANT_AVX512_VNNI);
}

// MARK: - Repacking

size_t loupe_quant_group_bytes(loupe_quant_type type) {
    return type == LOUPE_QUANT_Q4_1 ? Q4_1_GROUP : Q8_0_GROUP;
}

size_t loupe_quant_packed_bytes(loupe_quant_type type, size_t rows, size_t k) {
    return (rows + QROWS - 1) / QROWS * (k / QK) * loupe_quant_group_bytes(type);
}

void loupe_quant_repack(loupe_quant_type type, size_t rows, size_t k, const uint8_t *raw, uint8_t *packed) {
    size_t blocks = k / QK, groups = (rows + QROWS - 1) / QROWS;
    size_t group_bytes = loupe_quant_group_bytes(type);
    size_t raw_block = type == LOUPE_QUANT_Q4_1 ? Q4_1_BLOCK : Q8_0_BLOCK;
    memset(packed, 0, groups * blocks * group_bytes);
    for (size_t r = 0; r < rows; r++) {
        size_t group = r / QROWS, lane = r % QROWS;
        for (size_t b = 0; b < blocks; b++) {
            const uint8_t *block = raw + (r * blocks + b) * raw_block;
            uint8_t *out = packed + (group * blocks + b) * group_bytes;
            if (type == LOUPE_QUANT_Q4_1) {
                for (int h = 0; h < 4; h++) memcpy(out + h * 64 + lane * 4, block + 4 + h * 4, 4);
                memcpy(out + 256 + lane * 2, block, 2);
                memcpy(out + 288 + lane * 2, block + 2, 2);
            } else {
                for (int g = 0; g < 8; g++) memcpy(out + g * 64 + lane * 4, block + 2 + g * 4, 4);
                memcpy(out + 512 + lane * 2, block, 2);
            }
        }
    }
}

void loupe_quant_dequantize_row(loupe_quant_type type, size_t rows, size_t k, const uint8_t *packed, size_t row,
                                float *out) {
    if (row >= rows) return;
    size_t blocks = k / QK, group = row / QROWS, lane = row % QROWS, group_bytes = loupe_quant_group_bytes(type);
    for (size_t b = 0; b < blocks; b++) {
        const uint8_t *g = packed + (group * blocks + b) * group_bytes;
        float *target = out + b * QK;
        if (type == LOUPE_QUANT_Q4_1) {
            float d = half_to_float(read_u16(g + 256 + lane * 2)), m = half_to_float(read_u16(g + 288 + lane * 2));
            for (int h = 0; h < 4; h++)
                for (int i = 0; i < 4; i++) {
                    uint8_t byte = g[h * 64 + lane * 4 + i];
                    target[4 * h + i] = (float)(byte & 0x0F) * d + m;
                    target[16 + 4 * h + i] = (float)(byte >> 4) * d + m;
                }
        } else {
            float d = half_to_float(read_u16(g + 512 + lane * 2));
            for (int c = 0; c < 8; c++)
                for (int i = 0; i < 4; i++) target[4 * c + i] = (float)(int8_t)g[c * 64 + lane * 4 + i] * d;
        }
    }
}

// MARK: - Products

// The canonical order, for one row and one token (every form does exactly this per lane):
//     acc = 0
//     for each block b:  acc = fma((float)Σ_j q_w·q_x, d_w · d_x, acc)
//                        acc = fma(m_w, s_x, acc)                        (Q4_1 only)
static void product_portable(loupe_quant_type type, size_t k, const uint8_t *packed, size_t tokens,
                             const loupe_q8_block *x, float *y, size_t ldy, size_t rows, size_t group_begin,
                             size_t group_end) {
    size_t blocks = k / QK, group_bytes = loupe_quant_group_bytes(type);
    for (size_t group = group_begin; group < group_end; group++) {
        for (size_t lane = 0; lane < QROWS && group * QROWS + lane < rows; lane++) {
            for (size_t t = 0; t < tokens; t++) {
                const loupe_q8_block *xb = x + t * blocks;
                float acc = 0;
                for (size_t b = 0; b < blocks; b++) {
                    const uint8_t *g = packed + (group * blocks + b) * group_bytes;
                    int32_t sum = 0;
                    if (type == LOUPE_QUANT_Q4_1) {
                        for (int h = 0; h < 4; h++)
                            for (int i = 0; i < 4; i++) {
                                uint8_t byte = g[h * 64 + lane * 4 + i];
                                sum += (byte & 0x0F) * xb[b].q[4 * h + i] + (byte >> 4) * xb[b].q[16 + 4 * h + i];
                            }
                        float dd = half_to_float(read_u16(g + 256 + lane * 2)) * xb[b].d;
                        acc = fmaf((float)sum, dd, acc);
                        acc = fmaf(half_to_float(read_u16(g + 288 + lane * 2)), xb[b].s, acc);
                    } else {
                        for (int c = 0; c < 8; c++)
                            for (int i = 0; i < 4; i++)
                                sum += (int8_t)g[c * 64 + lane * 4 + i] * xb[b].q[4 * c + i];
                        float dd = half_to_float(read_u16(g + 512 + lane * 2)) * xb[b].d;
                        acc = fmaf((float)sum, dd, acc);
                    }
                }
                y[t * ldy + group * QROWS + lane] = acc;
            }
        }
    }
}

static inline int32_t x_word(const loupe_q8_block *block, int offset) {
    int32_t word;
    memcpy(&word, block->q + offset, 4);
    return word;
}

// AVX-512 VNNI: one zmm per 16 rows. `T` tokens share each unpacked weight vector. Each token's
// integer sum runs in two chains (even and odd vectors) when there are few tokens, so that the
// dpbusd latency overlaps; with four or more the tokens' chains do that, and one chain each
// leaves registers for eight tokens.
#define VNNI512_BODY(T)                                                                                                \
    do {                                                                                                               \
        enum { S = (T) >= 4 ? 1 : 2 };                                                                                 \
        __m512 acc[T];                                                                                                 \
        for (int t = 0; t < T; t++) acc[t] = _mm512_setzero_ps();                                                      \
        for (size_t b = 0; b < blocks; b++) {                                                                          \
            const uint8_t *g = packed + (group * blocks + b) * group_bytes;                                            \
            __m512i sums[T][S];                                                                                        \
            for (int t = 0; t < T; t++)                                                                                \
                for (int c = 0; c < S; c++) sums[t][c] = _mm512_setzero_si512();                                       \
            __m512 dw, mw = _mm512_setzero_ps();                                                                       \
            if (q41) {                                                                                                 \
                _mm_prefetch((const char *)(g + 8 * Q4_1_GROUP), _MM_HINT_T0);                                         \
                for (int h = 0; h < 4; h++) {                                                                          \
                    __m512i raw = _mm512_loadu_si512(g + h * 64);                                                      \
                    __m512i lo = _mm512_and_si512(raw, nibble);                                                        \
                    __m512i hi = _mm512_and_si512(_mm512_srli_epi16(raw, 4), nibble);                                  \
                    for (int t = 0; t < T; t++) {                                                                      \
                        const loupe_q8_block *xb = x + t * blocks + b;                                                 \
                        sums[t][0] = _mm512_dpbusd_epi32(sums[t][0], lo, _mm512_set1_epi32(x_word(xb, 4 * h)));       \
                        sums[t][S - 1] =                                                                               \
                            _mm512_dpbusd_epi32(sums[t][S - 1], hi, _mm512_set1_epi32(x_word(xb, 16 + 4 * h)));       \
                    }                                                                                                  \
                }                                                                                                      \
                dw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(g + 256)));                                  \
                mw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(g + 288)));                                  \
            } else {                                                                                                   \
                _mm_prefetch((const char *)(g + 6 * Q8_0_GROUP), _MM_HINT_T0);                                         \
                for (int c = 0; c < 8; c += 2) {                                                                       \
                    __m512i w0 = _mm512_xor_si512(_mm512_loadu_si512(g + c * 64), bias128);                            \
                    __m512i w1 = _mm512_xor_si512(_mm512_loadu_si512(g + c * 64 + 64), bias128);                       \
                    for (int t = 0; t < T; t++) {                                                                      \
                        const loupe_q8_block *xb = x + t * blocks + b;                                                 \
                        sums[t][0] = _mm512_dpbusd_epi32(sums[t][0], w0, _mm512_set1_epi32(x_word(xb, 4 * c)));       \
                        sums[t][S - 1] =                                                                               \
                            _mm512_dpbusd_epi32(sums[t][S - 1], w1, _mm512_set1_epi32(x_word(xb, 4 * c + 4)));        \
                    }                                                                                                  \
                }                                                                                                      \
                dw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(g + 512)));                                  \
            }                                                                                                          \
            for (int t = 0; t < T; t++) {                                                                              \
                const loupe_q8_block *xb = x + t * blocks + b;                                                         \
                __m512i sum = S == 2 ? _mm512_add_epi32(sums[t][0], sums[t][S - 1]) : sums[t][0];                      \
                /* The weights were read as q + 128: take 128 · Σ q_x back. */                                     \
                if (!q41) sum = _mm512_sub_epi32(sum, _mm512_set1_epi32(128 * xb->sum));                               \
                __m512 dd = _mm512_mul_ps(dw, _mm512_set1_ps(xb->d));                                                  \
                acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), dd, acc[t]);                                         \
                if (q41) acc[t] = _mm512_fmadd_ps(mw, _mm512_set1_ps(xb->s), acc[t]);                                  \
            }                                                                                                          \
        }                                                                                                              \
        for (int t = 0; t < T; t++) _mm512_mask_storeu_ps(y + (t0 + t) * ldy + group * QROWS, mask, acc[t]);          \
    } while (0)

TARGET_VNNI512 static void product_vnni512(loupe_quant_type type, size_t k, const uint8_t *packed, size_t tokens,
                                           const loupe_q8_block *x_all, float *y, size_t ldy, size_t rows,
                                           size_t group_begin, size_t group_end) {
    size_t blocks = k / QK, group_bytes = loupe_quant_group_bytes(type);
    const int q41 = type == LOUPE_QUANT_Q4_1;
    const __m512i nibble = _mm512_set1_epi8(0x0F), bias128 = _mm512_set1_epi8((char)0x80);
    for (size_t group = group_begin; group < group_end; group++) {
        size_t live = rows - group * QROWS < QROWS ? rows - group * QROWS : QROWS;
        __mmask16 mask = (__mmask16)((1u << live) - 1);
        size_t t0 = 0;
        for (; t0 + 8 <= tokens; t0 += 8) {
            const loupe_q8_block *x = x_all + t0 * blocks;
            VNNI512_BODY(8);
        }
        if (tokens - t0 >= 4) {
            const loupe_q8_block *x = x_all + t0 * blocks;
            VNNI512_BODY(4);
            t0 += 4;
        }
        const loupe_q8_block *x = x_all + t0 * blocks;
        switch (tokens - t0) {
        case 3: VNNI512_BODY(3); break;
        case 2: VNNI512_BODY(2); break;
        case 1: VNNI512_BODY(1); break;
        default: break;
        }
    }
}

// AVX2 and AVX-VNNI: two ymm per 16 rows (rows 0–7 in the low half of each 64-byte vector, 8–15
// in the high). Without VNNI, u8 × s8 pairs by vpmaddubsw (into int16) then vpmaddwd with ones:
// Q4_1's pairs are at most 2 · 15 · 127 in magnitude, far from saturating; Q8_0's weights are
// signed, so |w| × (x with w's sign), at most 2 · 128 · 127 = 32512 < 32767.
#define YMM_BODY(T, DOT_U8, DOT_S8)                                                                                    \
    do {                                                                                                               \
        __m256 acc[T][2];                                                                                              \
        for (int t = 0; t < T; t++) acc[t][0] = acc[t][1] = _mm256_setzero_ps();                                       \
        for (size_t b = 0; b < blocks; b++) {                                                                          \
            const uint8_t *g = packed + (group * blocks + b) * group_bytes;                                            \
            for (int half = 0; half < 2; half++) {                                                                     \
                __m256i sums[T];                                                                                       \
                for (int t = 0; t < T; t++) sums[t] = _mm256_setzero_si256();                                          \
                __m256 dw, mw = _mm256_setzero_ps();                                                                   \
                if (q41) {                                                                                             \
                    for (int h = 0; h < 4; h++) {                                                                      \
                        __m256i raw = _mm256_loadu_si256((const __m256i *)(g + h * 64 + half * 32));                   \
                        __m256i lo = _mm256_and_si256(raw, nibble);                                                    \
                        __m256i hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), nibble);                              \
                        for (int t = 0; t < T; t++) {                                                                  \
                            const loupe_q8_block *xb = x + t * blocks + b;                                             \
                            sums[t] = DOT_U8(sums[t], lo, _mm256_set1_epi32(x_word(xb, 4 * h)));                       \
                            sums[t] = DOT_U8(sums[t], hi, _mm256_set1_epi32(x_word(xb, 16 + 4 * h)));                  \
                        }                                                                                              \
                    }                                                                                                  \
                    dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(g + 256 + half * 16)));                     \
                    mw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(g + 288 + half * 16)));                     \
                } else {                                                                                               \
                    for (int c = 0; c < 8; c++) {                                                                      \
                        __m256i w = _mm256_loadu_si256((const __m256i *)(g + c * 64 + half * 32));                     \
                        for (int t = 0; t < T; t++) {                                                                  \
                            const loupe_q8_block *xb = x + t * blocks + b;                                             \
                            sums[t] = DOT_S8(sums[t], w, _mm256_set1_epi32(x_word(xb, 4 * c)));                        \
                        }                                                                                              \
                    }                                                                                                  \
                    dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(g + 512 + half * 16)));                     \
                }                                                                                                      \
                for (int t = 0; t < T; t++) {                                                                          \
                    const loupe_q8_block *xb = x + t * blocks + b;                                                     \
                    __m256i sum = sums[t];                                                                             \
                    if (!q41 && s8_biased) sum = _mm256_sub_epi32(sum, _mm256_set1_epi32(128 * xb->sum));              \
                    __m256 dd = _mm256_mul_ps(dw, _mm256_set1_ps(xb->d));                                              \
                    acc[t][half] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), dd, acc[t][half]);                         \
                    if (q41) acc[t][half] = _mm256_fmadd_ps(mw, _mm256_set1_ps(xb->s), acc[t][half]);                  \
                }                                                                                                      \
            }                                                                                                          \
        }                                                                                                              \
        for (int t = 0; t < T; t++) {                                                                                  \
            float *out = y + (t0 + t) * ldy + group * QROWS;                                                           \
            if (live == QROWS) {                                                                                       \
                _mm256_storeu_ps(out, acc[t][0]);                                                                      \
                _mm256_storeu_ps(out + 8, acc[t][1]);                                                                  \
            } else {                                                                                                   \
                float lanes[QROWS];                                                                                    \
                _mm256_storeu_ps(lanes, acc[t][0]);                                                                    \
                _mm256_storeu_ps(lanes + 8, acc[t][1]);                                                                \
                memcpy(out, lanes, live * sizeof(float));                                                              \
            }                                                                                                          \
        }                                                                                                              \
    } while (0)

TARGET_AVX2 static inline __m256i avx2_dot_u8(__m256i acc, __m256i u, __m256i s) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
}

TARGET_AVX2 static inline __m256i avx2_dot_s8(__m256i acc, __m256i w, __m256i x) {
    return avx2_dot_u8(acc, _mm256_abs_epi8(w), _mm256_sign_epi8(x, w));
}

TARGET_AVXVNNI static inline __m256i avxvnni_dot_u8(__m256i acc, __m256i u, __m256i s) {
    return _mm256_dpbusd_avx_epi32(acc, u, s);
}

TARGET_AVXVNNI static inline __m256i avxvnni_dot_s8(__m256i acc, __m256i w, __m256i x) {
    return _mm256_dpbusd_avx_epi32(acc, _mm256_xor_si256(w, _mm256_set1_epi8((char)0x80)), x);
}

#define YMM_PRODUCT(NAME, ATTRIBUTE, DOT_U8, DOT_S8, BIASED)                                                           \
    ATTRIBUTE static void NAME(loupe_quant_type type, size_t k, const uint8_t *packed, size_t tokens,                 \
                               const loupe_q8_block *x_all, float *y, size_t ldy, size_t rows, size_t group_begin,     \
                               size_t group_end) {                                                                     \
        size_t blocks = k / QK, group_bytes = loupe_quant_group_bytes(type);                                           \
        const int q41 = type == LOUPE_QUANT_Q4_1, s8_biased = BIASED;                                                  \
        const __m256i nibble = _mm256_set1_epi8(0x0F);                                                                 \
        for (size_t group = group_begin; group < group_end; group++) {                                                 \
            size_t live = rows - group * QROWS < QROWS ? rows - group * QROWS : QROWS;                                 \
            size_t t0 = 0;                                                                                             \
            for (; t0 + 4 <= tokens; t0 += 4) {                                                                        \
                const loupe_q8_block *x = x_all + t0 * blocks;                                                         \
                YMM_BODY(4, DOT_U8, DOT_S8);                                                                           \
            }                                                                                                          \
            const loupe_q8_block *x = x_all + t0 * blocks;                                                             \
            switch (tokens - t0) {                                                                                     \
            case 3: YMM_BODY(3, DOT_U8, DOT_S8); break;                                                                \
            case 2: YMM_BODY(2, DOT_U8, DOT_S8); break;                                                                \
            case 1: YMM_BODY(1, DOT_U8, DOT_S8); break;                                                                \
            default: break;                                                                                            \
            }                                                                                                          \
        }                                                                                                              \
    }

YMM_PRODUCT(product_avx2, TARGET_AVX2, avx2_dot_u8, avx2_dot_s8, 0)
YMM_PRODUCT(product_avxvnni, TARGET_AVXVNNI, avxvnni_dot_u8, avxvnni_dot_s8, 1)

void loupe_quant_product(loupe_quant_type type, size_t rows, size_t k, const uint8_t *packed, size_t tokens,
                         const loupe_q8_block *x, float *y, size_t ldy, size_t group_begin, size_t group_end,
                         loupe_quant_form widest) {
    size_t groups = (rows + QROWS - 1) / QROWS;
    if (group_end > groups) group_end = groups;
    if (group_begin >= group_end || tokens == 0) return;
    switch (loupe_quant_usable_form(widest)) {
    case LOUPE_QUANT_AVX512_VNNI:
        product_vnni512(type, k, packed, tokens, x, y, ldy, rows, group_begin, group_end);
        break;
    case LOUPE_QUANT_AVX_VNNI:
        product_avxvnni(type, k, packed, tokens, x, y, ldy, rows, group_begin, group_end);
        break;
    case LOUPE_QUANT_AVX2:
        product_avx2(type, k, packed, tokens, x, y, ldy, rows, group_begin, group_end);
        break;
    default:
        product_portable(type, k, packed, tokens, x, y, ldy, rows, group_begin, group_end);
        break;
    }
}
