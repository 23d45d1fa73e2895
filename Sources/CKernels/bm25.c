// BM25 for one query over precomputed impacts, with the documents renumbered so that similar ones
// sit together and split into ranges of 64: a query first bounds every range from above (the sum of
// each query term's largest impact in it), then scores ranges best bound first and stops where no
// bound can beat the k-th score found. Exact: every document that can enter the top k is scored in
// full, with the same doubles added in the same order as a pass over every document.
#include "ckernels.h"
#include <emmintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { RANGE = 1 << LOUPE_BM25_RANGE_SHIFT, OFFSET_MASK = RANGE - 1 };

// ---- Postings ----------------------------------------------------------------------------------

int loupe_bm25_postings(size_t terms, const int32_t *ids, const size_t *starts, size_t count, size_t *offsets,
                        int32_t *documents, int32_t *frequencies) {
    // The last document each term was seen in: a term's postings grow in document order.
    int64_t *last = malloc((terms ? terms : 1) * sizeof *last);
    size_t *cursor = malloc((terms ? terms : 1) * sizeof *cursor);
    if (!last || !cursor) {
        free(last), free(cursor);
        return -1;
    }
    for (size_t t = 0; t <= terms; t++) offsets[t] = 0;
    for (size_t t = 0; t < terms; t++) last[t] = -1;
    for (size_t d = 0; d < count; d++) {
        for (size_t i = starts[d]; i < starts[d + 1]; i++) {
            if (last[ids[i]] != (int64_t)d) {
                last[ids[i]] = (int64_t)d;
                offsets[ids[i] + 1]++;
            }
        }
    }
    for (size_t t = 0; t < terms; t++) {
        offsets[t + 1] += offsets[t];
        cursor[t] = offsets[t];
        last[t] = -1;
    }
    for (size_t d = 0; d < count; d++) {
        for (size_t i = starts[d]; i < starts[d + 1]; i++) {
            int32_t t = ids[i];
            if (last[t] != (int64_t)d) {
                last[t] = (int64_t)d;
                documents[cursor[t]] = (int32_t)d;
                frequencies[cursor[t]++] = 1;
            } else {
                frequencies[cursor[t] - 1]++;
            }
        }
    }
    free(last), free(cursor);
    return 0;
}

// ---- Renumbering ---------------------------------------------------------------------------------
//
// Min-hashing: for a random hash of terms, two documents' smallest hash over their terms agree with
// probability their Jaccard similarity. Documents that agree on all MINHASH_ROWS hashes of a band
// (on any of MINHASH_BANDS bands) are joined into one cluster; clusters go one after another,
// ordered by their smallest pair of the first two min-hashes, and inside a cluster documents by
// theirs. Five rows a band keep unrelated documents apart (similarity 0.2 collides in a band with
// probability 0.2^5) while a near-duplicate (0.8) lands in its cluster with 1 − (1 − 0.8^5)^3 ≈ 0.74
// per pair, and transitively far more. Without near-duplicates every cluster is one document and
// the order is the first two min-hashes' (close variants still end up near each other).

enum { MINHASH_ROWS = 5, MINHASH_BANDS = 3, MINHASHES = MINHASH_ROWS * MINHASH_BANDS };

static inline uint64_t mix(uint64_t h) {
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9u;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebu;
    return h ^ (h >> 31);
}

typedef struct {
    uint64_t key;
    int32_t document;
} keyed;

static int by_key(const void *a, const void *b) {
    const keyed *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->document > y->document) - (x->document < y->document);
}

typedef struct {
    uint64_t cluster_key, key;
    int32_t cluster, document;
} placed;

static int by_place(const void *a, const void *b) {
    const placed *x = a, *y = b;
    if (x->cluster_key != y->cluster_key) return x->cluster_key < y->cluster_key ? -1 : 1;
    if (x->cluster != y->cluster) return x->cluster < y->cluster ? -1 : 1;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->document > y->document) - (x->document < y->document);
}

