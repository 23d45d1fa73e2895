"""hnswlib, faiss (IndexHNSWFlat, inner product) and usearch (f32, inner product) on the same
Float32 files as `loupe bench hnsw`: single thread, same M (usearch's connectivity) and
efConstruction (its expansion_add), same efSearch sweep (its expansion_search); exact ground truth
by numpy. Loupe's default search scores its beam on 8-bit vectors, so the two peers that can do
that run as well: usearch with i8 vectors and faiss's IndexHNSWSQ (8-bit scalar quantizer). Each
engine answers all the queries in one call, so no per-query Python overhead is timed.
Prints JSON.
Usage: hnsw_peers.py VECTORS QUERIES DIMS M EF_CONSTRUCTION EF_LIST"""
import importlib.metadata
import json
import sys
import time

import faiss
import hnswlib
import numpy as np
import usearch
from usearch.index import Index

vectors_path, queries_path, d, m, efc, efs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), [int(x) for x in sys.argv[6].split(",")]
x = np.fromfile(vectors_path, dtype=np.float32).reshape(-1, d)
q = np.fromfile(queries_path, dtype=np.float32).reshape(-1, d)
x /= np.linalg.norm(x, axis=1, keepdims=True)
q /= np.linalg.norm(q, axis=1, keepdims=True)
truth = np.argsort(-(q @ x.T), axis=1)[:, :10]


def sweep_of(search, set_ef):
    """recall@10 and queries per second at each efSearch: the best of three timed calls over all
    the queries."""
    points = []
    for ef in efs:
        set_ef(max(ef, 10))
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            labels = search()
            best = min(best, time.perf_counter() - start)
        recall = np.mean([len(set(l) & set(t)) / 10 for l, t in zip(labels, truth)])
        points.append({"ef": ef, "recall_at10": float(recall), "queries_per_second": len(q) / best})
    return points


index = hnswlib.Index(space="ip", dim=d)
index.init_index(max_elements=len(x), M=m, ef_construction=efc, random_seed=42)
index.set_num_threads(1)
start = time.perf_counter()
index.add_items(x, np.arange(len(x)), num_threads=1)
build = time.perf_counter() - start
# One call over all the queries: no per-query Python overhead.
sweep = sweep_of(lambda: index.knn_query(q, k=10, num_threads=1)[0], index.set_ef)

faiss.omp_set_num_threads(1)
flat = faiss.IndexHNSWFlat(d, m, faiss.METRIC_INNER_PRODUCT)
flat.hnsw.efConstruction = efc
start = time.perf_counter()
flat.add(x)
faiss_build = time.perf_counter() - start
faiss_sweep = sweep_of(lambda: flat.search(q, 10)[1], lambda ef: setattr(flat.hnsw, "efSearch", ef))

usearch_index = Index(ndim=d, metric="ip", dtype="f32", connectivity=m, expansion_add=efc, expansion_search=64)
start = time.perf_counter()
usearch_index.add(np.arange(len(x)), x, threads=1)
usearch_build = time.perf_counter() - start
usearch_sweep = sweep_of(lambda: usearch_index.search(q, 10, threads=1).keys,
                         lambda ef: setattr(usearch_index, "expansion_search", ef))

usearch_i8 = Index(ndim=d, metric="ip", dtype="i8", connectivity=m, expansion_add=efc, expansion_search=64)
start = time.perf_counter()
usearch_i8.add(np.arange(len(x)), x, threads=1)
usearch_i8_build = time.perf_counter() - start
usearch_i8_sweep = sweep_of(lambda: usearch_i8.search(q, 10, threads=1).keys,
                            lambda ef: setattr(usearch_i8, "expansion_search", ef))

faiss_sq = faiss.IndexHNSWSQ(d, faiss.ScalarQuantizer.QT_8bit, m, faiss.METRIC_INNER_PRODUCT)
faiss_sq.hnsw.efConstruction = efc
start = time.perf_counter()
faiss_sq.train(x)
faiss_sq.add(x)
faiss_sq_build = time.perf_counter() - start
faiss_sq_sweep = sweep_of(lambda: faiss_sq.search(q, 10)[1], lambda ef: setattr(faiss_sq.hnsw, "efSearch", ef))

print(json.dumps({
    "hnswlib_build_seconds": build, "sweep": sweep, "faiss_build_seconds": faiss_build, "faiss_sweep": faiss_sweep,
    "usearch_build_seconds": usearch_build, "usearch_sweep": usearch_sweep,
    "usearch_i8_build_seconds": usearch_i8_build, "usearch_i8_sweep": usearch_i8_sweep,
    "faiss_sq8_build_seconds": faiss_sq_build, "faiss_sq8_sweep": faiss_sq_sweep,
    "versions": {"hnswlib": importlib.metadata.version("hnswlib"), "faiss": faiss.__version__,
                 "usearch": usearch.__version__},
}))
