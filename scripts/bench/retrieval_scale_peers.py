"""BM25 peers at scale (issue 23: Cranfield ×100, 140,000 documents), on the tokens and parameters of
`loupe bench retrieval` (lower-case, split on [^a-z0-9]+, the 33-word stop list; title + " " + text;
k1 1.2, b 0.75; top 100):

  bm25s    method "lucene", backend "numba". Index time is `index()` on the token lists (it builds
           its vocabulary too, as loupe's index does); the index size is what `save()` writes.
           Queries go in ONE batched `retrieve(..., k=100, n_threads=1)` call, after a warm-up call
           that pays numba's compilation; best of 3 passes.
  tantivy  the `tantivy` Python binding. The body field holds the tokens joined by spaces under the
           built-in "whitespace" tokenizer, so tantivy indexes exactly our terms; positions are off
           (index_option "freq": BM25 needs term frequencies, not positions). One indexing thread
           (`writer(num_threads=1)`) with a 1 GB arena so the 140,000 documents land in one segment
           instead of several flushed ones (fewer segments favour tantivy's queries, and fewer
           flushes its build). Build time is add_document + commit + waiting for merges, into a
           temp directory; the Document objects are made before the clock starts, as that is
           Python-binding work, not tantivy's. A u64 fast field `row` maps hits back to documents
           (it is in the index size). Queries are a BooleanQuery of one Should TermQuery per query
           token (duplicates kept: bm25s and loupe count a repeated query term twice), built before
           the clock; each is searched alone, top 100, `count=False` so tantivy can prune
           (block-max WAND), one thread; best of 3 passes.

tantivy stores document lengths as a one-byte fieldnorm, so its scores differ slightly from exact
BM25 and its lists are compared by overlap, not identity.

Writes OUTDIR/bm25s.trec and OUTDIR/tantivy.trec (TREC runs, hits with a positive score) and prints
one JSON object. Usage: retrieval_scale_peers.py CORPUS QUERIES OUTDIR"""
import json
import os
import re
import shutil
import sys
import tempfile
import time
from importlib.metadata import version

import bm25s
import numba
import numpy as np
import tantivy

corpus_path, queries_path, out_dir = sys.argv[1:4]
os.makedirs(out_dir, exist_ok=True)
STOP = set("a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with".split())
K = 100
REPEATS = 3


def tokens(text):
    return [t for t in re.split(r"[^a-z0-9]+", text.lower()) if t and t not in STOP]


def dir_bytes(path):
    return sum(os.path.getsize(os.path.join(root, f)) for root, _, files in os.walk(path) for f in files)


def best(fn, repeats=REPEATS):
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def write_run(path, run, tag):
    with open(path, "w") as f:
        for qid, hits in run:
            for rank, (doc, score) in enumerate(hits):
                f.write(f"{qid} Q0 {doc} {rank + 1} {score:.9f} {tag}\n")


start = time.perf_counter()
with open(corpus_path, encoding="utf-8") as f:
    docs = [json.loads(line) for line in f]
with open(queries_path, encoding="utf-8") as f:
    queries = [json.loads(line) for line in f]
ids = [d["id"] for d in docs]
doc_tokens = [tokens((d.get("title") or "") + " " + d["text"]) for d in docs]
query_tokens = [tokens(q["text"]) for q in queries]
del docs
tokenize_seconds = time.perf_counter() - start
results = {"documents": len(ids), "queries_total": len(queries), "tokenize_seconds": tokenize_seconds}

# --- bm25s (numba) -----------------------------------------------------------------------------
retriever = bm25s.BM25(method="lucene", k1=1.2, b=0.75, backend="numba")
start = time.perf_counter()
retriever.index(doc_tokens, show_progress=False)
index_seconds = time.perf_counter() - start
save_dir = tempfile.mkdtemp(prefix="bm25s-")
try:
    retriever.save(save_dir, show_progress=False)
    bm25s_bytes = dir_bytes(save_dir)
finally:
    shutil.rmtree(save_dir, ignore_errors=True)
