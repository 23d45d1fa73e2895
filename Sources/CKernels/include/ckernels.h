// Elementwise kernels in C, where the compiler vectorises them better than Swift's SIMD types
// on a generic x86-64 target (see docs/decisions/2026-11-22-gelu-in-c.md).
#ifndef LOUPE_CKERNELS_H
#define LOUPE_CKERNELS_H
#include <stddef.h>

/// The core OpenBLAS chose when it loaded, when Loupe replaced it ("Prescott", its fallback for
/// a CPU it does not know; see openblas_core.c), else NULL.
const char *loupe_openblas_replaced_core(void);

/// In place: x = x/2 · (1 + erf(x/√2)), erf by Abramowitz & Stegun 7.1.26 (|error| ≤ 1.5e-7).
/// Uses AVX2 + FMA when the CPU has them (checked at run time), SSE2 otherwise.
void loupe_gelu_f32(float *values, size_t count);

#include <stdint.h>

/// The instruction sets the tiled kernels (blocked matmul, attention) are written for, widest
/// last. A kernel given a level runs the widest form the CPU has up to it, so tests can run every
/// form the CPU can.
typedef enum { LOUPE_ISA_PORTABLE = 0, LOUPE_ISA_AVX2 = 1, LOUPE_ISA_AVX512 = 2 } loupe_isa;

/// Whether the CPU has AVX-512 F, VL, DQ and BW (checked once): the 12 × 32 tiles of the
/// attention kernels.
int loupe_has_avx512(void);

/// c = a · b, row-major, m × k times k × n, the textbook i-j-p triple loop (a scalar dot
/// product per output: the strided column of b and the ordered sum keep it from vectorising).
void loupe_sgemm_naive(size_t m, size_t n, size_t k, const float *a, const float *b, float *c);

/// c = a · b, row-major with row strides, cache-blocked (KC = 256, MC = 72, NC = 2048) around a
/// 12 × 32 AVX-512 register tile, or 6 × 16 with AVX2; single-threaded. Returns 0, or -1 when its
/// panels cannot be allocated.
int loupe_sgemm_blocked(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *b, size_t ldb,
                        float *c, size_t ldc);
/// `loupe_sgemm_blocked` in the widest form up to `widest` that the CPU has.
int loupe_sgemm_blocked_isa(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *b, size_t ldb,
                            float *c, size_t ldc, loupe_isa widest);

/// Per-row symmetric int8 quantisation of a `rows × columns` weight: scale = max|w| / 127,
/// q = round(w / scale) clamped to ±127.
void loupe_quantize_rows_int8(size_t rows, size_t columns, const float *weight, int8_t *quantized, float *scales);

/// c = a · dequant(w)ᵀ: `a` is m × k fp32, `weight` n × k int8 with one scale per row (a Linear
/// layer's layout); the int8 rows are widened and scaled while B is packed. Returns 0 or -1.
int loupe_matmul_int8(size_t m, size_t n, size_t k, const float *a, size_t lda, const int8_t *weight,
                      const float *scales, float *c, size_t ldc);

/// Int8 linear layers (dynamic quantisation; see int8gemm.c). Weights `n × k` (a Linear layer's
/// layout) are quantised per output channel into `loupe_int8_packed_bytes(n, k)` bytes, with a
/// scale and the sum of the quantised row per channel.
size_t loupe_int8_packed_bytes(size_t n, size_t k);
void loupe_int8_pack_weights(size_t n, size_t k, const float *weight, int8_t *packed, float *scales,
                             int32_t *column_sums);
/// Bytes one quantised activation row takes (k rounded up to 4).
size_t loupe_int8_row_bytes(size_t k);
/// Quantises each row of `x` (`m × k`, row stride `ldx`) to bytes q ∈ [0, 255] (row stride
/// `ldq` ≥ loupe_int8_row_bytes(k)) with one scale and one zero point per row: x ≈ (q − zero) ·
/// scale, the row's range [min(0, lo), max(0, hi)] mapped onto 0…255. When
/// `column_multipliers` is not NULL, column p is multiplied by it first (SmoothQuant's smoothing,
/// 1 / s_p; the weight's column p was multiplied by s_p before it was packed).
void loupe_int8_quantize_rows(size_t m, size_t k, const float *x, size_t ldx, const float *column_multipliers,
                              uint8_t *q, size_t ldq, float *scales, int32_t *zeros);
