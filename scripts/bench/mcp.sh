#!/usr/bin/env bash
# MCP tool-call latency: `loupe bench mcp` serves the sample traces with the release loupe and
# calls five tools through the official MCP Python SDK (.venv-peers) over stdio and HTTP, CALLS
# times each (default 300), against the loupe CLI run once per question (Phoenix's MCP server, the
# peer the issue names, is a Node package not installed here). Ends with the JSON.
set -euo pipefail
cd "$(dirname "$0")/../.."
loupe=${LOUPE_BIN:-.build/release/loupe}
[ -x "$loupe" ] || swift build -c release --product loupe
[ -x .venv-peers/bin/python ] || scripts/python-peers
json=$("$loupe" bench mcp --json --calls "${CALLS:-300}")
python3 - "$json" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
for transport in ("stdio", "http", "cli"):
    for tool, s in sorted(r[transport].items()):
        print(f"{transport:5} {tool:15} p50 {s['p50_ms']:7.2f} ms  p99 {s['p99_ms']:7.2f} ms  {s['calls_per_second']:7.1f} calls/s")
print(f"peak RSS: stdio server {r['stdio_server_peak_rss_kb'] / 1024:.1f} MB, HTTP server {r['http_server_peak_rss_kb'] / 1024:.1f} MB")
print(json.dumps(r))
PY
