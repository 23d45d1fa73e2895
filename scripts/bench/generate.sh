#!/usr/bin/env bash
# SmolLM2-135M-Instruct on this CPU, Loupe against llama.cpp on the same GGUF in one run:
# `loupe bench generate` (pp512, then tg128 after it) and llama.cpp's llama-bench built natively
# from PyPI's llama-cpp-python sdist (scripts/bench/llama-cpp.sh): pp512 at depth 0 and tg128 at
# depth 512, the same work.
#
# On a shared machine the load moves by the minute, so the two programs take turns at a fine grain:
# each of GENERATE_ROUNDS rounds (default 5; not ROUNDS, which all.sh reads as its own count and
# its children inherit) runs, for 1 thread then 2, one Loupe run (a warm-up pass, then one timed
# pass) and one llama-bench run of each test (-r 1), the order of the two programs alternating
# between rounds. Every figure is the median over the rounds of single runs (the lower
# middle one for an even count), the 1-minute load average read before each run kept beside it:
# the table shows each figure's median load and range. Peak RSS: Loupe's own (the high-water mark
# of the pp512 + tg128 runs, read before its bandwidth probe) and llama-bench's under
# /usr/bin/time -v. Prints each figure, the ratios, decode's share of the memory bound, and a JSON
# line last.
#
# LOUPE_BIN: a release loupe built elsewhere (`swift build -c release --product loupe
# --scratch-path DIR`, so a shared .build keeps its debug build); .build/release/loupe else.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${GENERATE_ROUNDS:-5}
model=${LOUPE_MODELS:-$HOME/.cache/loupe/models}/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf
[ -f "$model" ] || scripts/fetch-smollm2
llama_bench=$(scripts/bench/llama-cpp.sh)
loupe=${LOUPE_BIN:-.build/release/loupe}
[ -x "$loupe" ] || swift build -c release --product loupe
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
load() { cut -d' ' -f1 /proc/loadavg; }
for round in $(seq 1 "$rounds"); do
  for threads in 1 2; do
    tag="$round.$threads"
    run_loupe() {
      load > "$scratch/loupe.$tag.load"
      "$loupe" --workspace "$scratch/bench.sqlite" bench generate --json --repeats 1 --threads "$threads" \
        > "$scratch/loupe.$tag.json"
    }
    run_llama() {
      load > "$scratch/llama-pp.$tag.load"
      /usr/bin/time -v -o "$scratch/llama-pp.$tag.time" \
        "$llama_bench" -m "$model" -p 512 -n 0 -t "$threads" -r 1 -o json > "$scratch/llama-pp.$tag.json" 2>/dev/null
      load > "$scratch/llama-tg.$tag.load"
      /usr/bin/time -v -o "$scratch/llama-tg.$tag.time" \
        "$llama_bench" -m "$model" -p 0 -n 128 -d 512 -t "$threads" -r 1 -o json \
        > "$scratch/llama-tg.$tag.json" 2>/dev/null
    }
    if [ $((round % 2)) -eq 1 ]; then run_loupe; run_llama; else run_llama; run_loupe; fi
    echo "round $round, $threads thread(s) done (load $(load))" >&2
  done
done
python3 - "$scratch" "$rounds" <<'PY'
import json, re, statistics, sys
scratch, rounds = sys.argv[1], int(sys.argv[2])

def median(values):
    return sorted(values)[(len(values) - 1) // 2]  # one run's figure, never the mean of two

def load(name):
    return float(open(f"{scratch}/{name}.load").read())

def max_rss_mb(name):
    text = open(f"{scratch}/{name}.time").read()
    return int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1)) / 1024

def loads(name, threads):
    values = [load(f"{name}.{r}.{threads}") for r in range(1, rounds + 1)]
    return {"median": median(values), "min": min(values), "max": max(values)}

def shown(l):
    return f"load {l['median']:.1f} ({l['min']:.1f}–{l['max']:.1f})"

first = json.load(open(f"{scratch}/loupe.1.1.json"))
result = {"bench": "generate", "rounds": rounds, "weight_bytes": first["weight_bytes"], "threads": []}
print(f"SmolLM2-135M-Instruct Q4_1, median of {rounds} alternating rounds of single runs; "
      "1-minute load average before each run: median (range)")
rss = []
for t in (1, 2):
    loupe = [json.load(open(f"{scratch}/loupe.{r}.{t}.json")) for r in range(1, rounds + 1)]
    rows = [l["rows"][0] for l in loupe]
    rss += [l["peak_rss_megabytes"] for l in loupe]
    pp = median([row["prefill_tokens_per_second"] for row in rows])
    tg = median([row["decode_tokens_per_second"] for row in rows])
    first_token = median([row["time_to_first_token_ms"] for row in rows])
    bandwidth = median([row["memory_bandwidth_g_bs"] for row in rows])
    bytes_per_token = rows[0]["decode_bytes_per_token"]
    share = bytes_per_token * tg / 1e9 / bandwidth
    lpp = median([json.load(open(f"{scratch}/llama-pp.{r}.{t}.json"))[0]["avg_ts"] for r in range(1, rounds + 1)])
    ltg = median([json.load(open(f"{scratch}/llama-tg.{r}.{t}.json"))[0]["avg_ts"] for r in range(1, rounds + 1)])
    ours, theirs_pp, theirs_tg = loads("loupe", t), loads("llama-pp", t), loads("llama-tg", t)
    print(f"  {t} thread(s): prefill loupe {pp:7.1f} tokens/s ({shown(ours)}), "
          f"llama.cpp {lpp:7.1f} ({shown(theirs_pp)}): {pp / lpp:.2f}x")
    print(f"               decode  loupe {tg:7.1f} tokens/s ({shown(ours)}), "
          f"llama.cpp {ltg:7.1f} ({shown(theirs_tg)}): {tg / ltg:.2f}x; "
          f"loupe at {share * 100:.0f}% of the memory bound ({bandwidth:.1f} GB/s), "
          f"llama.cpp at {share * ltg / tg * 100:.0f}%")
    print(f"               first token (pp512 + a choice) {first_token:.1f} ms")
    result["threads"].append({"threads": t, "loupe_prefill": pp, "llama_prefill": lpp, "loupe_decode": tg,
                              "llama_decode": ltg, "decode_share_of_memory_bound": share,
                              "memory_bandwidth_gbs": bandwidth, "loupe_load": ours,
                              "llama_prefill_load": theirs_pp, "llama_decode_load": theirs_tg})
result["peak_rss_mb"] = median(rss)
result["llama_peak_rss_mb"] = median([max_rss_mb(f"llama-tg.{r}.{t}") for r in range(1, rounds + 1) for t in (1, 2)])
print(f"  peak RSS loupe {result['peak_rss_mb']:.0f} MB (pp512 then tg128 in one process), "
      f"llama-bench tg128 at depth 512 {result['llama_peak_rss_mb']:.0f} MB; "
      f"the GGUF is {first['weight_bytes'] / 1e6:.1f} MB of tensors")
print(json.dumps(result))
PY
