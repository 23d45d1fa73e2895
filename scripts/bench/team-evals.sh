#!/usr/bin/env bash
# Eval runs spread over workers (issue 25): one suite of ITEMS (default 960: a run long enough
# that starting the workers is a small part of it) model-target items
# against a chat server that takes LATENCY (default 0.2) seconds an answer, queued on a PostgreSQL
# server this script starts (initdb and pg_ctl in a temporary directory, a free loopback port,
# stopped at the end) and answered by 1, 2 and 4 `loupe eval worker` processes of --concurrency 8.
# Prints answers/s for each and the scaling over one worker (WORKERS="1 2 4 8" to try more). Needs the release binary
# (scripts/setup) and Debian's postgresql package.
set -euo pipefail
cd "$(dirname "$0")/../.."
items=${ITEMS:-960}
latency=${LATENCY:-0.2}
concurrency=${CONCURRENCY:-8}
loupe=${LOUPE:-.build/release/loupe}
chat_pid=
on_exit='[ -n "$chat_pid" ] && kill "$chat_pid"'
. scripts/bench/postgres-server.sh

python3 scripts/bench/team_chat_server.py "$latency" > "$work/chat.port" &
chat_pid=$!
for _ in $(seq 50); do [ -s "$work/chat.port" ] && break; sleep 0.1; done
chat=$(cat "$work/chat.port")
python3 -c "
import json
for n in range($items):
    print(json.dumps({'id': 'q%04d' % n, 'input': 'City number %d?' % n, 'target': 'Paris' if n % 2 == 0 else 'Lyon'}))
" > "$work/items.jsonl"
cat > "$work/suite.yaml" <<YAML
name: team-bench
dataset: items.jsonl
target:
  model: {provider: openai, base_url: "http://127.0.0.1:$chat/v1", model: bench-model, stream: false}
scorers:
  - exact
YAML

echo "$items items, ${latency}s a model answer, --concurrency $concurrency a worker, load $(cut -d' ' -f1 /proc/loadavg)"
one=
for workers in ${WORKERS:-1 2 4}; do
  "$bin/psql" -X -q -h 127.0.0.1 -p "$port" -U loupe -d postgres -c "CREATE DATABASE team$workers"
  url="postgres://loupe@127.0.0.1:$port/team$workers"
  "$loupe" eval run "$work/suite.yaml" --workers --workspace "$url" >/dev/null
  start=$(date +%s.%N)
  pids=()
  for w in $(seq "$workers"); do
    "$loupe" eval worker --workspace "$url" --concurrency "$concurrency" --name "w$w" >/dev/null &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
  end=$(date +%s.%N)
  status=$("$loupe" eval list --json --workspace "$url" | python3 -c 'import json,sys; r=json.load(sys.stdin)[0]; print(r["status"], r["answered"])')
  rate=$(python3 -c "print('%.1f' % ($items / ($end - $start)))")
  [ -z "$one" ] && one=$rate
  echo "$workers worker(s) × $concurrency: $rate answers/s ($status) · $(python3 -c "print('%.2f' % ($rate / $one))")× one worker"
done