/// The forms of the int8 kernel, widest last: the plain C loop, the AVX2 register tile (products in
/// int16), the AVX-512 VNNI register tile, and AMX's tile registers (which need k a multiple of 64,
/// and run VNNI otherwise). All four store the same bits.
typedef enum { LOUPE_INT8_PORTABLE = 0, LOUPE_INT8_AVX2 = 1, LOUPE_INT8_VNNI = 2, LOUPE_INT8_AMX = 3 } loupe_int8_form;
/// Caps the form `loupe_int8_linear` runs in this process (AMX, the widest, unless set): for
/// comparing the forms on one machine (`loupe bench embed --int8-kernel`).
void loupe_int8_set_widest(loupe_int8_form widest);
/// The form `loupe_int8_linear` runs here: the cap, narrowed to what the CPU has.
loupe_int8_form loupe_int8_widest(void);
/// c = dequant(a) · dequant(w)ᵀ + bias for quantised rows `a` (their scales and zero points) and
/// packed weights: int32 sums in the widest form the CPU has (up to the process's cap), scaled
/// back and biased as they are stored. `bias` may be NULL. The VNNI and AMX forms store the same
/// bits.
void loupe_int8_linear(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, const float *a_scales,
                       const int32_t *a_zeros, const int8_t *packed, const float *w_scales, const int32_t *column_sums,
                       const float *bias, float *c, size_t ldc);
/// `loupe_int8_linear` in the widest form up to `widest` that the CPU has (for tests and benches).
void loupe_int8_linear_form(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, const float *a_scales,
                            const int32_t *a_zeros, const int8_t *packed, const float *w_scales,
                            const int32_t *column_sums, const float *bias, float *c, size_t ldc,
                            loupe_int8_form widest);
/// Whether the CPU has AVX-512 with VNNI (checked once).
int loupe_has_avx512_vnni(void);
/// Whether the CPU has AMX-INT8 and the process may use its tiles (asked of Linux once).
int loupe_has_amx_int8(void);

/// Softmax of each row, three passes: maximum; exp(x − max) written to y and summed; scale.
/// y may equal x.
void loupe_softmax_three_pass(float *y, const float *x, size_t rows, size_t columns);

/// Softmax of each row, online: one pass keeps a running maximum and a rescaled running sum,
/// a second writes exp(x − max) / sum. y may equal x.
void loupe_softmax_online(float *y, const float *x, size_t rows, size_t columns);

/// Layer normalisation of each row: (x − mean) / √(var + ε) · gamma + beta. y may equal x.
void loupe_layernorm(float *y, const float *x, const float *gamma, const float *beta, size_t rows, size_t columns,
                     float epsilon);

/// In place: x = LayerNorm(x + residual) for each row (`residual` may be NULL: plain layer norm),
/// the mean and the variance in two passes.
void loupe_add_layernorm(float *x, const float *residual, const float *gamma, const float *beta, size_t rows,
                         size_t columns, float epsilon);

/// Single-head attention, O = softmax(Q·Kᵀ/√d)·V for T × d row-major Q, K, V, with the T × T
/// scores materialised (loupe_attention_naive_scratch(t) bytes). Returns 0 or -1.
int loupe_attention_naive(size_t t, size_t d, const float *q, const float *k, const float *v, float *o);
size_t loupe_attention_naive_scratch(size_t t);

/// The same attention, tiled with an online softmax, so no T × T matrix exists:
/// loupe_attention_flash_scratch(t, d) bytes of extra memory, O(T·d) for Kᵀ and V packed once.
/// Blocks of 96 query rows × 96 keys on a 12 × 32 tile with AVX-512, 48 × 96 on a 6 × 16 tile with
/// AVX2, the naive form without either.
int loupe_attention_flash(size_t t, size_t d, const float *q, const float *k, const float *v, float *o);
/// `loupe_attention_flash` in the widest form up to `widest` that the CPU has.
int loupe_attention_flash_isa(size_t t, size_t d, const float *q, const float *k, const float *v, float *o,
                              loupe_isa widest);
