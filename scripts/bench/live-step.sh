#!/usr/bin/env bash
# A live trace's new step on screen after its span is acknowledged (issue 21: ≤ 250 ms): `loupe
# serve` and the TUI on one workspace, the TUI in a private tmux server following the trace;
# scripts/bench/live_step.py posts one span at a time and polls the screen every 2 ms. The
# polling (and tmux's own drawing) make it an upper bound. ROUNDS spans (default 30).
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${ROUNDS:-30}
[ -x .build/release/loupe ] || swift build -c release --product loupe
[ -x .venv-peers/bin/python ] || scripts/python-peers
work=$(mktemp -d)
socket="loupe-live-$$"
.build/release/loupe workspace init --workspace "$work/w.sqlite" >/dev/null
.build/release/loupe serve --workspace "$work/w.sqlite" --http-port 0 --no-grpc >"$work/serve.log" 2>&1 &
serve=$!
trap 'tmux -L "$socket" kill-server 2>/dev/null || true; kill $serve 2>/dev/null || true; wait $serve 2>/dev/null || true; rm -rf "$work"' EXIT
until endpoint=$(grep -o 'http://[0-9.]*:[0-9]*/v1/traces' "$work/serve.log"); do sleep 0.05; done
.venv-peers/bin/python scripts/bench/live_step.py "$endpoint" "$socket" 0 first
tmux -L "$socket" -f /dev/null new-session -d -s app -x 160 -y 48 -e LANG=C.UTF-8 -e TERM=tmux-256color \
  "$PWD/.build/release/loupe --workspace $work/w.sqlite"
until tmux -L "$socket" capture-pane -t app -p | grep -q "live-bench\|livestep000"; do sleep 0.05; done
# Open the trace; the cursor on its last step follows the newest.
tmux -L "$socket" send-keys -t app Enter
until tmux -L "$socket" capture-pane -t app -p | grep -q "livestep000"; do sleep 0.05; done
.venv-peers/bin/python scripts/bench/live_step.py "$endpoint" "$socket" "$rounds"
