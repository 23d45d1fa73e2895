#!/usr/bin/env bash
# HNSW, Loupe against hnswlib and faiss (IndexHNSWFlat) in one run, M 16, efConstruction 200,
# single thread, efSearch swept, exact cosine ground truth, on the retrieval issue's two sets
# (SET=synthetic, cranfield or both, the default):
#   synthetic  N (default 100,000) × 384 unit vectors around 1,000 Gaussian centres (fixed
#              seed), Q (default 1,000) queries drawn the same way;
#   cranfield  MiniLM embeddings of every Cranfield sentence, the 225 Cranfield queries.
# Prints build times, memory, and the recall@10 / queries-per-second curve of each engine (usearch
# too), and draws the curves in one plot: docs/hnsw-recall-qps-SET.png (PLOTS=dir for another
# place). WORKSPACE=path records every engine's sweep there (`loupe retrieval curves`, and the
# Retrieval panel's curves, c). The peers and matplotlib install into .venv-bench from PyPI on
# first use.
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${N:-100000}
q=${Q:-1000}
ef=${EF:-10,12,14,16,20,24,32,48,64,96,128}
sets=${SET:-both}
[ "$sets" = both ] && sets="synthetic cranfield"
model_dir=${LOUPE_MODELS:-$HOME/.cache/loupe/models}/all-MiniLM-L6-v2
plots=${PLOTS:-docs}
if ! .venv-bench/bin/python -c "import hnswlib, faiss, usearch, matplotlib, numpy" 2>/dev/null; then
  [ -x .venv-bench/bin/python ] || python3 -m venv .venv-bench
  .venv-bench/bin/pip install -q hnswlib faiss-cpu usearch matplotlib numpy
fi
if [[ " $sets " == *" cranfield "* ]] && ! .venv-bench/bin/python -c "import sentence_transformers" 2>/dev/null; then
  .venv-bench/bin/pip install -q torch sentence-transformers
fi
[ -x .build/release/loupe ] || swift build -c release --product loupe
for set in $sets; do
  data=$(mktemp -d)
  trap 'rm -rf "$data"' EXIT
  if [ "$set" = cranfield ]; then
    [ -f "$model_dir/model.safetensors" ] || scripts/fetch-minilm
    .venv-bench/bin/python scripts/bench/hnsw_data.py "$data" cranfield "$model_dir" 2>/dev/null
  else
    .venv-bench/bin/python scripts/bench/hnsw_data.py "$data" "$n" "$q" 384
  fi
  peers_json=$(.venv-bench/bin/python scripts/bench/hnsw_peers.py "$data/vectors.f32" "$data/queries.f32" 384 16 200 "$ef")
  # WORKSPACE=path keeps Loupe's sweep and the peers' there, for `loupe retrieval curves` and the
  # Retrieval panel's curves (c).
  record=()
  if [ -n "${WORKSPACE:-}" ]; then
    printf '%s' "$peers_json" > "$data/peers.json"
    name="clustered $n × 384 (1,000 centres), $q queries"
    [ "$set" = cranfield ] && name="Cranfield sentences (MiniLM), 225 queries"
    record=(--workspace "$WORKSPACE" --record --peers "$data/peers.json" --workload "$name")
  fi
  loupe_json=$(.build/release/loupe bench hnsw --json --vectors "$data/vectors.f32" --queries "$data/queries.f32" \
    --ef "$ef" "${record[@]}")
  .venv-bench/bin/python - "$set" "$loupe_json" "$peers_json" "$plots" <<'PY'
import json, os, sys
name, loupe, peer, plots = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4]
# Loupe's default search scores level 0's beam on 8-bit vectors and ranks what it found exactly;
# "loupe f32" is the same graph with the beam on the float vectors.
engines = {"loupe": loupe["sweep"], "loupe f32": loupe["float32_sweep"], "hnswlib": peer["sweep"], "faiss": peer["faiss_sweep"], "usearch": peer["usearch_sweep"],
           "usearch i8": peer["usearch_i8_sweep"], "faiss sq8": peer["faiss_sq8_sweep"]}
builds = {"loupe": loupe["build_seconds"], "loupe f32": loupe["build_seconds"], "hnswlib": peer["hnswlib_build_seconds"], "faiss": peer["faiss_build_seconds"],
          "usearch": peer["usearch_build_seconds"], "usearch i8": peer["usearch_i8_build_seconds"],
          "faiss sq8": peer["faiss_sq8_build_seconds"]}
