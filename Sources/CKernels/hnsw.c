// HNSW's beam search on level 0 (Malkov & Yashunin 2018, algorithm 2), where a search and an insert
// spend nearly all their time: two binary heaps, a visited bitset and the batched dot products of
// vector.c, without the bounds checks and reference counts a Swift loop pays at each step.
#include "ckernels.h"
#include <stdlib.h>

// A heap of (distance, node): the closest on top for the candidates, the farthest for the results.
typedef struct {
    float *distances;
    int32_t *nodes;
    size_t count, capacity;
    int farthest_on_top;
} beam_heap;

static inline int above(const beam_heap *h, float a, float b) { return h->farthest_on_top ? a > b : a < b; }

static int heap_push(beam_heap *h, float distance, int32_t node) {
    if (h->count == h->capacity) {
        size_t capacity = h->capacity * 2;
        float *distances = realloc(h->distances, capacity * sizeof *distances);
        if (!distances) return -1;
        h->distances = distances;
        int32_t *nodes = realloc(h->nodes, capacity * sizeof *nodes);
        if (!nodes) return -1;
        h->nodes = nodes;
        h->capacity = capacity;
    }
    size_t i = h->count++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!above(h, distance, h->distances[parent])) break;
        h->distances[i] = h->distances[parent];
        h->nodes[i] = h->nodes[parent];
        i = parent;
    }
    h->distances[i] = distance;
    h->nodes[i] = node;
    return 0;
}

static void heap_pop(beam_heap *h) {
    size_t n = --h->count;
    if (n == 0) return;
    float distance = h->distances[n];
    int32_t node = h->nodes[n];
    size_t i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && above(h, h->distances[child + 1], h->distances[child])) child++;
        if (!above(h, h->distances[child], distance)) break;
        h->distances[i] = h->distances[child];
        h->nodes[i] = h->nodes[child];
        i = child;
    }
    h->distances[i] = distance;
    h->nodes[i] = node;
}

static inline int first_visit(uint64_t *visited, int32_t node) {
    uint64_t bit = (uint64_t)1 << (node & 63), *word = &visited[node >> 6];
    if (*word & bit) return 0;
    *word |= bit;
    return 1;
}

void loupe_hnsw_score(const loupe_hnsw_scorer *s, const int32_t *ids, size_t n, float *dots) {
    if (s->codes)
        loupe_dot_rows_i8(s->query16, s->query_scale, s->codes, s->scales, ids, n, s->count, dots);
    else
        loupe_dot_rows_f32(s->query, s->rows, ids, n, s->count, dots);
}

static int heap_init(beam_heap *h, size_t capacity, int farthest_on_top) {
    h->count = 0;
    h->capacity = capacity;
    h->farthest_on_top = farthest_on_top;
    h->distances = malloc(capacity * sizeof *h->distances);
    h->nodes = malloc(capacity * sizeof *h->nodes);
    return h->distances && h->nodes ? 0 : -1;
}

long loupe_hnsw_beam(const int32_t *links, size_t width, const loupe_hnsw_scorer *scorer, const int32_t *entry_nodes,
                     const float *entry_distances, size_t entries, size_t ef, uint64_t *visited,
                     float *out_distances, int32_t *out_nodes) {
    if (ef == 0) return 0;
    beam_heap candidates, results;
    int32_t *fresh = malloc(width * sizeof *fresh);
    float *dots = malloc(width * sizeof *dots);
    int ok = heap_init(&candidates, 64 + entries, 0) == 0 && heap_init(&results, ef + 1, 1) == 0 && fresh && dots;
    for (size_t i = 0; ok && i < entries; i++) {
        first_visit(visited, entry_nodes[i]);
        ok = heap_push(&candidates, entry_distances[i], entry_nodes[i]) == 0 &&
             heap_push(&results, entry_distances[i], entry_nodes[i]) == 0;
        if (results.count > ef) heap_pop(&results);
    }
    while (ok && candidates.count > 0) {
        float closest = candidates.distances[0];
        int32_t node = candidates.nodes[0];
        heap_pop(&candidates);
        if (results.count >= ef && closest > results.distances[0]) break;
        // The next node to expand is likely the heap's new top: its links start on their way
        // while this one's neighbours are scored.
        if (candidates.count > 0) loupe_prefetch(links + (size_t)candidates.nodes[0] * width);
        const int32_t *list = links + (size_t)node * width;
        size_t n = 0, length = (size_t)list[0];
        for (size_t i = 1; i <= length; i++)
            if (first_visit(visited, list[i])) fresh[n++] = list[i];
        loupe_hnsw_score(scorer, fresh, n, dots);
        for (size_t i = 0; ok && i < n; i++) {
            float d = 1 - dots[i];
            if (results.count < ef || d < results.distances[0]) {
                ok = heap_push(&candidates, d, fresh[i]) == 0 && heap_push(&results, d, fresh[i]) == 0;
                if (results.count > ef) heap_pop(&results);
            }
        }
    }
    long found = -1;
    if (ok) {
        // Popping the farthest each time fills the output from its end: closest first.
        found = (long)results.count;
        for (size_t i = results.count; i > 0; i--) {
            out_distances[i - 1] = results.distances[0];
            out_nodes[i - 1] = results.nodes[0];
            heap_pop(&results);
        }
    }
    free(candidates.distances);
    free(candidates.nodes);
    free(results.distances);
    free(results.nodes);
    free(fresh);
    free(dots);
    return found;
}