size_t loupe_attention_flash_scratch(size_t t, size_t d);

/// One sequence of a multi-head attention layer: Q, K, V are `[T, heads · d]` row-major with row
/// stride `stride` (head h is columns h·d ..< (h+1)·d; the three may be column blocks of one fused
/// projection) and only the first `length` rows are real. For every head,
/// O[i, head] += softmax(Q·Kᵀ/√d)[i] · V over the real rows (O, row stride `o_stride`, starts zeroed);
/// `probabilities`, when not NULL, receives the `heads × length × length` attention weights.
/// Returns 0, or -1 when its scratch cannot be allocated.
int loupe_attention_heads(size_t length, size_t heads, size_t d, size_t stride, const float *q, const float *k,
                          const float *v, float *o, size_t o_stride, float *probabilities);
/// `loupe_attention_heads` in the widest form up to `widest` that the CPU has.
int loupe_attention_heads_isa(size_t length, size_t heads, size_t d, size_t stride, const float *q, const float *k,
                              const float *v, float *o, size_t o_stride, float *probabilities, loupe_isa widest);
/// The forms of the int8 encoder's attention, widest last: fp32 (`loupe_attention_heads`), and Q,
/// K, V and the weights rounded to bf16 (scores, softmax and sums in fp32) on AVX-512 BF16
/// registers (vdpbf16ps) or on AMX tiles (tdpbf16ps).
typedef enum {
    LOUPE_ATTENTION_FP32 = 0,
    LOUPE_ATTENTION_BF16_AVX512 = 1,
    LOUPE_ATTENTION_BF16_AMX = 2
} loupe_attention_form;
/// The form `loupe_attention_heads_bf16` runs for heads of `d` given `widest`: the bf16 forms need
/// a head of 32, AVX-512 BF16, and for AMX the tiles and the operating system's leave.
loupe_attention_form loupe_attention_usable_form(size_t d, loupe_attention_form widest);
/// `loupe_attention_heads` (no probabilities) in the widest form up to `widest` usable here.
int loupe_attention_heads_bf16(size_t length, size_t heads, size_t d, size_t stride, const float *q, const float *k,
                               const float *v, float *o, size_t o_stride, loupe_attention_form widest);
/// The widest form the int8 encoder's attention may take in this process (AMX unless set): for
/// comparing the forms on one machine (`loupe bench embed --int8-attention`).
void loupe_attention_set_widest(loupe_attention_form widest);
loupe_attention_form loupe_attention_widest(void);

#endif

#ifndef LOUPE_CKERNELS_MEASURE_H
#define LOUPE_CKERNELS_MEASURE_H
#include <stdint.h>

/// Runs `iterations` rounds of independent fused multiply-adds on registers (no memory traffic)
/// with the widest vectors the CPU has and returns a value derived from the accumulators, so the
/// work cannot be removed: 12 chains of 16 lanes with AVX-512 (OpenBLAS's sgemm runs 512-bit
/// FMAs there, so the AVX2 loop measured half its roof), 8 chains of 8 lanes with AVX2 + FMA.
float loupe_fma_peak_f32(uint64_t iterations);

/// The FLOPs one call of `loupe_fma_peak_f32` does per iteration (384 with AVX-512, 128 with
/// AVX2+FMA, else the same 128 computed with separate multiplies and adds).
uint64_t loupe_fma_flops_per_iteration(void);

/// The loop `loupe_fma_peak_f32` runs here, in words.
const char *loupe_fma_peak_method(void);

/// The int8 compute roof's loop: `iterations` rounds of independent u8 × s8 multiply-add chains
/// on registers, with the instruction the int8 kernels can use here (tdpbusd on AMX tiles, else
/// vpdpbusd with AVX-512 VNNI, else vpmaddwd on int16 with AVX2, else scalar). Returns a
/// value derived from the accumulators, so the work cannot be removed.
int32_t loupe_int8_peak(uint64_t iterations);