static int32_t root(int32_t *parent, int32_t d) {
    while (parent[d] != d) {
        parent[d] = parent[parent[d]];
        d = parent[d];
    }
    return d;
}

void loupe_bm25_order(size_t terms, const size_t *offsets, const int32_t *documents, const uint64_t *hashes,
                      size_t count, int32_t *order) {
    size_t n = count ? count : 1;
    uint32_t *minimum = malloc(n * MINHASHES * sizeof *minimum);
    keyed *band = malloc(n * sizeof *band);
    int32_t *parent = malloc(n * sizeof *parent);
    placed *places = malloc(n * sizeof *places);
    uint64_t *cluster_key = malloc(n * sizeof *cluster_key);
    if (!minimum || !band || !parent || !places || !cluster_key) {
        for (size_t d = 0; d < count; d++) order[d] = (int32_t)d;
        free(minimum), free(band), free(parent), free(places), free(cluster_key);
        return;
    }
    memset(minimum, 0xFF, n * MINHASHES * sizeof *minimum);
    for (size_t t = 0; t < terms; t++) {
        uint32_t h[MINHASHES];
        for (int j = 0; j < MINHASHES; j++) h[j] = (uint32_t)mix(hashes[t] + (uint64_t)(j + 1) * 0x9e3779b97f4a7c15u);
        for (size_t p = offsets[t]; p < offsets[t + 1]; p++) {
            uint32_t *m = minimum + (size_t)documents[p] * MINHASHES;
            for (int j = 0; j < MINHASHES; j++) m[j] = h[j] < m[j] ? h[j] : m[j];
        }
    }
    for (size_t d = 0; d < count; d++) parent[d] = (int32_t)d;
    for (int b = 0; b < MINHASH_BANDS; b++) {
        for (size_t d = 0; d < count; d++) {
            const uint32_t *m = minimum + d * MINHASHES + b * MINHASH_ROWS;
            uint64_t key = (uint64_t)b;
            for (int j = 0; j < MINHASH_ROWS; j++) key = mix(key ^ m[j]);
            band[d] = (keyed){key, (int32_t)d};
        }
        qsort(band, count, sizeof *band, by_key);
        for (size_t i = 1; i < count; i++) {
            // A document without terms has all-maximal min-hashes: it joins nothing.
            if (band[i].key != band[i - 1].key || minimum[(size_t)band[i].document * MINHASHES] == UINT32_MAX) continue;
            int32_t x = root(parent, band[i].document), y = root(parent, band[i - 1].document);
            if (x != y) parent[x < y ? y : x] = x < y ? x : y;
        }
    }
    for (size_t d = 0; d < count; d++) cluster_key[d] = UINT64_MAX;
    for (size_t d = 0; d < count; d++) {
        uint64_t key = (uint64_t)minimum[d * MINHASHES] << 32 | minimum[d * MINHASHES + 1];
        int32_t c = root(parent, (int32_t)d);
        places[d] = (placed){0, key, c, (int32_t)d};
        cluster_key[c] = key < cluster_key[c] ? key : cluster_key[c];
    }
    for (size_t d = 0; d < count; d++) places[d].cluster_key = cluster_key[places[d].cluster];
    qsort(places, count, sizeof *places, by_place);
    for (size_t d = 0; d < count; d++) order[d] = places[d].document;
    free(minimum), free(band), free(parent), free(places), free(cluster_key);
}

// ---- Layout ----------------------------------------------------------------------------------------

// The distinct impacts of one term, numbered as they first occur. An impact is a function of tf and
// the document's length, so (tf, length class) names it; tf past `FREQUENCIES` is rare and searched
// for in a short list.
enum { FREQUENCIES = 32 };

