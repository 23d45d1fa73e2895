#!/usr/bin/env bash
# SmolLM2-135M-Instruct on this CPU, Loupe against llama.cpp on the same GGUF in one run:
# `loupe bench generate` (pp512, then tg128 after it) and llama.cpp's llama-bench built natively
# from PyPI's llama-cpp-python sdist (scripts/bench/llama-cpp.sh): pp512 at depth 0 and tg128 at
# depth 512, the same work. Both at 1 and 2 threads, the order alternating between rounds.
# Prints each figure, the ratios, decode's share of the memory bound, and a JSON line last.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${ROUNDS:-2}
repeats=${REPEATS:-3}
model=${LOUPE_MODELS:-$HOME/.cache/loupe/models}/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf
[ -f "$model" ] || scripts/fetch-smollm2
llama_bench=$(scripts/bench/llama-cpp.sh)
# LOUPE_BIN: a release loupe built elsewhere (e.g. with --scratch-path); .build/release/loupe else.
loupe=${LOUPE_BIN:-.build/release/loupe}
[ -x "$loupe" ] || swift build -c release --product loupe
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for round in $(seq 1 "$rounds"); do
  run_loupe() {
    "$loupe" --workspace "$scratch/bench.sqlite" bench generate --json --repeats "$repeats" \
      --threads 1,2 > "$scratch/loupe.$round.json"
  }
  run_llama() {
    "$llama_bench" -m "$model" -p 512 -n 0 -t 1,2 -r "$repeats" -o json > "$scratch/llama-pp.$round.json" 2>/dev/null
    "$llama_bench" -m "$model" -p 0 -n 128 -d 512 -t 1,2 -r "$repeats" -o json \
      > "$scratch/llama-tg.$round.json" 2>/dev/null
  }
  if [ $((round % 2)) -eq 1 ]; then run_loupe; run_llama; else run_llama; run_loupe; fi
done
python3 - "$scratch" "$rounds" <<'PY'
import json, statistics, sys
scratch, rounds = sys.argv[1], int(sys.argv[2])
loupe = [json.load(open(f"{scratch}/loupe.{r}.json")) for r in range(1, rounds + 1)]
def llama(kind, threads, key):
    values = []
    for r in range(1, rounds + 1):
        for row in json.load(open(f"{scratch}/llama-{kind}.{r}.json")):
            if row["n_threads"] == threads:
                values.append(row[key])
    return statistics.median_low(values)  # one round's figure, never the mean of two
result = {"bench": "generate", "rounds": rounds, "weight_bytes": loupe[0]["weight_bytes"],
          "peak_rss_mb": max(l["peak_rss_megabytes"] for l in loupe), "threads": []}
print(f"SmolLM2-135M-Instruct Q4_1, median of {rounds} rounds × {loupe[0]['repeats']} runs")
for i, row in enumerate(loupe[0]["rows"]):
    t = row["threads"]
    # The median round by decode speed (the lower middle one for an even count): every figure
    # from that one round, never the mean of two rounds' fields.
    ranked = sorted(loupe, key=lambda l: l["rows"][i]["decode_tokens_per_second"])
    middle = ranked[(len(ranked) - 1) // 2]["rows"][i]
    def ours(key):
        return middle[key]
    pp, tg = ours("prefill_tokens_per_second"), ours("decode_tokens_per_second")
    share, bandwidth = ours("decode_share_of_memory_bound"), ours("memory_bandwidth_g_bs")
    lpp, ltg = llama("pp", t, "avg_ts"), llama("tg", t, "avg_ts")
    print(f"  {t} thread(s): prefill loupe {pp:7.1f} tokens/s, llama.cpp {lpp:7.1f}: {pp / lpp:.2f}x")
    print(f"               decode  loupe {tg:7.1f} tokens/s, llama.cpp {ltg:7.1f}: {tg / ltg:.2f}x; "
          f"loupe at {share * 100:.0f}% of the memory bound ({bandwidth:.1f} GB/s), llama.cpp at "
          f"{share * ltg / tg * 100:.0f}%")
    print(f"               first token (pp512 + a choice) {ours('time_to_first_token_ms'):.1f} ms")
    result["threads"].append({"threads": t, "loupe_prefill": pp, "llama_prefill": lpp, "loupe_decode": tg,
                              "llama_decode": ltg, "decode_share_of_memory_bound": share,
                              "memory_bandwidth_gbs": bandwidth})
print(f"  peak RSS {result['peak_rss_mb']:.0f} MB (the GGUF is {loupe[0]['weight_bytes'] / 1e6:.1f} MB of tensors)")
print(json.dumps(result))
PY
