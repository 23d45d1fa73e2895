#!/usr/bin/env bash
# HNSW, Loupe against hnswlib in one run, on the issue's synthetic set: N (default 100,000) × 384
# unit vectors around 1,000 Gaussian centres (fixed seed) and 1,000 queries, M 16,
# efConstruction 200, single thread, efSearch swept; exact cosine ground truth. Prints build
# times, memory, and recall@10 / queries-per-second for both. hnswlib installs into .venv-bench.
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${N:-100000}
q=${Q:-1000}
ef=${EF:-10,16,24,32,48,64,96,128}
if ! .venv-bench/bin/python -c "import hnswlib, numpy" 2>/dev/null; then
  [ -x .venv-bench/bin/python ] || python3 -m venv .venv-bench
  .venv-bench/bin/pip install -q hnswlib numpy
fi
[ -x .build/release/loupe ] || swift build -c release --product loupe
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
.venv-bench/bin/python scripts/bench/hnsw_data.py "$data" "$n" "$q" 384
loupe_json=$(.build/release/loupe bench hnsw --json --vectors "$data/vectors.f32" --queries "$data/queries.f32" --ef "$ef")
peers_json=$(.venv-bench/bin/python scripts/bench/hnsw_peers.py "$data/vectors.f32" "$data/queries.f32" 384 16 200 "$ef")
python3 - "$loupe_json" "$peers_json" <<'PY'
import json, sys
loupe, peer = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(f"{loupe['vectors']} x {loupe['dimensions']}, {loupe['queries']} queries, M 16, efConstruction 200, one thread")
print(f"build: loupe {loupe['build_seconds']:.1f} s, hnswlib {peer['hnswlib_build_seconds']:.1f} s "
      f"(ratio {loupe['build_seconds'] / peer['hnswlib_build_seconds']:.2f}); "
      f"graph {loupe['graph_bytes'] / 1e6:.1f} MB over {loupe['raw_vector_bytes'] / 1e6:.1f} MB of vectors "
      f"(index / raw = {(loupe['graph_bytes'] + loupe['raw_vector_bytes']) / loupe['raw_vector_bytes']:.2f})")
print(f"{'ef':>4}  {'loupe recall':>12} {'loupe QPS':>10}  {'hnswlib recall':>14} {'hnswlib QPS':>11}  QPS ratio")
for a, b in zip(loupe["sweep"], peer["sweep"]):
    print(f"{a['ef']:4d}  {a['recall_at10']:12.4f} {a['queries_per_second']:10.0f}  {b['recall_at10']:14.4f} {b['queries_per_second']:11.0f}  {a['queries_per_second'] / b['queries_per_second']:6.2f}x")
def at(sweep, target=0.95):
    ok = [p for p in sweep if p["recall_at10"] >= target]
    return max(ok, key=lambda p: p["queries_per_second"]) if ok else None
a, b = at(loupe["sweep"]), at(peer["sweep"])
if a and b:
    print(f"best QPS at recall@10 >= 0.95: loupe {a['queries_per_second']:.0f} (ef {a['ef']}), hnswlib {b['queries_per_second']:.0f} (ef {b['ef']}): {a['queries_per_second'] / b['queries_per_second']:.2f}x")
print(json.dumps({"loupe": loupe, "hnswlib": peer}))
PY
