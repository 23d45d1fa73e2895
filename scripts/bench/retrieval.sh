#!/usr/bin/env bash
# BM25 on Cranfield, Loupe against its peers in one run: `loupe bench retrieval` (index time,
# single-thread queries/s, metrics, and a TREC run file), bm25s (numpy and numba backends) and
# rank_bm25 on the same tokens and parameters, and pytrec_eval scoring loupe's run file to check
# our metrics. The peers install into .venv-bench from PyPI on first use.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! .venv-bench/bin/python -c "import bm25s, rank_bm25, pytrec_eval, numba" 2>/dev/null; then
  [ -x .venv-bench/bin/python ] || python3 -m venv .venv-bench
  .venv-bench/bin/pip install -q bm25s rank_bm25 pytrec-eval-terrier numba numpy
fi
[ -x .build/release/loupe ] || swift build -c release --product loupe
run=$(mktemp)
trap 'rm -f "$run"' EXIT
c=sample-data/cranfield
loupe_json=$(.build/release/loupe bench retrieval --json --run-file "$run")
peers_json=$(.venv-bench/bin/python scripts/bench/retrieval_peers.py $c/corpus.jsonl $c/queries.jsonl $c/qrels.trec "$run")
python3 - "$loupe_json" "$peers_json" <<'PY'
import json, sys
loupe, peers = json.loads(sys.argv[1]), json.loads(sys.argv[2])
keys = ["ndcg_at10", "map_at100", "recall_at100", "mrr", "precision_at10"]
print(f"BM25 on Cranfield ({loupe['documents']} docs, {loupe['queries']} queries, k1 1.2, b 0.75, top 100), bm25s {peers['bm25s']}")
print(f"{'engine':18} {'index s':>8} {'QPS':>9}  " + "  ".join(f"{k:>14}" for k in keys))
def row(name, r):
    index = f"{r['index_seconds']:8.3f}" if "index_seconds" in r else " " * 8
    print(f"{name:18} {index} {r['queries_per_second']:9.0f}  " + "  ".join(f"{r[k]:14.4f}" for k in keys))
row("loupe", loupe)
for name in ["bm25s_numpy", "bm25s_numba", "rank_bm25"]:
    row(name, peers[name])
check = peers["pytrec_eval_on_loupe_run"]
worst = max(abs(check[k] - loupe[k]) for k in keys)
print(f"pytrec_eval on loupe's run vs loupe's own metrics: max |diff| {worst:.2e}")
numba = peers["bm25s_numba"]
print(f"loupe QPS ÷ bm25s numba: {loupe['queries_per_second'] / numba['queries_per_second']:.2f}x;  "
      f"nDCG@10 diff {loupe['ndcg_at10'] - numba['ndcg_at10']:+.4f}, MAP@100 diff {loupe['map_at100'] - numba['map_at100']:+.4f}")
print(json.dumps({"loupe": loupe, "peers": peers, "metric_max_abs_diff_vs_pytrec_eval": worst}))
PY