/// The int8 operations (a multiply-add is 2) one call of `loupe_int8_peak` does per iteration.
uint64_t loupe_int8_ops_per_iteration(void);

/// The loop `loupe_int8_peak` runs here, in words.
const char *loupe_int8_peak_method(void);

/// STREAM triad: a[i] = b[i] + scalar · c[i] for i in 0..<count (12 bytes moved per element:
/// two reads, one write).
void loupe_triad_f32(float *a, const float *b, const float *c, float scalar, size_t count);
#endif

#ifndef LOUPE_CKERNELS_VECTOR_H
#define LOUPE_CKERNELS_VECTOR_H
#include <stddef.h>
#include <stdint.h>
/// Σ a[i]·b[i] over `count` floats (AVX2 + FMA when the CPU has them).
float loupe_dot_f32(const float *a, const float *b, size_t count);

/// out[i] = dot(query, rows + ids[i] * count) for i < n: the rows an HNSW beam visits, four at a
/// time with the next four prefetched, so their cache misses overlap instead of queueing.
void loupe_dot_rows_f32(const float *query, const float *rows, const int32_t *ids, size_t n, size_t count,
                        float *out);

/// Starts the two cache lines at `p` on their way into the cache (a hint; never faults).
static inline void loupe_prefetch(const void *p) {
    __builtin_prefetch(p, 0, 3);
    __builtin_prefetch((const char *)p + 64, 0, 3);
}

/// A row in 8 bits: out[i] = round(row[i] / s), s = max|row| / 127; returns s (0 for a zero row).
float loupe_quantize_row_i8(const float *row, size_t count, int8_t *out);

/// A query in 16 bits for `loupe_dot_rows_i8`: out[i] = round(query[i] / s), with s chosen so that
/// max|out| is 32,767, or less where `count` codes of 127 would overflow an int32 lane; returns s.
float loupe_quantize_query_i16(const float *query, size_t count, int16_t *out);

/// out[i] ≈ dot(query, row ids[i]) from 8-bit rows: Σ query[j] · codes[ids[i] · count + j] in
/// integers, times scales[ids[i]] and query_scale. Four rows at a time with the next four
/// prefetched, as `loupe_dot_rows_f32`, reading a quarter of the bytes.
void loupe_dot_rows_i8(const int16_t *query, float query_scale, const int8_t *codes, const float *scales,
                       const int32_t *ids, size_t n, size_t count, float *out);

/// out[i] ≈ dot(row from, row ids[i]) from the 8-bit rows alone (`loupe_dot_rows_i8` with row `from`
/// widened into `scratch`, `count` int16, as the query): what an HNSW build on the codes measures
/// between two nodes.
void loupe_dot_code_rows_i8(const int8_t *codes, const float *scales, int32_t from, const int32_t *ids, size_t n,
                            size_t count, int16_t *scratch, float *out);

/// What an HNSW beam scores candidates with: `codes` non-null, the 8-bit rows against the 16-bit
/// query (`loupe_dot_rows_i8`); otherwise the float rows against the float query.
typedef struct {
    const float *query;
    const float *rows;
    const int16_t *query16;
    float query_scale;
    const int8_t *codes;
    const float *scales;
    /// Dimensions of a row.
    size_t count;
} loupe_hnsw_scorer;

/// dots[i] = the query's dot product with node ids[i], for i < n, as `scorer` measures it.
void loupe_hnsw_score(const loupe_hnsw_scorer *scorer, const int32_t *ids, size_t n, float *dots);

/// The beam search of HNSW's level 0: from the `entries` (node, distance = 1 − dot), the `ef`
/// closest nodes the beam reaches, written to `out_*` closest first; returns how many, or −1 when
/// memory ran out. `links` holds `width` Int32 a node, its neighbour count then its neighbours;
/// `visited` is a zeroed bitset of every node (it is marked as the beam goes).
long loupe_hnsw_beam(const int32_t *links, size_t width, const loupe_hnsw_scorer *scorer, const int32_t *entry_nodes,
                     const float *entry_distances, size_t entries, size_t ef, uint64_t *visited,
                     float *out_distances, int32_t *out_nodes);
#endif

