# Sourced by the team benches: starts a PostgreSQL server of their own (initdb and pg_ctl in a
# temporary directory, as Debian's postgres user under root (or PG_USER), a free loopback port,
# password `bench`) and stops it, removing the directory, on exit. PG_BIN names PostgreSQL's
# programs where they are not Debian's. Sets `bin`, `work` (the directory), `port` and PGPASSWORD;
# `on_exit` may name more to clean up.
bin=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)}
work=$(mktemp -d /tmp/loupe-team-bench-XXXXXX)
as_server=()
server_user=${PG_USER:-postgres}
if [ "$(id -u)" = 0 ]; then chown "$server_user" "$work"; as_server=(runuser -u "$server_user" --); fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
on_exit=${on_exit:-true}
stop_postgres() {
  eval "$on_exit" || true
  "${as_server[@]}" "$bin/pg_ctl" -D "$work/data" stop -m fast >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap stop_postgres EXIT
echo bench > "$work/pw"
[ "$(id -u)" = 0 ] && chown "$server_user" "$work/pw"
"${as_server[@]}" "$bin/initdb" -D "$work/data" -U loupe --auth=scram-sha-256 --pwfile="$work/pw" -E UTF8 --no-locale \
  >/dev/null
"${as_server[@]}" "$bin/pg_ctl" -D "$work/data" -l "$work/server.log" -w \
  -o "-p $port -c listen_addresses=127.0.0.1 -k $work" start >/dev/null
export PGPASSWORD=bench
