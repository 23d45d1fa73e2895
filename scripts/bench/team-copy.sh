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
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
work=$(mktemp -d /tmp/loupe-team-copy-XXXXXX)
as_server=()
if [ "$(id -u)" = 0 ]; then chown postgres "$work"; as_server=(runuser -u postgres --); fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cleanup() {
  "${as_server[@]}" "$bin/pg_ctl" -D "$work/data" stop -m fast >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
echo bench > "$work/pw"
[ "$(id -u)" = 0 ] && chown postgres "$work/pw"
"${as_server[@]}" "$bin/initdb" -D "$work/data" -U loupe --auth=scram-sha-256 --pwfile="$work/pw" -E UTF8 --no-locale \
  >/dev/null
"${as_server[@]}" "$bin/pg_ctl" -D "$work/data" -l "$work/server.log" -w \
  -o "-p $port -c listen_addresses=127.0.0.1 -k $work" start >/dev/null
export PGPASSWORD=bench
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