#ifndef LOUPE_CKERNELS_BM25_H
#define LOUPE_CKERNELS_BM25_H
#include <stddef.h>
#include <stdint.h>
/// Documents are renumbered for queries (similar ones together, `loupe_bm25_order`) and cut into
/// ranges of 2^LOUPE_BM25_RANGE_SHIFT consecutive new numbers.
#define LOUPE_BM25_RANGE_SHIFT 6

/// One query term's postings in the new numbering, ascending, grouped by range. The term has an
/// entry for each range it occurs in: `ranges[e]`, its postings `words[firsts[e] ..< firsts[e + 1]]`
/// (`firsts` has `entries + 1` values) and `bounds[e]`, no less than the largest of their impacts.
/// A posting is one word: the document's offset in its range in the low LOUPE_BM25_RANGE_SHIFT bits,
/// above them the index of its impact in `table`, the term's distinct impacts.
typedef struct {
    const uint32_t *words;
    const double *table;
    const uint32_t *ranges;
    const uint32_t *firsts;
    const float *bounds;
    size_t entries;
} loupe_bm25_term;

/// Postings from tokens: `ids[i]` is the number (below `terms`) of token i's term, and document d's
/// tokens are `ids[starts[d] ..< starts[d + 1]]` (`starts` has `count + 1` values). Writes, term
/// after term, each document a term occurs in (ascending) with how often: term t's are
/// `documents[offsets[t] ..< offsets[t + 1]]` and `frequencies` alike (`offsets` has `terms + 1`
/// values; the others need room for one value a token). Returns 0, or −1 when memory ran out.
int loupe_bm25_postings(size_t terms, const int32_t *ids, const size_t *starts, size_t count, size_t *offsets,
                        int32_t *documents, int32_t *frequencies);

/// The new numbering: `order[n]` is the original number of the document numbered `n`. Documents
/// that agree on all five min-hashes of any of three bands (near-duplicates) form clusters, which
/// are laid out one after another, each document placed by its first two min-hashes; the hashes
/// derive from `hashes[t]`, one 64-bit hash a term. Similar documents become neighbours, so a
/// range's bound is close to its best score. Term `t`'s postings are
/// `documents[offsets[t] ..< offsets[t + 1]]` (`offsets` has `terms + 1` values).
void loupe_bm25_order(size_t terms, const size_t *offsets, const int32_t *documents, const uint64_t *hashes,
                      size_t count, int32_t *order);

/// Lays out every term's impacts for `loupe_bm25_term`. Input: the postings as for
/// `loupe_bm25_order` with their `frequencies` (each at least 1), each term's idf `weights[t]`, every document's
/// `norms[d]` (k1 · (1 − b + b · |d| / avgdl)) and length, and `order`. An impact is
/// `weights[t] * tf / (tf + norms[d])`. Output: `words` (one per posting, in term order), the terms'
/// tables one after another in `tables` (term t's from `table_starts[t]`), their entries in `ranges`,
/// `firsts` (absolute indices into `words`, one more than the entries) and `bounds`, term t's from
/// `entry_starts[t]` (both starts arrays have `terms + 1` values). Every output array but the starts
/// needs room for one value a posting (`firsts` one more). Returns 0, or −1 when memory ran out or
/// the index is too large for 32-bit words.
int loupe_bm25_layout(size_t terms, const size_t *offsets, const int32_t *documents, const int32_t *frequencies,
                      const double *weights, const double *norms, const int32_t *lengths, size_t count,
                      const int32_t *order, uint32_t *words, double *tables, size_t *table_starts, uint32_t *ranges,
                      uint32_t *firsts, float *bounds, size_t *entry_starts);

/// The smallest float no less than `value`.
float loupe_bm25_bound(double value);

/// Adds each term's impacts into `scores` (one per document, in the original numbering), term by
/// term in the order given.
void loupe_bm25_scores(const loupe_bm25_term *terms, size_t count, const int32_t *order, double *scores);

