#!/usr/bin/env bash
# A workspace on PostgreSQL against one on SQLite (issue 25): `loupe bench team` on a PostgreSQL
# server this script starts (initdb and pg_ctl in a temporary directory, a free loopback port,
# stopped at the end): `loupe serve` ingest into each, the Traces panel's list on SPANS (default
# 1,000,000) spans with EXPLAIN ANALYZE, and `workspace copy` of the demo workspace in MB/s; then
# the eval workers' throughput (team-evals.sh) unless EVALS=0. Extra arguments go to `bench team`
# (--json, --seconds, --spans). Needs the release binary (scripts/setup) and Debian's postgresql.
set -euo pipefail
cd "$(dirname "$0")/../.."
loupe=${LOUPE:-.build/release/loupe}
spans=${SPANS:-1000000}
(
  . scripts/bench/postgres-server.sh
  "$loupe" bench team --postgres "postgres://loupe@127.0.0.1:$port/postgres" --spans "$spans" "$@"
)
if [ "${EVALS:-1}" != 0 ]; then ITEMS=${ITEMS:-960} scripts/bench/team-evals.sh; fi
