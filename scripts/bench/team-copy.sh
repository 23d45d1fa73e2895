#!/usr/bin/env bash
# `loupe workspace copy` timed both ways on real agent spans: COPIES (default 4,000) renumbered copies of
# sample-data/traces/otlp-genai.jsonl imported into a file, copied into a PostgreSQL server this
# script starts (initdb and pg_ctl in a temporary directory, a free loopback port, stopped at the
# end), then back into a new file. Prints each copy's MB/s as `loupe workspace copy --json` reports
# it. Needs the release binary (scripts/setup) and Debian's postgresql package.
set -euo pipefail
cd "$(dirname "$0")/../.."
copies=${COPIES:-4000}
loupe=${LOUPE:-.build/release/loupe}
. scripts/bench/postgres-server.sh
"$bin/psql" -X -q -h 127.0.0.1 -p "$port" -U loupe -d postgres -c "CREATE DATABASE team"
url="postgres://loupe@127.0.0.1:$port/team"

python3 scripts/bench/team_copy_data.py sample-data/traces/otlp-genai.jsonl "$copies" "$work/spans.jsonl"
"$loupe" --workspace "$work/w.sqlite" trace import "$work/spans.jsonl" >/dev/null
echo "workspace: $("$loupe" --workspace "$work/w.sqlite" workspace info | sed -n 's/^file *//p')"
summary='import json, sys
r = json.load(sys.stdin)
rows = sum(t["rows"] for t in r["tables"])
print("%d rows, %.1f MB in %.2f s: %.1f MB/s" % (rows, r["bytes"] / 1e6, r["seconds"], r["megabytes_per_second"]))'
echo -n "SQLite → PostgreSQL: "
"$loupe" workspace copy "$work/w.sqlite" "$url" --json | python3 -c "$summary"
echo -n "again (nothing to copy): "
"$loupe" workspace copy "$work/w.sqlite" "$url" --json | python3 -c "$summary"
echo -n "PostgreSQL → SQLite: "
"$loupe" workspace copy "$url" "$work/back.sqlite" --json | python3 -c "$summary"