int loupe_bm25_layout(size_t terms, const size_t *offsets, const int32_t *documents, const int32_t *frequencies,
                      const double *weights, const double *norms, const int32_t *lengths, size_t count,
                      const int32_t *order, uint32_t *words, double *tables, size_t *table_starts, uint32_t *ranges,
                      uint32_t *firsts, float *bounds, size_t *entry_starts) {
    size_t postings = offsets[terms];
    if (count >= (size_t)1 << (32 - LOUPE_BM25_RANGE_SHIFT) || postings >= UINT32_MAX) return -1;
    int32_t *renumbered = malloc((count ? count : 1) * sizeof *renumbered);
    size_t *starts = calloc(count + 1, sizeof *starts);
    uint64_t *by_document = malloc((postings ? postings : 1) * sizeof *by_document);
    uint32_t *new_documents = malloc((postings ? postings : 1) * sizeof *new_documents);
    uint32_t *new_frequencies = malloc((postings ? postings : 1) * sizeof *new_frequencies);
    size_t *cursor = malloc((terms ? terms : 1) * sizeof *cursor);
    // Each document's length class: the rank of its length among the distinct lengths.
    keyed *by_length = malloc((count ? count : 1) * sizeof *by_length);
    int32_t *class_of = malloc((count ? count : 1) * sizeof *class_of);
    if (!renumbered || !starts || !by_document || !new_documents || !new_frequencies || !cursor || !class_of ||
        !by_length) {
        free(by_length);
        free(renumbered), free(starts), free(by_document), free(new_documents), free(new_frequencies), free(cursor);
        free(class_of);
        return -1;
    }
    for (size_t n = 0; n < count; n++) renumbered[order[n]] = (int32_t)n;
    // Transpose twice, through a document-major copy, so that every term's postings come out in
    // the new numbering and ascending without sorting each list.
    for (size_t p = 0; p < postings; p++) starts[renumbered[documents[p]] + 1]++;
    for (size_t n = 0; n < count; n++) starts[n + 1] += starts[n];
    for (size_t t = 0; t < terms; t++) {
        for (size_t p = offsets[t]; p < offsets[t + 1]; p++) {
            size_t at = starts[renumbered[documents[p]]]++;
            by_document[at] = (uint64_t)t << 32 | (uint32_t)frequencies[p];
        }
    }
    for (size_t t = 0; t < terms; t++) cursor[t] = offsets[t];
    for (size_t n = 0, p = 0; n < count; n++) {
        for (; p < starts[n]; p++) {
            size_t at = cursor[by_document[p] >> 32]++;
            new_documents[at] = (uint32_t)n;
            new_frequencies[at] = (uint32_t)by_document[p];
        }
    }
    free(by_document);
    free(starts);
    free(cursor);

    for (size_t d = 0; d < count; d++) by_length[d] = (keyed){(uint64_t)(uint32_t)lengths[d], (int32_t)d};
    qsort(by_length, count, sizeof *by_length, by_key);
    int32_t classes = 0;
    for (size_t i = 0; i < count; i++) {
        if (i > 0 && by_length[i].key != by_length[i - 1].key) classes++;
        class_of[by_length[i].document] = classes;
    }
    classes += count > 0;
    free(by_length);
    // `touched`: the keys one term set, to reset; a term sets each key at most once.
    size_t keys = (size_t)FREQUENCIES * (size_t)(classes ? classes : 1);
    int32_t *codes = malloc(keys * sizeof *codes);
    size_t *touched = malloc(keys * sizeof *touched);
    if (!codes || !touched) {
        free(codes), free(touched), free(renumbered), free(new_documents), free(new_frequencies), free(class_of);
        return -1;
    }
    for (size_t i = 0; i < keys; i++) codes[i] = -1;
    size_t table_count = 0, entry_count = 0;
    for (size_t t = 0; t < terms; t++) {
        table_starts[t] = table_count;
        entry_starts[t] = entry_count;
        double *table = tables + table_count;
        size_t distinct = 0, touches = 0;
        uint32_t open = UINT32_MAX;
        double highest = 0;
        for (size_t p = offsets[t]; p < offsets[t + 1]; p++) {
            uint32_t n = new_documents[p], tf = new_frequencies[p];
            int32_t original = order[n];
            double value = weights[t] * (double)tf / ((double)tf + norms[original]);
            size_t code;
            if (tf <= FREQUENCIES) {
                size_t key = (size_t)(tf - 1) * (size_t)classes + (size_t)class_of[original];
                if (codes[key] < 0) {
                    codes[key] = (int32_t)distinct;
                    touched[touches++] = key;
                    table[distinct++] = value;
                }
                code = (size_t)codes[key];
            } else {
                // Impacts are compared by value: the same (tf, length) gives the same double.
                for (code = 0; code < distinct && table[code] != value; code++) {}
                if (code == distinct) table[distinct++] = value;
            }
            uint32_t range = n >> LOUPE_BM25_RANGE_SHIFT;
            if (range != open) {
                if (open != UINT32_MAX) bounds[entry_count - 1] = loupe_bm25_bound(highest);
                ranges[entry_count] = range;
                firsts[entry_count] = (uint32_t)p;
                entry_count++;
                open = range;
                highest = 0;
            }
            highest = value > highest ? value : highest;
            words[p] = (n & OFFSET_MASK) | (uint32_t)code << LOUPE_BM25_RANGE_SHIFT;
        }
        if (open != UINT32_MAX) bounds[entry_count - 1] = loupe_bm25_bound(highest);
        for (size_t i = 0; i < touches; i++) codes[touched[i]] = -1;
        table_count += distinct;
    }
    table_starts[terms] = table_count;
    entry_starts[terms] = entry_count;
    firsts[entry_count] = (uint32_t)postings;
    free(codes), free(touched), free(renumbered), free(new_documents), free(new_frequencies), free(class_of);
    return 0;
}