/// The `k` best documents (original numbers) for the query made of `terms` (a term repeated in the
/// query is passed once per occurrence), best first (equal scores: lower document first), documents
/// scoring 0 left out; returns how many were written, or SIZE_MAX when its scratch (a bound a
/// range, a span a range and term) could not be allocated. Each document's sum is the same double, added
/// in the same order, as `loupe_bm25_scores` gives it. Ranges are scored best bound first and only
/// while their bound can reach the k-th score found so far.
size_t loupe_bm25_top_k(const loupe_bm25_term *terms, size_t count, size_t documents, const int32_t *order,
                        size_t k, int64_t *out_documents, double *out_scores);
#endif

#ifndef LOUPE_CKERNELS_MEMORY_H
#define LOUPE_CKERNELS_MEMORY_H
/// Raises glibc's mmap and trim thresholds so large temporaries (tens of MB, allocated and freed
/// every training step) stay in the heap instead of being mapped and zeroed page by page anew.
void loupe_keep_large_allocations_in_heap(void);
/// Asks Linux to back the whole 2 MiB pages inside [start, start + bytes) with transparent huge
/// pages (`madvise(MADV_HUGEPAGE)`, where the kernel's setting is "madvise"). Pages not yet touched
/// then arrive 2 MiB at a time, so random reads over tens of MB miss the TLB far less. Advice
/// only: nothing happens where the kernel does not take it.
void loupe_advise_huge_pages(void *start, size_t bytes);
#endif

#ifndef LOUPE_CKERNELS_TOPK_H
#define LOUPE_CKERNELS_TOPK_H
/// Each of `rows` rows' `k` largest of its `width` values (row-major `x`), as column indices into
/// `chosen` (rows × k) in the order a min-heap of them leaves them; a row with fewer than k values
/// is padded with -1. Of equal values at the k-th place, which are kept depends on the heap's
/// history. In the widest form up to `widest` that the CPU has; every form gives the same indices
/// in the same order. Returns 0, or -1 when its heap cannot be allocated.
int loupe_top_k_rows(size_t rows, size_t width, size_t k, const float *x, int32_t *chosen, loupe_isa widest);
#endif

#ifndef LOUPE_CKERNELS_ADAM_H
#define LOUPE_CKERNELS_ADAM_H
/// One Adam update of `n` parameters `p` given their gradient `g`, first moments `m` and second
/// moments `v` (both updated): m = b1·m + (1−b1)·g, v = b2·v + (1−b2)·g·g, then
/// p −= step·m / (√(v·inverse2) + eps), where `step` is the rate over the first moment's bias
/// correction and `inverse2` one over the second's. The same rounded operations in every form.
void loupe_adam_step(float *p, const float *g, float *m, float *v, size_t n, float b1, float b2, float step,
                     float inverse2, float eps, loupe_isa widest);
#endif

// MARK: - GGUF quantized weights (quant.c)
#ifndef LOUPE_CKERNELS_QUANT_H
#define LOUPE_CKERNELS_QUANT_H
/// GGUF weight types the quantized products read (their ggml numbers).
typedef enum { LOUPE_QUANT_Q4_1 = 3, LOUPE_QUANT_Q8_0 = 8 } loupe_quant_type;
/// The forms of the quantized kernels, widest last. Every form stores the same bits.
typedef enum {
    LOUPE_QUANT_PORTABLE = 0,
    LOUPE_QUANT_AVX2 = 1,
    LOUPE_QUANT_AVX_VNNI = 2,
    LOUPE_QUANT_AVX512_VNNI = 3
} loupe_quant_form;
/// The widest form up to `widest` that the CPU has (checked once).
loupe_quant_form loupe_quant_usable_form(loupe_quant_form widest);

/// 32 activations quantized to 8 bits (llama.cpp's Q8_1 with fp32 scales): x ≈ d · q with
/// d = max|x| / 127 and q rounded to nearest even; `sum` = Σ q and `s` = d · Σ q (Q4_1's min term).
/// The same block serves Q8_0 weights (which ignore `s`). 48 bytes.
typedef struct {
    float d;
    float s;
    int32_t sum;
    int32_t reserved;
    int8_t q[32];
} loupe_q8_block;
/// Quantizes `rows` rows of `k` floats (k a multiple of 32; row stride `ldx`) into `rows · k / 32`
/// blocks, row after row. Every form stores the same bytes.
void loupe_q8_quantize_rows(size_t rows, size_t k, const float *x, size_t ldx, loupe_q8_block *out);
/// `loupe_q8_quantize_rows` in the widest form up to `widest` the CPU has (only the portable and
/// AVX-512 forms exist; the others run the portable loop).
void loupe_q8_quantize_rows_form(size_t rows, size_t k, const float *x, size_t ldx, loupe_q8_block *out,
                                 loupe_quant_form widest);

