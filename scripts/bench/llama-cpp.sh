#!/usr/bin/env bash
# Builds llama.cpp's llama-bench once with this CPU's vector instructions (AVX2, and AVX-512 with
# VNNI where /proc/cpuinfo lists them; not -DGGML_NATIVE, whose build on a Xeon with AMX stopped
# on an illegal instruction here, nor AMX, which the kernel must grant per process),
# from the llama.cpp that PyPI's llama-cpp-python sdist vendors (vendor/llama.cpp), into
# .venv-bench/llama.cpp; prints the binary's path. CMake comes from PyPI into .venv-bench.
# The peer of `loupe bench generate` (scripts/bench/generate.sh) on the same GGUF.
set -euo pipefail
cd "$(dirname "$0")/../.."
version=${LLAMA_CPP_PYTHON:-0.3.36}
root=.venv-bench/llama.cpp
binary=$root/build/bin/llama-bench
if [ -x "$binary" ] && [ "$(cat "$root/VERSION" 2>/dev/null)" = "$version no-native" ]; then
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
flags=$(grep -m1 '^flags' /proc/cpuinfo)
has() { case " $flags " in *" $1 "*) echo ON ;; *) echo OFF ;; esac; }
.venv-bench/bin/cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_MAKE_PROGRAM="$PWD/.venv-bench/bin/ninja" \
  -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2="$(has avx2)" -DGGML_FMA="$(has fma)" \
  -DGGML_F16C="$(has f16c)" -DGGML_BMI2="$(has bmi2)" -DGGML_AVX512="$(has avx512f)" \
  -DGGML_AVX512_VNNI="$(has avx512_vnni)" -DGGML_AVX512_BF16="$(has avx512_bf16)" -DGGML_AVX_VNNI="$(has avx_vnni)" \
  -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON >&2
.venv-bench/bin/cmake --build "$root/build" --target llama-bench llama-server -j "$(nproc)" >&2
echo "$version no-native" > "$root/VERSION"
echo "$binary"