float loupe_bm25_bound(double value) {
    float bound = (float)value;
    return (double)bound < value ? nextafterf(bound, INFINITY) : bound;
}

// ---- Queries ---------------------------------------------------------------------------------------

// A min-heap of the best k so far; its root is the worst kept: lowest score, then highest document
// (in the caller's numbering).
typedef struct {
    double *scores;
    int64_t *documents;
    size_t count;
} heap;

static inline int worse(const heap *h, size_t a, size_t b) {
    return h->scores[a] < h->scores[b] || (h->scores[a] == h->scores[b] && h->documents[a] > h->documents[b]);
}

static inline void swap(heap *h, size_t a, size_t b) {
    double s = h->scores[a];
    h->scores[a] = h->scores[b];
    h->scores[b] = s;
    int64_t d = h->documents[a];
    h->documents[a] = h->documents[b];
    h->documents[b] = d;
}

static void sift_down(heap *h, size_t i) {
    for (;;) {
        size_t left = 2 * i + 1, worst = i;
        if (left < h->count && worse(h, left, worst)) worst = left;
        if (left + 1 < h->count && worse(h, left + 1, worst)) worst = left + 1;
        if (worst == i) return;
        swap(h, i, worst);
        i = worst;
    }
}

static void push(heap *h, double score, int64_t document) {
    size_t child = h->count++;
    h->scores[child] = score;
    h->documents[child] = document;
    while (child > 0) {
        size_t parent = (child - 1) / 2;
        if (!worse(h, child, parent)) return;
        swap(h, child, parent);
        child = parent;
    }
}

