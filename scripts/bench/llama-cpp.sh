#!/usr/bin/env bash
# Builds llama.cpp's llama-bench once, natively (-DGGML_NATIVE=ON: this CPU's best instructions),
# from the llama.cpp that PyPI's llama-cpp-python sdist vendors (vendor/llama.cpp), into
# .venv-bench/llama.cpp; prints the binary's path. CMake comes from PyPI into .venv-bench.
# The peer of `loupe bench generate` (scripts/bench/generate.sh) on the same GGUF.
set -euo pipefail
cd "$(dirname "$0")/../.."
version=${LLAMA_CPP_PYTHON:-0.3.36}
root=.venv-bench/llama.cpp
binary=$root/build/bin/llama-bench
if [ -x "$binary" ] && [ "$(cat "$root/VERSION" 2>/dev/null)" = "$version" ]; then
  echo "$binary"
  exit 0
fi
[ -x .venv-bench/bin/python ] || python3 -m venv .venv-bench
.venv-bench/bin/python -m pip show cmake >/dev/null 2>&1 || .venv-bench/bin/pip install -q cmake ninja >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
.venv-bench/bin/pip download -q --no-deps --dest "$work" "llama-cpp-python==$version" >&2
tar -xzf "$work"/llama_cpp_python-"$version".tar.gz -C "$work"
rm -rf "$root"
mkdir -p "$root"
cp -r "$work/llama_cpp_python-$version/vendor/llama.cpp/." "$root/"
echo "llama.cpp: building llama-bench from llama-cpp-python $version's vendored sources…" >&2
.venv-bench/bin/cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_MAKE_PROGRAM="$PWD/.venv-bench/bin/ninja" \
  -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON >&2
.venv-bench/bin/cmake --build "$root/build" --target llama-bench llama-server -j "$(nproc)" >&2
echo "$version" > "$root/VERSION"
echo "$binary"
