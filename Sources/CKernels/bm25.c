// BM25 for one query over precomputed impacts: each term's postings, documents ascending, each with
// its score contribution.
#include "ckernels.h"
#include <stdlib.h>
#include <string.h>

// Documents scored together: their sums (doubles) stay in L1 (16 KiB) while every term's postings in
// the range are added, the range is ranked and zeroed again, instead of scattering into an array of
// every document that lives in L2 and ranking it in a second pass.
enum { BLOCK = 2048 };

// A min-heap of the best k so far; its root is the worst kept: lowest score, then highest document.
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

// Adds term `t`'s contributions to the documents in [start, end) into `sums` (indexed from
// `start`), resuming where the previous range stopped: `next` is the posting, `at` the document
// reached (a compact term's gaps count from it).
static inline void add_range(const loupe_bm25_term *t, size_t start, size_t end, double *sums, size_t *next,
                             uint32_t *at) {
    size_t i = *next, n = t->length;
    if (t->packed) {
        const uint32_t *packed = t->packed;
        const double *table = t->table;
        uint32_t document = *at;
        for (; i < n; i++) {
            uint32_t word = packed[i], following = document + (word & 0xFFFF);
            if (following >= end) break;
            document = following;
            sums[document - start] += table[word >> 16];
        }
        *at = document;
    } else {
        const int32_t *documents = t->documents;
        const double *impacts = t->impacts;
        for (; i < n && (size_t)documents[i] < end; i++) sums[documents[i] - start] += impacts[i];
    }
    *next = i;
}

void loupe_bm25_scores(const loupe_bm25_term *terms, size_t count, size_t documents, double *scores) {
    for (size_t t = 0; t < count; t++) {
        size_t next = 0;
        uint32_t at = (uint32_t)terms[t].origin;
        add_range(&terms[t], 0, documents, scores, &next, &at);
    }
}

size_t loupe_bm25_top_k(const loupe_bm25_term *terms, size_t count, size_t documents, size_t k,
                        int64_t *out_documents, double *out_scores) {
    if (k == 0 || documents == 0) return 0;
    double sums[BLOCK];
    memset(sums, 0, sizeof sums);
    size_t *next = calloc(count ? count : 1, sizeof *next);
    uint32_t *at = calloc(count ? count : 1, sizeof *at);
    if (!next || !at) {
        free(next);
        free(at);
        return 0;
    }
    for (size_t t = 0; t < count; t++) at[t] = (uint32_t)terms[t].origin;
    heap h = {out_scores, out_documents, 0};
    // Documents enter with a score above 0 while the heap fills, and above its root after: only a
    // strictly higher score displaces the root, so among equal scores the lower document stays.
    double bar = 0;
    for (size_t start = 0; start < documents; start += BLOCK) {
        size_t end = start + BLOCK < documents ? start + BLOCK : documents;
        // Each term's postings in [start, end), the terms in query order: every document's sum
        // takes its terms in the same order as a whole-array pass would, so the sums are the same.
        for (size_t t = 0; t < count; t++) add_range(&terms[t], start, end, sums, &next[t], &at[t]);
        size_t width = end - start;
        for (size_t chunk = 0; chunk < width; chunk += 16) {
            size_t stop = chunk + 16 < width ? chunk + 16 : width;
            // Most chunks hold nothing above the bar once the heap is full: one vectorised maximum
            // decides that.
            double highest = 0;
            for (size_t i = chunk; i < stop; i++) highest = sums[i] > highest ? sums[i] : highest;
            if (highest > bar) {
                for (size_t i = chunk; i < stop; i++) {
                    if (!(sums[i] > bar)) continue;
                    if (h.count < k) {
                        push(&h, sums[i], (int64_t)(start + i));
                        if (h.count == k) bar = h.scores[0];
                    } else {
                        h.scores[0] = sums[i];
                        h.documents[0] = (int64_t)(start + i);
                        sift_down(&h, 0);
                        bar = h.scores[0];
                    }
                }
            }
        }
        memset(sums, 0, width * sizeof *sums);
    }
    free(next);
    free(at);
    // Pop the worst each time into the slot it frees: the arrays end best first.
    size_t kept = h.count;
    while (h.count > 1) {
        size_t last = h.count - 1;
        swap(&h, 0, last);
        h.count = last;
        sift_down(&h, 0);
    }
    return kept;
}
