#!/usr/bin/env bash
# A PostgreSQL server of your own, to try Loupe's team workspace on one machine (notebooks/team.md
# runs it). It uses Debian's postgresql package (apt-get install postgresql); as root it runs the
# server as the postgres user, as initdb requires.
#
#   scripts/local-postgres.sh start DIR [PORT]   initdb DIR/data once, start it on 127.0.0.1:PORT
#                                                (default 5433), make database `team`, print its URL
#   scripts/local-postgres.sh stop DIR           stop it (DIR stays; start again later)
#
# It trusts every connection from this machine's loopback address (no password), as a container
# started with POSTGRES_HOST_AUTH_METHOD=trust does, and listens on nothing else: a server for
# trying things, not a team's (docs/team.md).
set -euo pipefail
command=${1:-}
dir=${2:-}
if [ -z "$dir" ] || { [ "$command" != start ] && [ "$command" != stop ]; }; then
  echo "usage: $0 start DIR [PORT] | stop DIR" >&2
  exit 2
fi
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ ! -x "$bin/initdb" ]; then
  echo "error: PostgreSQL's programs are not in /usr/lib/postgresql/*/bin (apt-get install postgresql)" >&2
  exit 1
fi
as_server=()
[ "$(id -u)" = 0 ] && as_server=(runuser -u postgres --)
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
case $command in
start)
  port=${3:-5433}
  [ "$(id -u)" = 0 ] && chown postgres "$dir"
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    "${as_server[@]}" "$bin/initdb" -D "$dir/data" -U loupe --auth=trust -E UTF8 --no-locale >/dev/null
  fi
  if ! "${as_server[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
    -o "-p $port -c listen_addresses=127.0.0.1 -k $dir" start >/dev/null; then
    echo "error: the server did not start; its log ($dir/server.log) ends:" >&2
    tail -5 "$dir/server.log" >&2
    exit 1
  fi
  if [ -z "$("$bin/psql" -X -h 127.0.0.1 -p "$port" -U loupe -d postgres -tAc \
    "SELECT 1 FROM pg_database WHERE datname = 'team'")" ]; then
    "$bin/createdb" -h 127.0.0.1 -p "$port" -U loupe team
  fi
  echo "postgres://loupe@127.0.0.1:$port/team"
  ;;
stop)
  "${as_server[@]}" "$bin/pg_ctl" -D "$dir/data" stop -m fast >/dev/null
  echo "stopped"
  ;;
esac
