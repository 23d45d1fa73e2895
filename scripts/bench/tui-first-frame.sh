#!/usr/bin/env bash
# Time to first frame on a real terminal: start loupe in a private tmux server and poll the
# screen every 2 ms until the tab bar shows. Includes process start, ncurses set-up and tmux's
# own drawing; the polling makes it an upper bound. `loupe bench tui` measures the same start-up
# headless. Prints the median of RUNS runs (default 9) in milliseconds.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${RUNS:-9}
[ -x .build/release/loupe ] || swift build -c release --product loupe
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
.build/release/loupe workspace init --workspace "$work/w.sqlite" >/dev/null
times=()
for run in $(seq "$runs"); do
  socket="loupe-ff-$$-$run"
  start=$(date +%s%N)
  tmux -L "$socket" -f /dev/null new-session -d -s app -x 200 -y 60 -e LANG=C.UTF-8 -e TERM=tmux-256color \
    "$PWD/.build/release/loupe --workspace $work/w.sqlite"
  until tmux -L "$socket" capture-pane -t app -p 2>/dev/null | grep -q "1 Traces"; do sleep 0.002; done
  end=$(date +%s%N)
  tmux -L "$socket" kill-server
  times+=($(( (end - start) / 1000 )))
done
printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "first frame in tmux: median %.1f ms (min %.1f, max %.1f, %d runs)\n", a[int((NR+1)/2)]/1000, a[1]/1000, a[NR]/1000, NR}'