void loupe_bm25_scores(const loupe_bm25_term *terms, size_t count, const int32_t *order, double *scores) {
    // One term at a time, in query order: each document's sum is the same doubles in the same
    // order as `loupe_bm25_top_k` adds.
    for (size_t t = 0; t < count; t++) {
        const uint32_t *words = terms[t].words;
        const double *table = terms[t].table;
        for (size_t e = 0; e < terms[t].entries; e++) {
            const int32_t *range = order + ((size_t)terms[t].ranges[e] << LOUPE_BM25_RANGE_SHIFT);
            for (size_t p = terms[t].firsts[e], end = terms[t].firsts[e + 1]; p < end; p++) {
                scores[range[words[p] & OFFSET_MASK]] += table[words[p] >> LOUPE_BM25_RANGE_SHIFT];
            }
        }
    }
}

// Ranges are put in this many buckets by bound; postings are fetched this many ranges ahead.
enum { BUCKETS = 1024, PREFETCH = 4 };

typedef struct {
    uint32_t first, end;
} span;

// A bound's bucket, highest bounds in bucket 0: monotone (a higher bound never lands later).
static inline size_t bucket_of(double bound, double scale) {
    size_t b = (size_t)(bound * scale);
    return BUCKETS - 1 - (b < BUCKETS ? b : BUCKETS - 1);
}

typedef struct {
    const loupe_bm25_term *terms;
    size_t count, documents;
    const int32_t *order;
    const span *spans;  // spans[r * count + t]: term t's postings in range r (first == end: none)
    heap h;
    size_t k;
} query;

static inline void prefetch_range(const query *q, size_t r) {
    const span *ahead = q->spans + r * q->count;
    for (size_t t = 0; t < q->count; t++) {
        if (ahead[t].first != ahead[t].end) {
            __builtin_prefetch(q->terms[t].words + ahead[t].first);
            __builtin_prefetch(q->terms[t].words + ahead[t].end - 1);
        }
    }
}

// Scores range `r` in full, every term in query order, and offers its documents to the heap.
static void score_range(query *q, size_t r) {
    double sums[RANGE];
    memset(sums, 0, sizeof sums);
    const span *own = q->spans + r * q->count;
    for (size_t t = 0; t < q->count; t++) {
        const uint32_t *words = q->terms[t].words;
        const double *table = q->terms[t].table;
        for (uint32_t p = own[t].first; p < own[t].end; p++) {
            sums[words[p] & OFFSET_MASK] += table[words[p] >> LOUPE_BM25_RANGE_SHIFT];
        }
    }
    heap *h = &q->h;
    size_t base = r << LOUPE_BM25_RANGE_SHIFT;
    size_t width = base + RANGE <= q->documents ? RANGE : q->documents - base;
    // The range's highest sum, in four independent chains of two lanes (one chain of 64 dependent
    // maxima cost as much as adding the range's postings).
    __m128d m0 = _mm_setzero_pd(), m1 = m0, m2 = m0, m3 = m0;
    for (size_t j = 0; j < RANGE; j += 8) {
        m0 = _mm_max_pd(m0, _mm_loadu_pd(sums + j));
        m1 = _mm_max_pd(m1, _mm_loadu_pd(sums + j + 2));
        m2 = _mm_max_pd(m2, _mm_loadu_pd(sums + j + 4));
        m3 = _mm_max_pd(m3, _mm_loadu_pd(sums + j + 6));
    }
    m0 = _mm_max_pd(_mm_max_pd(m0, m1), _mm_max_pd(m2, m3));
    double highest = _mm_cvtsd_f64(_mm_max_sd(m0, _mm_unpackhi_pd(m0, m0)));
    if (!(highest > 0) || (h->count == q->k && highest < h->scores[0])) return;
    for (size_t j = 0; j < width; j++) {
        double s = sums[j];
        if (!(s > 0)) continue;
        int64_t document = q->order[base + j];
        if (h->count < q->k) {
            push(h, s, document);
        } else if (s > h->scores[0] || (s == h->scores[0] && document < h->documents[0])) {
            // A tie with a lower document number displaces the root too: ranges do not come in
            // document order.
            h->scores[0] = s;
            h->documents[0] = document;
            sift_down(h, 0);
        }
    }
}

