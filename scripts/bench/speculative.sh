#!/usr/bin/env bash
# Prompt-lookup speculative decoding against plain decoding, in the same run: `loupe bench
# speculative` asks SmolLM2-135M-Instruct to rewrite four Cranfield abstracts with one word replaced
# (greedy, up to 256 tokens), each edit generated plainly and with prompt-lookup drafts in turns
# (3 runs each after a warm-up), and reports decode tokens/s of both, the ratio (target 1.5x), the
# acceptance rate and whether both gave the same tokens. The peer is plain decoding: no other
# program decodes with Loupe's kernels. Prints the figures, then a JSON line last.
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
"$loupe" --workspace "$scratch/bench.sqlite" bench speculative --json --threads "${THREADS:-2}" > "$scratch/result.json"
python3 - "$scratch/result.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"{r['model']} {r['precision']}, {r['threads']} thread(s), greedy, up to {r['max_tokens']} tokens, "
      f"drafts of up to {r['draft_tokens']}, median of {r['repeats']} runs in turns")
for row in r["rows"]:
    print(f"  abstract {row['document']} ({row['edit']}, {row['prompt_tokens']} prompt tokens, "
          f"{row['plain']['generated_tokens']} generated): plain {row['plain']['decode_tokens_per_second']:.1f}, "
          f"prompt-lookup {row['speculative']['decode_tokens_per_second']:.1f} tokens/s = {row['speedup']:.2f}x; "
          f"accepted {row['accepted']} of {row['drafted']} ({row['acceptance_rate'] * 100:.0f}%); "
          f"same tokens: {row['same_tokens']}")
print(f"all edits: plain {r['plain_decode_tokens_per_second']:.1f} tokens/s, prompt-lookup "
      f"{r['speculative_decode_tokens_per_second']:.1f} tokens/s = {r['speedup']:.2f}x (target 1.5x); acceptance "
      f"{r['acceptance_rate'] * 100:.0f}%; same tokens everywhere: {r['all_same_tokens']}; load "
      f"{r['load_average_before']:.2f} before, {r['load_average_after']:.2f} after")
print(json.dumps(r))
PY
