#!/usr/bin/env bash
# `loupe serve`'s OpenAI endpoint under load: 1, 4 and 16 concurrent streaming clients
# (scripts/bench/serve_clients.py, http.client in a thread pool) against Loupe one sequence at a
# time (--openai-batch 1), Loupe with continuous batching (--openai-batch 16) and llama.cpp's
# llama-server (built by scripts/bench/llama-cpp.sh's tree; -np 16, -c 16×2048, -t 2) on the same
# GGUF. /v1/completions, a 256-token prompt of its own per request (no shared prefix), greedy,
# 128 tokens asked. Reports aggregate generated tokens/s and time to first token p50/p99, each the
# median of REPEATS runs, with the 1-minute load average before each run beside it: the machine
# may be shared, and then the figures move with the load. Also inter-token latency p50/p99, the
# server's peak RSS during the run (VmRSS sampled every 100 ms) and the peak of its KV cache gauges
# (Loupe's /metrics; llama-server's with --metrics), the largest over the repeats.
#
# The prefix-cache part: 16 clients, 2 requests each, every prompt a 200-token system prompt and
# the 256-token one; `shared` puts the system prompt first (the same leading tokens in every
# request: Loupe's paged prefix blocks, llama-server's slot and RAM prompt cache, both on by
# default, reuse it), `unique` puts each request's number first (the same tokens, nothing to
# reuse). One untimed request warms each run. Reports TTFT p50/p99 both ways for each server.
# PARTS picks what runs: "throughput prefix" (the default), or either alone.
#
# LOUPE_BIN: a release loupe (built with --scratch-path elsewhere, never -c release in .build).
set -euo pipefail
cd "$(dirname "$0")/../.."
repeats=${REPEATS:-3}
parts=${PARTS:-throughput prefix}
clients_list=${CLIENTS:-1 4 16}
max_tokens=${MAX_TOKENS:-128}
model=${LOUPE_MODELS:-$HOME/.cache/loupe/models}/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf
[ -f "$model" ] || scripts/fetch-smollm2
loupe=${LOUPE_BIN:-.build/release/loupe}
llama_server=${LLAMA_SERVER:-.venv-bench/llama.cpp/build/bin/llama-server}
python=${PYTHON:-python3}
[ -x "$loupe" ] || { echo "no release loupe at $loupe (set LOUPE_BIN)" >&2; exit 1; }
[ -x "$llama_server" ] || { echo "no llama-server at $llama_server (build llama.cpp's tree)" >&2; exit 1; }
scratch=$(mktemp -d)
server=""
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; wait 2>/dev/null; rm -rf "$scratch"; }
trap cleanup EXIT

# A prompt of about 256 tokens under SmolLM2's tokenizer: a paragraph repeated, cut at 250 tokens
# by `loupe tokenize` (serve_clients.py puts "Note N. " before it, and reports the count).
paragraph="The river town kept its old stone bridge, though the trains had long since taken the trade \
downstream. Every spring the water rose to the third arch, and every autumn the ferrymen argued about whether \
the new embankment would hold. "
"$loupe" --workspace "$scratch/w.sqlite" tokenize --json "$(printf '%.0s'"$paragraph" $(seq 1 12))" \
  | "$python" -c 'import json,sys; print("".join(json.load(sys.stdin)["pieces"][:250]), end="")' \
  >"$scratch/prompt.txt"
# The shared system prompt: 200 tokens of another text.
system="You are the archivist of the river town. Answer questions about its bridge, its ferries, its floods \
and its trade from the ledgers you keep, quote the year of every record you use, say plainly when the ledgers are \
silent, and never guess at a date. Keep answers short and in the town's plain style. "
"$loupe" --workspace "$scratch/w.sqlite" tokenize --json "$(printf '%.0s'"$system" $(seq 1 6))" \
  | "$python" -c 'import json,sys; print("".join(json.load(sys.stdin)["pieces"][:200]), end="")' \
  >"$scratch/system.txt"

wait_ready() {  # base URL on stdout once /v1/models answers
  for _ in $(seq 1 600); do
    if curl -fs "$1/models" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  echo "server at $1 did not come up" >&2
  return 1
}

start_loupe() {  # $1: --openai-batch
  "$loupe" serve --workspace "$scratch/serve-$1.sqlite" --http-port 0 --grpc-port 0 --openai-port 18181 \
    --openai-queue 64 --openai-batch "$1" >"$scratch/loupe-$1.log" 2>&1 &
  server=$!
  wait_ready http://127.0.0.1:18181/v1
}

start_llama() {
  "$llama_server" -m "$model" -np 16 -c $((16 * 2048)) -t 2 --port 18182 --host 127.0.0.1 --no-webui --metrics \
    >"$scratch/llama.log" 2>&1 &
  server=$!
  wait_ready http://127.0.0.1:18182/v1
}

stop_server() { kill "$server"; wait "$server" 2>/dev/null || true; server=""; }

run_set() {  # $1: name, $2: base URL, $3: model name
  for c in $clients_list; do
    per=$(( c == 1 ? 3 : (c == 4 ? 2 : 1) ))
    for r in $(seq 1 "$repeats"); do
      load=$(cut -d' ' -f1 /proc/loadavg)
      result=$(SERVER_PID=$server METRICS_URL="${2%/v1}/metrics" \
        "$python" scripts/bench/serve_clients.py "$2" "$3" "$c" "$per" "$scratch/prompt.txt" "$max_tokens")
      echo "{\"server\": \"$1\", \"repeat\": $r, \"load\": $load, \"result\": $result}" | tee -a "$scratch/all.jsonl" >&2
    done
  done
}