size_t loupe_bm25_top_k(const loupe_bm25_term *terms, size_t count, size_t documents, const int32_t *order,
                        size_t k, int64_t *out_documents, double *out_scores) {
    if (k == 0 || documents == 0 || count == 0) return 0;
    size_t ranges = (documents + RANGE - 1) >> LOUPE_BM25_RANGE_SHIFT;
    double *bound = calloc(ranges, sizeof *bound);
    span *spans = calloc(ranges * count, sizeof *spans);
    uint32_t *sorted = malloc(ranges * sizeof *sorted);
    size_t *bucket_start = calloc(BUCKETS + 1, sizeof *bucket_start);
    size_t *fill = malloc((BUCKETS + 1) * sizeof *fill);
    double *bucket_top = calloc(BUCKETS, sizeof *bucket_top);
    if (!bound || !spans || !sorted || !bucket_start || !fill || !bucket_top) {
        free(bound), free(spans), free(sorted), free(bucket_start), free(fill), free(bucket_top);
        return SIZE_MAX;
    }
    // Each range's bound: its terms' largest impacts summed in query order. A document's score is
    // its own impacts (each no larger) summed in that order with the absent terms left out, and
    // rounding is monotone, so no score in the range exceeds the bound.
    for (size_t t = 0; t < count; t++) {
        const uint32_t *r = terms[t].ranges, *firsts = terms[t].firsts;
        const float *b = terms[t].bounds;
        for (size_t e = 0, n = terms[t].entries; e < n; e++) {
            bound[r[e]] += (double)b[e];
            spans[(size_t)r[e] * count + t] = (span){firsts[e], firsts[e + 1]};
        }
    }
    // Ranges into buckets by bound, highest first. The bucket is a monotone function of the bound,
    // so every range in a later bucket is bounded below every range in an earlier one.
    double top = 0;
    for (size_t r = 0; r < ranges; r++) top = bound[r] > top ? bound[r] : top;
    double scale = top > 0 ? (BUCKETS - 1) / top : 0;
    for (size_t r = 0; r < ranges; r++) {
        if (bound[r] > 0) bucket_start[bucket_of(bound[r], scale) + 1]++;
    }
    for (size_t b = 0; b < BUCKETS; b++) bucket_start[b + 1] += bucket_start[b];
    memcpy(fill, bucket_start, (BUCKETS + 1) * sizeof *fill);
    for (size_t r = 0; r < ranges; r++) {
        if (bound[r] > 0) {
            size_t b = bucket_of(bound[r], scale);
            sorted[fill[b]++] = (uint32_t)r;
            bucket_top[b] = bound[r] > bucket_top[b] ? bound[r] : bucket_top[b];
        }
    }

    query q = {terms, count, documents, order, spans, {out_scores, out_documents, 0}, k};
    heap *h = &q.h;
    size_t candidates = bucket_start[BUCKETS];
    for (size_t b = 0; b < BUCKETS; b++) {
        if (bucket_start[b] == bucket_start[b + 1]) continue;
        // Full, and nothing from here down can reach the k-th score: done. A bound equal to it
        // is still scored, since a tie with a lower document number displaces the root.
        if (h->count == k && bucket_top[b] < h->scores[0]) break;
        for (size_t i = bucket_start[b]; i < bucket_start[b + 1]; i++) {
            if (i + PREFETCH < candidates) prefetch_range(&q, sorted[i + PREFETCH]);
            if (h->count == k && bound[sorted[i]] < h->scores[0]) continue;
            score_range(&q, sorted[i]);
        }
    }
    free(bound), free(spans), free(sorted), free(bucket_start), free(fill), free(bucket_top);
    // Pop the worst each time into the slot it frees: the arrays end best first.
    size_t kept = h->count;
    while (h->count > 1) {
        size_t last = h->count - 1;
        swap(h, 0, last);
        h->count = last;
        sift_down(h, 0);
    }
    return kept;
}