/// Bytes of one repacked group: 16 rows × one block of 32 columns (320 for Q4_1, 544 for Q8_0).
size_t loupe_quant_group_bytes(loupe_quant_type type);
/// Bytes `loupe_quant_repack` writes for `rows` rows of `k` columns (rows rounded up to 16).
size_t loupe_quant_packed_bytes(loupe_quant_type type, size_t rows, size_t k);
/// Rearranges a GGUF tensor's raw blocks (`rows` rows of `k / 32` blocks, k a multiple of 32) into
/// groups of 16 rows, each row's bytes in its own 32-bit lane (layout in quant.c); rows past the
/// last are zero.
void loupe_quant_repack(loupe_quant_type type, size_t rows, size_t k, const uint8_t *raw, uint8_t *packed);
/// Row `row` of a repacked matrix as floats, exactly as ggml dequantizes the file's block (Q8_0:
/// q · d; Q4_1: q · d + m): an embedding read from the tied head's copy instead of the file.
void loupe_quant_dequantize_row(loupe_quant_type type, size_t rows, size_t k, const uint8_t *packed, size_t row,
                                float *out);
/// y[t · ldy + r] = Σ_b dot(row r's block b, token t's block b) for the rows of row groups
/// [group_begin, group_end) (16 rows each) and `tokens` quantized activation rows `x` (each
/// k / 32 blocks): Q4_1 weights d_w · d_x · Σ q_w q_x + m_w · s_x per block, Q8_0 d_w · d_x · Σ q_w
/// q_x. Each row's blocks are accumulated in order with fused multiply-adds, so every form and
/// every token count store the same bits. Tokens go four at a time through each weight vector.
void loupe_quant_product(loupe_quant_type type, size_t rows, size_t k, const uint8_t *packed, size_t tokens,
                         const loupe_q8_block *x, float *y, size_t ldy, size_t group_begin, size_t group_end,
                         loupe_quant_form widest);
/// An IEEE half's float value (exact).
float loupe_half_to_float(uint16_t half);
#endif

// MARK: - Decode attention (decode_attention.c)
#ifndef LOUPE_CKERNELS_DECODE_ATTENTION_H
#define LOUPE_CKERNELS_DECODE_ATTENTION_H
/// How cached keys and values are stored: float32, or IEEE half (rounded to nearest even).
typedef enum { LOUPE_KV_F32 = 0, LOUPE_KV_F16 = 1 } loupe_kv_type;
/// Where one layer's cached keys and values lie. Row t (all key/value heads, `kv_heads · d`
/// elements) starts at element `blocks[t / block_rows] · block_stride + (t % block_rows) ·
/// row_stride` of `keys` (and of `values`); with `blocks` NULL the rows are contiguous, row t at
/// `t · row_stride`. Elements are floats or halves as `type` says.
typedef struct {
    const void *keys;
    const void *values;
    const int32_t *blocks;
    size_t block_rows;
    size_t block_stride;
    size_t row_stride;
    loupe_kv_type type;
} loupe_kv_view;
/// The form `loupe_decode_attention_part` runs for heads of `d` given `widest`.
loupe_isa loupe_decode_attention_usable(size_t d, loupe_isa widest);
/// One query token's grouped-query attention over keys [begin, end) of `kv`, unnormalised: `q` is
/// `heads · d` floats (query head h reads key/value head h / (heads / kv_heads)); `o` gets each
/// head's Σ_t exp(q·k_t·scale − m) v_t (`heads · d`), `m` its largest scaled score and `l` its Σ_t
/// exp(q·k_t·scale − m) (`heads` each; −∞ and 0 for an empty range). Keys stream past in chunks
/// of 64 with an online softmax; each key row is read once for its group's query heads.
void loupe_decode_attention_part(const loupe_kv_view *kv, size_t heads, size_t kv_heads, size_t d, const float *q,
                                 float scale, size_t begin, size_t end, float *o, float *m, float *l,
                                 loupe_isa widest);
