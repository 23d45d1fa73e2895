#!/usr/bin/env bash
# The engine's kernels against PyTorch on CPU in one run: `loupe bench kernels --json` (which also
# checks the issue's ratios against the measured peak and bandwidths) and torch's matmul,
# softmax, layer_norm, GELU and scaled_dot_product_attention at the same shapes and threads.
# Prints each pair and loupe's speed ratio (>1: loupe faster). torch installs into .venv-bench.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${SECONDS_PER_KERNEL:-0.5}
workspace=${WORKSPACE:-.build/bench-kernels.sqlite}
threads=$(nproc)
if [ ! -x .venv-bench/bin/python ]; then
  python3 -m venv .venv-bench
  .venv-bench/bin/pip install -q torch numpy
fi
[ -x .build/release/loupe ] || swift build -c release --product loupe
loupe_json=$(.build/release/loupe --workspace "$workspace" bench kernels --json --seconds "$seconds")
peers_json=$(.venv-bench/bin/python scripts/bench/kernels_peers.py "$threads" "$seconds")
python3 - "$loupe_json" "$peers_json" <<'PY'
import json, sys
loupe, peers = json.loads(sys.argv[1]), json.loads(sys.argv[2])
ours = {(k["kernel"], k["shape"]): k for k in loupe["kernels"]}
pairs = [
    ("sgemm-openblas", "matmul"), ("matmul-blocked", "matmul"), ("matmul-int8-dynamic", "linear-int8-dynamic"), ("softmax-online", "softmax"),
    ("softmax-three-pass", "softmax"), ("layernorm", "layernorm"), ("gelu", "gelu"),
    ("attention-flash", "sdpa"), ("attention-blas", "sdpa"), ("attention-naive", "sdpa"),
]
print(f"FP32 peak {loupe['fp32_peak_gflops']:.1f} GFLOP/s, {loupe['threads']} threads, torch {peers['torch']}")
print(f"{'loupe kernel':20} {'shape':16} {'loupe ms':>9} {'torch':>10} {'torch ms':>9}  loupe speed ÷ torch")
ratios = {}
for mine, theirs in pairs:
    for shape, torch_seconds in peers["seconds"].get(theirs, {}).items():
        k = ours.get((mine, shape))
        if not k:
            continue
        ratio = torch_seconds / k["seconds"]
        ratios[f"{mine} {shape} / torch {theirs}"] = ratio
        print(f"{mine:20} {shape:16} {k['seconds'] * 1e3:9.2f} {theirs:>10} {torch_seconds * 1e3:9.2f}  {ratio:6.2f}x")
print()
for check in loupe["checks"]:
    verdict = {True: "ok  ", False: "MISS", None: "    "}[check.get("passed")]
    print(f"{verdict} {check['name']:62} {check['value']:12.4g}  {check['target']}")
print(json.dumps({"loupe": loupe, "torch": peers, "ratios": ratios}))
PY
