#!/usr/bin/env bash
# MiniLM embedding throughput, Loupe against its peers in one run: `loupe bench embed --ops`,
# sentence-transformers (torch on CPU, same threads) and the numpy reference, batch 32, on two
# sets: 256 Cranfield sentences of ~30 tokens, and 128 Cranfield passages cut to 256 tokens
# (SETS=sentences or SETS=passages runs one); Loupe in fp32 and in int8 (`--precision int8`, with
# its cosine to the fp32 embeddings; and int8 narrowed to its AVX2 path, what a CPU without AVX-512
# VNNI runs). Prints each figure, Loupe's ratio to each peer, and Loupe's
# and sentence-transformers' shares of the FP32 roof measured in the same run. The peers install
# into .venv-bench from PyPI on first use.
set -euo pipefail
cd "$(dirname "$0")/../.."
repeats=${REPEATS:-5}
sets=${SETS:-sentences passages}
model_dir=${LOUPE_MODELS:-$HOME/.cache/loupe/models}/all-MiniLM-L6-v2
[ -f "$model_dir/model.safetensors" ] || scripts/fetch-minilm
if [ ! -x .venv-bench/bin/python ] || ! .venv-bench/bin/python -c "import sentence_transformers" 2>/dev/null; then
  [ -x .venv-bench/bin/python ] || python3 -m venv .venv-bench
  .venv-bench/bin/pip install -q torch sentence-transformers numpy safetensors tokenizers
fi
[ -x .build/release/loupe ] || swift build -c release --product loupe
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for set in $sets; do
  case $set in
    sentences) file=sample-data/bench/sentences-256.txt ;;
    passages) file=sample-data/bench/passages-128.txt ;;
    *) echo "unknown set $set (sentences, passages)" >&2; exit 2 ;;
  esac
  # --ops profiles one extra pass per operation into a scratch workspace and measures the roof.
  loupe_json=$(.build/release/loupe --workspace "$scratch/bench.sqlite" bench embed --json --ops \
    --sentences "$file" --repeats "$repeats")
  int8_json=$(.build/release/loupe --workspace "$scratch/bench.sqlite" bench embed --json --precision int8 \
    --sentences "$file" --repeats "$repeats")
  # The int8 kernel and attention a CPU with AVX2 and no AVX-512 VNNI or BF16 runs: the AVX2 int8
  # tile and fp32 attention (the other kernels keep their forms here).
  avx2_json=$(.build/release/loupe --workspace "$scratch/bench.sqlite" bench embed --json --precision int8 \
    --int8-kernel avx2 --int8-attention fp32 --sentences "$file" --repeats "$repeats")
  peers_json=$(.venv-bench/bin/python scripts/bench/embed_peers.py "$model_dir" "$file" "$repeats")
  python3 - "$set" "$loupe_json" "$peers_json" "$int8_json" "$avx2_json" <<'PY'
import json, sys
name, loupe, peers, int8, avx2 = (sys.argv[1], *map(json.loads, sys.argv[2:6]))
ours = loupe["sentences_per_second"]
st = peers["sentence_transformers"]["sentences_per_second"]
ref = peers["numpy_reference"]["sentences_per_second"]
print(f"{name}: {loupe['sentences']} of {loupe['mean_tokens']:.1f} tokens, batch {loupe['batch_size']}")
print(f"  loupe (Swift + OpenBLAS)        {ours:8.1f} sentences/s   {loupe['fraction_of_roof'] * 100:.0f}% of the FP32 roof ({loupe['fp32_peak_gflops']:.0f} GFLOP/s)")
q = int8["sentences_per_second"]
print(f"  loupe int8                      {q:8.1f} sentences/s   cosine to fp32: lowest {int8['minimum_cosine_to_fp32']:.5f}, mean {int8['mean_cosine_to_fp32']:.5f}")
a = avx2["sentences_per_second"]
print(f"  loupe int8, AVX2 path           {a:8.1f} sentences/s   ({avx2['int8_kernel']} kernel, {avx2['int8_attention']} attention: "
      f"as on a CPU without AVX-512 VNNI and BF16)")
print(f"  sentence-transformers (torch)   {st:8.1f} sentences/s   loupe ÷ it = {ours / st:.2f}x, loupe int8 ÷ it = {q / st:.2f}x, "
      f"AVX2 path {a / st:.2f}x   ({peers['torch_threads']} threads)")
# The same model on the same tokens: the peer's share of the roof is Loupe's scaled by the speeds,
# and at the roof itself Loupe would be 1 / that share times the peer.
peer_roof = loupe["fraction_of_roof"] * st / ours
print(f"  sentence-transformers at {peer_roof * 100:.0f}% of the FP32 roof: twice it needs {2 * peer_roof * 100:.0f}%, "
      f"the roof itself is {1 / peer_roof:.2f}x it")
print(f"  numpy reference                 {ref:8.1f} sentences/s   loupe ÷ it = {ours / ref:.2f}x")
print(f"  numpy vs sentence-transformers embeddings: max |diff| {peers['numpy_vs_sentence_transformers_max_abs_diff']:.2e}")
print(json.dumps({"set": name, "loupe": loupe, "loupe_int8": int8, "loupe_int8_avx2": avx2, "peers": peers,
                  "ratio_vs_sentence_transformers": ours / st,
                  "int8_ratio_vs_sentence_transformers": q / st,
                  "sentence_transformers_fraction_of_roof": peer_roof,
                  "ratio_vs_numpy": ours / ref}))
PY
done