v = peer["versions"]
print(f"== {name}: {loupe['vectors']} x {loupe['dimensions']}, {loupe['queries']} queries, M 16, efConstruction 200, "
      f"one thread (hnswlib {v['hnswlib']}, faiss {v['faiss']}, usearch {v['usearch']})")
print("build: " + ", ".join(f"{e} {s:.1f} s" for e, s in builds.items())
      + f"; loupe ÷ hnswlib {builds['loupe'] / builds['hnswlib']:.2f}, ÷ faiss {builds['loupe'] / builds['faiss']:.2f}")
print(f"graph {loupe['graph_bytes'] / 1e6:.1f} MB over {loupe['raw_vector_bytes'] / 1e6:.1f} MB of vectors "
      f"(index / raw = {(loupe['graph_bytes'] + loupe['raw_vector_bytes']) / loupe['raw_vector_bytes']:.2f})")
print(f"{'ef':>4}" + "".join(f"  {e + ' R@10':>13} {'QPS':>7}" for e in engines))
for row in zip(*engines.values()):
    print(f"{row[0]['ef']:4d}" + "".join(f"  {p['recall_at10']:13.4f} {p['queries_per_second']:7.0f}" for p in row))
def at(sweep, target=0.95):
    ok = [p for p in sweep if p["recall_at10"] >= target]
    return max(ok, key=lambda p: p["queries_per_second"]) if ok else None
best = {e: at(s) for e, s in engines.items()}
print("best QPS at recall@10 >= 0.95: " + ", ".join(
    f"{e} {p['queries_per_second']:.0f} (ef {p['ef']})" if p else f"{e} never" for e, p in best.items()))
def qps_at(sweep, target=0.95):
    """QPS where the curve crosses `target` recall: linear in recall between the sweep points
    around it (the points sorted by recall, QPS falling as it rises); None if never reached."""
    points = sorted((p["recall_at10"], p["queries_per_second"]) for p in sweep)
    for (r0, q0), (r1, q1) in zip(points, points[1:]):
        if r0 <= target <= r1:
            return q0 if r1 == r0 else q0 + (q1 - q0) * (target - r0) / (r1 - r0)
    return points[0][1] if points and points[0][0] >= target else None
at95 = {e: qps_at(s) for e, s in engines.items()}
print("QPS at recall@10 = 0.95 (interpolated): " + ", ".join(f"{e} {q:.0f}" if q else f"{e} never" for e, q in at95.items()))
ratios = {}
for peer_name in ("hnswlib", "faiss", "usearch", "usearch i8", "faiss sq8"):
    if at95["loupe"] and at95[peer_name]:
        ratios[peer_name] = at95["loupe"] / at95[peer_name]
        f32 = f" (float beam {at95['loupe f32'] / at95[peer_name]:.2f}x)" if at95["loupe f32"] else ""
        print(f"  loupe ÷ {peer_name}: {ratios[peer_name]:.2f}x{f32}")
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
for engine, sweep in engines.items():
    points = sorted((p["recall_at10"], p["queries_per_second"]) for p in sweep)
    ax.plot([r for r, _ in points], [q for _, q in points], marker="o", markersize=3,
            linewidth=2.2 if engine == "loupe" else 1.2, linestyle="--" if engine == "loupe f32" else "-", label=f"{engine} (build {builds[engine]:.0f} s)")
ax.axvline(0.95, color="grey", linewidth=0.8, linestyle=":")
ax.set_yscale("log")
ax.set_xlabel("recall@10")
ax.set_ylabel("queries per second (one thread)")
ax.set_title(f"HNSW, {name}: {loupe['vectors']:,} x {loupe['dimensions']}, M 16, efConstruction 200")
ax.grid(True, which="both", linewidth=0.3)
ax.legend()
fig.tight_layout()
os.makedirs(plots, exist_ok=True)
png = os.path.join(plots, f"hnsw-recall-qps-{name}.png")
fig.savefig(png)
print(f"plot: {png}")
print(json.dumps({"set": name, "loupe": loupe, "peers": peer, "qps_at_recall_095": at95, "ratios": ratios}))
PY
  rm -rf "$data"
done
