#!/usr/bin/env bash
# The logit lens for one position of a long context, against a plain prefill in the same run:
# `loupe bench glassbox` reads 2,000 tokens of Cranfield abstracts with SmolLM2-135M-Instruct on the
# float path and times (median of 3 after a warm-up) a plain prefill, the probe's prefill keeping
# every position's residual stream, the lens of one position from that capture (target 300 ms) and
# the lens from nothing (a probe keeping one position, then its lens). The peer is the plain
# prefill: no other program reads SmolLM2's insides with Loupe's kernels. Prints the figures, then a
# JSON line last.
#
# LOUPE_BIN: a release loupe built elsewhere (`swift build -c release --product loupe
# --scratch-path DIR`, so a shared .build keeps its debug build); .build/release/loupe else.
set -euo pipefail
cd "$(dirname "$0")/../.."
model=${LOUPE_MODELS:-$HOME/.cache/loupe/models}/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf
[ -f "$model" ] || scripts/fetch-smollm2
loupe=${LOUPE_BIN:-.build/release/loupe}
[ -x "$loupe" ] || swift build -c release --product loupe
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$loupe" --workspace "$scratch/bench.sqlite" bench glassbox --json --context "${CONTEXT:-2000}" \
  --threads "${THREADS:-2}" > "$scratch/result.json"
python3 - "$scratch/result.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"{r['model']} {r['precision']}, {r['context_tokens']} tokens of context, {r['threads']} thread(s), "
      f"median of {r['repeats']}; model ready in {r['load_seconds']:.2f} s")
print(f"  plain prefill {r['plain_prefill_seconds']:.3f} s; prefill keeping every stream "
      f"{r['capture_all_prefill_seconds']:.3f} s ({r['capture_overhead']:.2f}x, {r['captured_megabytes']:.0f} MB)")
print(f"  lens of one position from the capture {r['lens_seconds'] * 1000:.1f} ms (target "
      f"{r['target_lens_seconds'] * 1000:.0f} ms); from nothing {r['lens_from_nothing_seconds']:.3f} s; load "
      f"{r['load_average_before']:.2f} before, {r['load_average_after']:.2f} after")
print(json.dumps(r))
PY