run_prefix() {  # $1: name, $2: base URL, $3: model name; 16 clients, shared and unique prefixes
  for r in $(seq 1 "$repeats"); do
    for mode in shared unique; do
      load=$(cut -d' ' -f1 /proc/loadavg)
      result=$(SERVER_PID=$server METRICS_URL="${2%/v1}/metrics" \
        "$python" scripts/bench/serve_clients.py "$2" "$3" 16 2 "$scratch/prompt.txt" "$max_tokens" \
        "$scratch/system.txt" "$mode")
      echo "{\"server\": \"$1\", \"repeat\": $r, \"load\": $load, \"result\": $result}" \
        | tee -a "$scratch/prefix.jsonl" >&2
    done
  done
}

model_name=SmolLM2-135M-Instruct
if [[ " $parts " == *" throughput "* ]]; then
  start_loupe 1
  run_set "loupe serial" http://127.0.0.1:18181/v1 $model_name
  stop_server
fi
start_loupe 16
[[ " $parts " == *" throughput "* ]] && run_set "loupe batched" http://127.0.0.1:18181/v1 $model_name
[[ " $parts " == *" prefix "* ]] && run_prefix "loupe batched" http://127.0.0.1:18181/v1 $model_name
stop_server
start_llama
[[ " $parts " == *" throughput "* ]] && run_set "llama-server" http://127.0.0.1:18182/v1 $model_name
[[ " $parts " == *" prefix "* ]] && run_prefix "llama-server" http://127.0.0.1:18182/v1 $model_name
stop_server
touch "$scratch/all.jsonl" "$scratch/prefix.jsonl"

"$python" - "$scratch/all.jsonl" "$(nproc)" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
def ms(runs, key):
    values = [r["result"].get(key) for r in runs if r["result"].get(key) is not None]
    return f"{statistics.median(values) * 1000:.0f} ms" if values else "–"
def rss(runs):
    values = [r["result"].get("peak_rss_mb") or 0 for r in runs]
    return f"{max(values):.0f} MB" if any(values) else "–"
def kv(runs):
    peaks = {}
    for r in runs:
        for name, value in (r["result"].get("peak_kv") or {}).items():
            peaks[name] = max(peaks.get(name, 0), value)
    if "loupe_serve_kv_blocks_in_use" in peaks:
        return f"{peaks['loupe_serve_kv_blocks_in_use']:.0f} of {peaks.get('loupe_serve_kv_blocks', 0):.0f} blocks"
    return ", ".join(f"{name.split(':')[-1]} {value:g}" for name, value in sorted(peaks.items())) or "–"
print(f"SmolLM2-135M-Instruct Q4_1 serving, {sys.argv[2]} cores, median of repeats "
      "(load: 1-minute averages before each repeat)")
print("| Server | Clients | Generated tokens/s | TTFT p50 | TTFT p99 | ITL p50 | ITL p99 | Peak RSS | Peak KV | Load |")
print("|---|---|---|---|---|---|---|---|---|---|")
summary = []
for server in ["loupe serial", "loupe batched", "llama-server"]:
    for clients in sorted({r["result"]["clients"] for r in rows}):
        runs = [r for r in rows if r["server"] == server and r["result"]["clients"] == clients]
        if not runs:
            continue
        med = lambda key: statistics.median(r["result"][key] for r in runs)
        loads = ", ".join(f"{r['load']:.2f}" for r in runs)
        print(f"| {server} | {clients} | {med('tokens_per_s'):.1f} | {med('ttft_p50_s') * 1000:.0f} ms "
              f"| {med('ttft_p99_s') * 1000:.0f} ms | {ms(runs, 'itl_p50_s')} | {ms(runs, 'itl_p99_s')} "
              f"| {rss(runs)} | {kv(runs)} | {loads} |")
        summary.append({"server": server, "clients": clients, "tokens_per_s": med("tokens_per_s"),
                        "ttft_p50_s": med("ttft_p50_s"), "ttft_p99_s": med("ttft_p99_s"),
                        "peak_rss_mb": max((r["result"].get("peak_rss_mb") or 0) for r in runs),
                        "loads": [r["load"] for r in runs]})
print(json.dumps({"bench": "serve", "rows": summary}))
PY

"$python" - "$scratch/prefix.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
if rows:
    print("\nPrefix cache: 16 clients × 2 requests, a 200-token system prompt shared (first) or not "
          "(after each request's number), median of repeats")
    print("| Server | Prefix | Prompt tokens | TTFT p50 | TTFT p99 | Generated tokens/s | Load |")
    print("|---|---|---|---|---|---|---|")
    summary = []
    for server in ["loupe batched", "llama-server"]:
        for mode in ["shared", "unique"]:
            runs = [r for r in rows if r["server"] == server and r["result"]["mode"] == mode]
            if not runs:
                continue
            med = lambda key: statistics.median(r["result"][key] for r in runs)
            prompts = sorted({p for r in runs for p in r["result"]["prompt_tokens"]})
            loads = ", ".join(f"{r['load']:.2f}" for r in runs)
            print(f"| {server} | {mode} | {'–'.join(map(str, prompts[:1] + prompts[-1:]))} "
                  f"| {med('ttft_p50_s') * 1000:.0f} ms | {med('ttft_p99_s') * 1000:.0f} ms "
                  f"| {med('tokens_per_s'):.1f} | {loads} |")
            summary.append({"server": server, "prefix": mode, "ttft_p50_s": med("ttft_p50_s"),
                            "ttft_p99_s": med("ttft_p99_s"), "tokens_per_s": med("tokens_per_s"),
                            "loads": [r["load"] for r in runs]})
    print(json.dumps({"bench": "serve-prefix", "rows": summary}))
PY
