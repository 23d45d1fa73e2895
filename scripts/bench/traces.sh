#!/usr/bin/env bash
# Trace import and replay: `loupe bench traces` generates a 100 MB OTLP JSON Lines file of agent
# runs (MEGABYTES to change it), times `loupe trace import` of it in a child process (its peak RSS
# its own), reads the same lines with Python's json.loads (the parse alone, no importer: the floor
# a Python importer starts from), then imports a 50,000-span trace and times opening it in the
# Traces panel and stepping through it. Ends with the JSON.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -x .build/release/loupe ] || swift build -c release --product loupe
json=$(.build/release/loupe bench traces --json --megabytes "${MEGABYTES:-100}")
python3 - "$json" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
print(f"loupe trace import of {r['file_bytes'] / 1e6:.1f} MB: {r['import_megabytes_per_second']:.1f} MB/s (target >= 60), "
      f"peak RSS {r['import_peak_rss_megabytes']:.0f} MB = {r['import_peak_rss_over_file']:.2f}x the file (target <= 2)")
if r.get("python_json_loads_megabytes_per_second"):
    print(f"python json.loads alone over the same lines: {r['python_json_loads_megabytes_per_second']:.1f} MB/s")
print(f"{r['replay_spans']}-span trace: open to first frame {r['open_first_frame_milliseconds']:.1f} ms (target <= 200)")
print(json.dumps(r))
PY
