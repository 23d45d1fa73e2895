#!/usr/bin/env bash
# Packs what scripts/bench/team-evals.sh needs to run on a machine with more cores but no Swift and
# no PostgreSQL (the eval-worker scaling of issue 25 is CPU-bound on a 2-core machine): the release
# `loupe`, PostgreSQL's server programs and share files, and every shared library they load,
# glibc's loader included, into one relocatable archive.
#   scripts/bench/team-evals-bundle.sh [OUT]        (default .build/team-evals-bundle.tar.xz)
# On the other machine, from a checkout of the same commit:
#   mkdir /tmp/lb && tar -C /tmp/lb -xJf team-evals-bundle.tar.xz && chmod -R a+rX /tmp/lb
#   PG_BIN=/tmp/lb/pg/lib/postgresql/15/bin LOUPE=/tmp/lb/bin/loupe PG_USER=nobody \
#     WORKERS="1 2 4 8" scripts/bench/team-evals.sh
# Each program runs through the bundled loader (`ld-linux … --library-path`), so the other
# machine's glibc does not matter. PostgreSQL finds its share and lib folders relative to its
# programs, which the layout keeps (pg/lib/postgresql/N/bin beside pg/share/postgresql/N).
# The two ICU data libraries (Foundation's and PostgreSQL's) go first and side by side, so that
# one 256 MiB xz window holds both: 5 MB less.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-.build/team-evals-bundle.tar.xz}
loupe=.build/release/loupe
[ -x "$loupe" ] || { echo "team-evals-bundle: build the release binary first (scripts/setup)" >&2; exit 1; }
pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
version=$(basename "$(dirname "$pgbin")")
stage=$(mktemp -d /tmp/loupe-bundle-XXXXXX)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$stage/pg/lib/postgresql/$version/bin" "$stage/pg/lib/postgresql/$version/lib" \
  "$stage/pg/share/postgresql"
cp "$loupe" "$stage/bin/loupe.real"
programs=(postgres initdb pg_ctl psql)
for program in "${programs[@]}"; do cp "$pgbin/$program" "$stage/pg/lib/postgresql/$version/bin/$program.real"; done
find "/usr/lib/postgresql/$version/lib" -maxdepth 1 -name '*.so' ! -name 'llvmjit*' \
  -exec cp {} "$stage/pg/lib/postgresql/$version/lib/" \;
cp -r "/usr/share/postgresql/$version" "$stage/pg/share/postgresql/"
rm -rf "$stage/pg/share/postgresql/$version/man"
find "$stage" -type f \( -name '*.real' -o -name '*.so' \) -exec ldd {} \; 2>/dev/null | grep -o '/[^ ]*' | sort -u |
  while read -r library; do cp -L "$library" "$stage/lib/"; done
strip "$stage"/bin/*.real "$stage"/pg/lib/postgresql/"$version"/bin/*.real
strip --strip-unneeded "$stage"/lib/*.so* "$stage"/pg/lib/postgresql/"$version"/lib/*.so 2>/dev/null || true
wrap() {  # wrap PROGRAM UP: a script that runs PROGRAM.real through the bundled loader; UP leads to the root
  cat > "$1" <<SCRIPT
#!/bin/sh
root=\$(cd "\$(dirname "\$0")/$2" && pwd)
exec "\$root/lib/ld-linux-x86-64.so.2" --library-path "\$root/lib" "\$0.real" "\$@"
SCRIPT
  chmod 755 "$1"
}
wrap "$stage/bin/loupe" ..
for program in "${programs[@]}"; do wrap "$stage/pg/lib/postgresql/$version/bin/$program" ../../../../..; done
chmod -R a+rX "$stage"
(cd "$stage" && { ls lib/libicudata.so.* lib/lib_FoundationICU.so 2>/dev/null; find . \( -type f -o -type l \) |
  sed 's#^\./##' | grep -v -e '^lib/libicudata\.so\.' -e '^lib/lib_FoundationICU\.so$'; } > "$stage.order")
tar -C "$stage" -cf - -T "$stage.order" | xz -9 -T1 --lzma2=preset=9,dict=256MiB > "$out"
rm -f "$stage.order"
echo "$out: $(du -h "$out" | cut -f1)"