# bm25s rejects a query with no in-vocabulary term; drop those terms, then those queries.
vocab = retriever.vocab_dict
kept = [(q["id"], [t for t in qt if t in vocab]) for q, qt in zip(queries, query_tokens)]
kept = [(qid, qt) for qid, qt in kept if qt]
batch = [qt for _, qt in kept]
retrieve = lambda: retriever.retrieve(batch, k=K, n_threads=1, show_progress=False)
retrieve()  # numba compiles on first use
seconds, (documents, scores) = best(retrieve)
bm25s_run = [(qid, [(ids[int(d)], float(s)) for d, s in zip(documents[i], scores[i]) if s > 0])
             for i, (qid, _) in enumerate(kept)]
write_run(os.path.join(out_dir, "bm25s.trec"), bm25s_run, "bm25s")
results["bm25s_numba"] = {
    "index_seconds": index_seconds, "index_bytes": bm25s_bytes, "queries_per_second": len(kept) / seconds,
    "queries": len(kept), "batched": True, "threads": 1, "version": bm25s.__version__,
}
del retriever, documents, scores

# --- tantivy -----------------------------------------------------------------------------------
builder = tantivy.SchemaBuilder()
builder.add_text_field("body", stored=False, tokenizer_name="whitespace", index_option="freq")
builder.add_unsigned_field("row", stored=False, indexed=False, fast=True)
schema = builder.build()
index_dir = tempfile.mkdtemp(prefix="tantivy-")
try:
    index = tantivy.Index(schema, path=index_dir)
    def document(i, terms):
        # add_unsigned, not Document(row=i): a Python int arrives as i64 and the u64 column rejects it.
        doc = tantivy.Document()
        doc.add_text("body", " ".join(terms))
        doc.add_unsigned("row", i)
        return doc
    prepared = [document(i, dt) for i, dt in enumerate(doc_tokens)]
    del doc_tokens
    start = time.perf_counter()
    writer = index.writer(heap_size=1_000_000_000, num_threads=1)
    for doc in prepared:
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()
    tantivy_index_seconds = time.perf_counter() - start
    del prepared
    tantivy_bytes = dir_bytes(index_dir)
    index.reload()
    searcher = index.searcher()
    assert searcher.num_docs == len(ids), (searcher.num_docs, len(ids))
    segments = searcher.num_segments
    tq = [(q["id"], qt) for q, qt in zip(queries, query_tokens) if qt]
    built = [tantivy.Query.boolean_query(
        [(tantivy.Occur.Should, tantivy.Query.term_query(schema, "body", t, index_option="freq")) for t in qt])
        for _, qt in tq]
    search = lambda: [searcher.search(q, limit=K, count=False).hits for q in built]
    search()  # warm the OS cache and the binding
    seconds, hits = best(search)
    tantivy_run = []
    for (qid, _), h in zip(tq, hits):
        rows = searcher.fast_field_values("row", [address for _, address in h]) if h else []
        tantivy_run.append((qid, [(ids[int(r)], float(s)) for (s, _), r in zip(h, rows) if s > 0]))
finally:
    shutil.rmtree(index_dir, ignore_errors=True)
write_run(os.path.join(out_dir, "tantivy.trec"), tantivy_run, "tantivy")
results["tantivy"] = {
    "index_seconds": tantivy_index_seconds, "index_bytes": tantivy_bytes, "queries_per_second": len(tq) / seconds,
    "queries": len(tq), "batched": False, "threads": 1, "indexing_threads": 1, "segments": segments,
    "version": version("tantivy"),
}

# bm25s vs tantivy, so this script alone says how far fieldnorm quantisation moves the lists.
b = dict(bm25s_run)
overlaps = [len({d for d, _ in hs} & {d for d, _ in b[qid]}) / max(1, len(b[qid])) for qid, hs in tantivy_run if qid in b]
results["tantivy"]["overlap_at100_vs_bm25s"] = sum(overlaps) / len(overlaps)
results["versions"] = {"bm25s": bm25s.__version__, "numba": numba.__version__, "numpy": np.__version__,
                       "tantivy": version("tantivy"), "tantivy_engine": tantivy.__version__}
print(json.dumps(results))
