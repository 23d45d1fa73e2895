#!/usr/bin/env bash
# Every comparison of Loupe with its peers in one go, written up as docs/PERFORMANCE.md.
#
# Runs each script of scripts/bench that compares Loupe with a peer (BENCHES, default all of them),
# ROUNDS times (default 2), the order reversed every other round so that neither side of a
# comparison always runs on a warmer or busier machine. Before each script the 1-minute load
# average is recorded and printed beside its figures. Each script's last line of output is its
# JSON; scripts/bench/performance_table.py turns the rounds into one table (median of the rounds):
# workload, Loupe, best peer, ratio, % of roof where one applies. The records (each with its load,
# commit and CPU) are kept in RECORDS (default docs/bench-records, committed with the table, so a
# later session or clone can run a part again with KEEP=1); the logs stay in OUT (default
# .bench-data/all) for a figure to be traced back.
#
# A full run takes about an hour on the 2-core machine (HNSW builds 100,000 vectors three times
# per round); BENCHES="embed retrieval" runs a part. KEEP=1 keeps the other scripts' figures from
# an earlier run in OUT, so a part can be run again after a change that touches only it; each
# figure carries the commit it was measured at, and the table says which. The peers install into
# .venv-bench on first use.
set -euo pipefail
cd "$(dirname "$0")/../.."
benches=(${BENCHES:-embed retrieval retrieval-scale kernels sae hnsw traces generate speculative glassbox mcp})
rounds=${ROUNDS:-2}
out=${OUT:-.bench-data/all}
records=${RECORDS:-docs/bench-records}
mkdir -p "$out" "$records"
if [ "${KEEP:-0}" = 1 ]; then
  for bench in "${benches[@]}"; do rm -f "$records/$bench".*.json; done
else
  rm -f "$records"/*.json
fi
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources Package.swift scripts || echo "+changes")
# LOUPE_BIN: a release loupe built elsewhere (its own --scratch-path), which the scripts that take
# it run instead of .build/release/loupe; the build here is skipped then.
[ -n "${LOUPE_BIN:-}" ] || swift build -c release --product loupe >&2
for round in $(seq 1 "$rounds"); do
  order=("${benches[@]}")
  if [ $((round % 2)) -eq 0 ]; then
    order=()
    for ((i = ${#benches[@]} - 1; i >= 0; i--)); do order+=("${benches[i]}"); done
  fi
  for bench in "${order[@]}"; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    echo "== round $round: $bench (load $load)" >&2
    log="$out/$bench.$round.log"
    bash "scripts/bench/$bench.sh" > "$log" 2>&1 || { echo "$bench failed, see $log" >&2; exit 1; }
    # Every JSON line the script printed (embed and hnsw print one per set), with the load, the
    # commit and the CPU beside it.
    grep '^{' "$log" | python3 -c '
import json, sys
for line in sys.stdin:
    record = json.loads(line)
    record["load_average"] = float(sys.argv[1])
    record["commit"] = sys.argv[2]
    record["cpu"] = f"{sys.argv[3]} ({sys.argv[4]} cores)"
    print(json.dumps(record))' "$load" "$commit" "$cpu" "$(nproc)" > "$records/$bench.$round.json"
  done
done
python3 scripts/bench/performance_table.py "$records" > docs/PERFORMANCE.md
echo "wrote docs/PERFORMANCE.md" >&2