/// Combines `parts` results of `loupe_decode_attention_part` over disjoint key ranges (part p's
/// at o + p · heads · d, m + p · heads, l + p · heads) into the normalised output (`heads · d`).
void loupe_decode_attention_merge(size_t parts, size_t heads, size_t d, const float *o, const float *m,
                                  const float *l, float *out);
/// The whole attention of one query token over keys [0, length), normalised, into `out`
/// (`heads · d`); `scratch` holds 2 · heads floats.
void loupe_decode_attention(const loupe_kv_view *kv, size_t heads, size_t kv_heads, size_t d, const float *q,
                            float scale, size_t length, float *out, float *scratch, loupe_isa widest);
/// `count` floats to IEEE halves, rounded to nearest even (F16C when `widest` allows and the CPU
/// has it; the same bits either way, NaN payloads aside).
void loupe_float_to_half_rows(size_t count, const float *x, uint16_t *out, loupe_isa widest);

// MARK: - SwiGLU (swiglu.c)
/// `out[j] = gate[j] / (1 + e^(−gate[j])) · up[j]` for `count` elements, e^x as glibc's expf
/// computes it with FMA (the bits of the scalar loop over libm it replaces), in the widest form
/// up to `widest` that the CPU has; every form gives the same bits.
void loupe_swiglu(size_t count, const float *gate, const float *up, float *out, loupe_isa widest);
/// The kernel's e^x for one float (what its tests compare with libm's expf).
float loupe_expf_twin(float x);

// MARK: - Float products (f32product.c)
#ifndef LOUPE_CKERNELS_F32_PRODUCT_H
#define LOUPE_CKERNELS_F32_PRODUCT_H
/// Floats `loupe_f32_repack` writes for a `rows × columns` weight: panels of 16 rows.
size_t loupe_f32_packed_floats(size_t rows, size_t columns);
/// Repacks row-major `w` (`rows × columns`, each row one output's weights) into panels of 16
/// outputs, each column's 16 weights side by side; rows past the last are zero.
void loupe_f32_repack(size_t rows, size_t columns, const float *w, float *packed);
/// Row `row` of the repacked matrix (`columns` floats) into `out`.
void loupe_f32_packed_row(size_t rows, size_t columns, const float *packed, size_t row, float *out);
/// `y[t][o] = Σ_p x[t][p] · w[o][p]` for `tokens` rows of `x` (stride `ldx`) and the outputs of
/// panels [panel_begin, panel_end) (columns 16 · panel_begin … of `y`, stride `ldy`). Each output
/// is summed in one order (a chain of fused multiply-adds from zero per block of 32 columns, the
/// blocks added in order): the same bits for one token or many, any panel range, and every form
/// up to `widest` (AVX-512, AVX2, portable).
void loupe_f32_product(size_t rows, size_t columns, const float *packed, size_t tokens, const float *x, size_t ldx,
                       float *y, size_t ldy, size_t panel_begin, size_t panel_end, loupe_isa widest);
#endif

// MARK: - Worker pool (workers.c)

/// One share of a parallel region: `worker` in [0, workers).
typedef void (*loupe_worker_fn)(void *context, size_t worker);
/// Runs fn(context, w) for every w in [0, workers) at once: share 0 on the calling thread, the
/// others on persistent helper threads (started on first use, kept for the process; between
/// regions they poll ~50 µs, then sleep on a futex), and returns when every share has. Returns 0,
/// or -1 without running anything when the pool is running another region (a second caller, or
/// a share calling back in), more than 63 helpers are asked for, or a thread cannot be started:
/// the caller then runs the region some other way.
int loupe_workers_run(size_t workers, loupe_worker_fn fn, void *context);
/// Helper threads started so far.
size_t loupe_workers_started(void);
#endif
