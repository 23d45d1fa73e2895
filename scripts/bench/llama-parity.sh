#!/usr/bin/env bash
# Loupe's quantized path against llama.cpp on the same GGUF, logits for logits (issue 58's second
# reference): the teacher-forced logits of `loupe logits --precision q8 --logits-out` at every
# position of eight varied texts, beside llama.cpp's for the same token ids through PyPI's
# llama-cpp-python, built here from its sdist with this CPU's vector instructions (the same
# flags as scripts/bench/llama-cpp.sh) into .venv-bench. Per position, KL(llama.cpp ‖ Loupe) over
# the whole vocabulary, and top-1 agreement where llama.cpp's top two are at least 0.5 apart.
# Gates: mean KL ≤ 1e-2 and agreement ≥ 97%; exits 1 when either fails. Prints a JSON line last.
#
# LOUPE_BIN: a release loupe built elsewhere; .build/release/loupe else.
set -euo pipefail
cd "$(dirname "$0")/../.."
version=${LLAMA_CPP_PYTHON:-0.3.36}
model=${LOUPE_MODELS:-$HOME/.cache/loupe/models}/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf
[ -f "$model" ] || scripts/fetch-smollm2
loupe=${LOUPE_BIN:-.build/release/loupe}
[ -x "$loupe" ] || swift build -c release --product loupe
[ -x .venv-bench/bin/python ] || python3 -m venv .venv-bench
installed=$(.venv-bench/bin/python -c 'import llama_cpp; print(llama_cpp.__version__)' 2>/dev/null || true)
if [ "$installed" != "$version" ]; then
  flags=$(grep -m1 '^flags' /proc/cpuinfo)
  has() { case " $flags " in *" $1 "*) echo ON ;; *) echo OFF ;; esac; }
  echo "llama-cpp-python $version: building from its sdist (minutes)…" >&2
  .venv-bench/bin/pip install -q numpy >&2
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=$(has avx2) -DGGML_FMA=$(has fma) \
-DGGML_F16C=$(has f16c) -DGGML_BMI2=$(has bmi2) -DGGML_AVX512=$(has avx512f) \
-DGGML_AVX512_VNNI=$(has avx512_vnni) -DGGML_AVX512_BF16=$(has avx512_bf16) -DGGML_AVX_VNNI=$(has avx_vnni) \
-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DLLAMA_CURL=OFF" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) \
    .venv-bench/bin/pip install -q --no-cache-dir --no-binary llama-cpp-python "llama-cpp-python==$version" >&2
fi
exec .venv-bench/bin/python scripts/bench/llama_parity.py --loupe "$loupe" --model "$model"
