#!/usr/bin/env bash
# Issue 60's three figures, each beside its target, in one run of `loupe bench glassbox`:
# - the logit lens for one position of a long context, against a plain prefill: 2,000 tokens of
#   Cranfield abstracts read by SmolLM2-135M-Instruct on the float path, timed (median of 3 after a
#   warm-up): a plain prefill, the probe's prefill keeping every position's residual stream, the
#   lens of one position from that capture (target 300 ms) and the lens from nothing;
# - the Traces panel opening the token view of a local model's step of ~500 generated tokens
#   (recorded in a scratch workspace as an agent's model call), `T` to its first frame (target
#   100 ms, median of 20);
# - a steered generation (`--steer 0:8` at layer 15 through the hook `loupe generate --steer` uses,
#   an untrained SAE's random unit direction) against the same plain greedy one, same prompt and
#   token count, alternating, median of 5 (target 1.2x).
# The peers are Loupe's own unsteered paths: no other program reads SmolLM2's insides with Loupe's
# kernels. Prints the figures, then a JSON line last.
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
v, s = r.get("token_view"), r.get("steering")
if v:
    print(f"  token view of a {v['step_tokens']}-token step: T to its first frame {v['open_milliseconds']:.1f} ms "
          f"(target {v['target_open_milliseconds']:.0f} ms); from enter on the trace "
          f"{v['from_trace_milliseconds']:.1f} ms; median of {v['repeats']}")
if s:
    print(f"  steered generation of {s['tokens']} tokens {s['steered_seconds']:.3f} s, plain "
          f"{s['plain_seconds']:.3f} s: {s['steered_over_plain']:.2f}x (target {s['target_ratio']}x); "
          f"layer {s['layer']}, alpha {s['alpha']:g}, median of {s['rounds']} alternating rounds")
print(json.dumps(r))
PY
