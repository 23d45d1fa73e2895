#!/usr/bin/env bash
# SAE training throughput against PyTorch (CPU) in one run: `loupe bench sae --json` (MiniLM
# activations collected from Cranfield, then TopK SAE steps on them) and the same step in torch
# (scripts/bench/sae_peers.py) at the same width, k, batch and threads. torch installs into
# .venv-bench. Prints both and loupe's speed ratio (>1: loupe faster).
set -euo pipefail
cd "$(dirname "$0")/../.."
width=${WIDTH:-3072}; k=${K:-32}; batch=${BATCH:-1024}; steps=${STEPS:-20}
threads=$(nproc)
if [ ! -x .venv-bench/bin/python ]; then
  python3 -m venv .venv-bench
  .venv-bench/bin/pip install -q torch numpy
fi
[ -x .build/release/loupe ] || swift build -c release --product loupe
loupe_json=$(.build/release/loupe bench sae --json --width "$width" --k "$k" --batch "$batch" --steps "$steps")
torch_json=$(.venv-bench/bin/python scripts/bench/sae_peers.py "$threads" "$width" "$k" "$batch" "$steps")
python3 - "$loupe_json" "$torch_json" <<'PY'
import json, sys
loupe, torch = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(f"TopK SAE d {loupe['inputs']} x {loupe['width']}, k {loupe['k']}, batch {loupe['batch']}, {loupe['threads']} threads, torch {torch['torch']}")
print(f"activation collection (MiniLM, layer 3): {loupe['collect_tokens_per_second']:.0f} tokens/s")
print(f"training  loupe {loupe['train_tokens_per_second']:.0f} tokens/s ({loupe['train_seconds_per_step'] * 1e3:.1f} ms/step)")
print(f"          torch {torch['train_tokens_per_second']:.0f} tokens/s ({torch['train_seconds_per_step'] * 1e3:.1f} ms/step)")
print(f"loupe / torch: {loupe['train_tokens_per_second'] / torch['train_tokens_per_second']:.2f}x (target >= 1x)")
print(json.dumps({"loupe": loupe, "torch": torch,
                  "ratio": loupe["train_tokens_per_second"] / torch["train_tokens_per_second"]}))
PY
