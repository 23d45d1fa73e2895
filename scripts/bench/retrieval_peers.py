"""BM25 peers on the same corpus, tokenisation and parameters as `loupe bench retrieval`:
bm25s (numpy and numba backends, method lucene), rank_bm25 (BM25Okapi); and pytrec_eval scoring
both loupe's run file and bm25s's. Prints JSON. Usage: retrieval_peers.py CORPUS QUERIES QRELS LOUPE_RUN"""
import json
import re
import sys
import time

import bm25s
import numpy as np
import pytrec_eval
from rank_bm25 import BM25Okapi

corpus_path, queries_path, qrels_path, loupe_run_path = sys.argv[1:5]
STOP = set("a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with".split())


def tokens(text):
    return [t for t in re.split(r"[^a-z0-9]+", text.lower()) if t and t not in STOP]


docs = [json.loads(line) for line in open(corpus_path)]
queries = [json.loads(line) for line in open(queries_path)]
doc_tokens = [tokens((d.get("title") or "") + " " + d["text"]) for d in docs]
query_tokens = [tokens(q["text"]) for q in queries]
ids = [d["id"] for d in docs]
qrels = {}
for line in open(qrels_path):
    q, _, d, r = line.split()
    qrels.setdefault(q, {})[d] = int(r)
measures = {"ndcg_cut.10", "map", "recall.100", "recip_rank", "P.10"}
evaluator = pytrec_eval.RelevanceEvaluator(qrels, measures)


def mean(run):
    scores = evaluator.evaluate(run)
    # trec_eval -c: every judged query counts, a missing one scores 0.
    keys = {"ndcg_cut_10": "ndcg_at10", "map": "map_at100", "recall_100": "recall_at100", "recip_rank": "mrr", "P_10": "precision_at10"}
    return {name: sum(scores.get(q, {}).get(key, 0.0) for q in qrels) / len(qrels) for key, name in keys.items()}


def best(fn, repeats=5):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


results = {}
vocab_queries = query_tokens
for backend in ["numpy", "numba"]:
    retriever = bm25s.BM25(method="lucene", k1=1.2, b=0.75, backend=backend)
    start = time.perf_counter()
    retriever.index(doc_tokens, show_progress=False)
    index_seconds = time.perf_counter() - start
    # Queries whose every term is out of vocabulary cannot be passed to bm25s; keep the rest.
    vocab = retriever.vocab_dict
    kept = [(q["id"], [t for t in qt if t in vocab]) for q, qt in zip(queries, vocab_queries)]
    kept = [(qid, qt) for qid, qt in kept if qt]
    retrieve = lambda: retriever.retrieve([qt for _, qt in kept], k=100, n_threads=1, show_progress=False)
    retrieve()  # warm up (numba compiles)
    seconds, (documents, scores) = best(retrieve)
    run = {qid: {ids[int(d)]: float(s) for d, s in zip(documents[i], scores[i]) if s > 0} for i, (qid, _) in enumerate(kept)}
    results[f"bm25s_{backend}"] = {"index_seconds": index_seconds, "queries_per_second": len(kept) / seconds, **mean(run)}

okapi = BM25Okapi(doc_tokens, k1=1.2, b=0.75)
def okapi_run():
    run = {}
    for q, qt in zip(queries, query_tokens):
        s = okapi.get_scores(qt)
        top = np.argsort(-s)[:100]
        run[q["id"]] = {ids[i]: float(s[i]) for i in top}
    return run
seconds, run = best(okapi_run, repeats=1)
results["rank_bm25"] = {"queries_per_second": len(queries) / seconds, **mean(run)}

loupe_run = {}
for line in open(loupe_run_path):
    q, _, d, _, s, _ = line.split()
    loupe_run.setdefault(q, {})[d] = float(s)
results["pytrec_eval_on_loupe_run"] = mean(loupe_run)
results["bm25s"] = bm25s.__version__
print(json.dumps(results))
