#!/usr/bin/env bash
# MiniLM embedding throughput, Loupe against its peers in one run: `loupe bench embed`,
# sentence-transformers (torch on CPU) and the numpy reference, on the same 256 Cranfield
# sentences of ~30 tokens, batch 32. Prints each figure and Loupe's ratio to each peer.
# The peers install into .venv-bench from PyPI on first use.
set -euo pipefail
cd "$(dirname "$0")/../.."
repeats=${REPEATS:-5}
sentences=${SENTENCES:-sample-data/bench/sentences-256.txt}
model_dir=${LOUPE_MODELS:-$HOME/.cache/loupe/models}/all-MiniLM-L6-v2
[ -f "$model_dir/model.safetensors" ] || scripts/fetch-minilm
if [ ! -x .venv-bench/bin/python ]; then
  python3 -m venv .venv-bench
  .venv-bench/bin/pip install -q torch sentence-transformers numpy safetensors tokenizers
fi
[ -x .build/release/loupe ] || swift build -c release --product loupe
loupe_json=$(.build/release/loupe bench embed --json --sentences "$sentences" --repeats "$repeats")
peers_json=$(.venv-bench/bin/python scripts/bench/embed_peers.py "$model_dir" "$sentences" "$repeats")
python3 - "$loupe_json" "$peers_json" <<'PY'
import json, sys
loupe, peers = json.loads(sys.argv[1]), json.loads(sys.argv[2])
ours = loupe["sentences_per_second"]
st = peers["sentence_transformers"]["sentences_per_second"]
ref = peers["numpy_reference"]["sentences_per_second"]
print(f"sentences: {loupe['sentences']} of {loupe['mean_tokens']:.1f} tokens, batch {loupe['batch_size']}")
print(f"loupe (Swift + OpenBLAS)        {ours:8.1f} sentences/s")
print(f"sentence-transformers (torch)   {st:8.1f} sentences/s   loupe ÷ it = {ours / st:.2f}x   ({peers['torch_threads']} threads)")
print(f"numpy reference                 {ref:8.1f} sentences/s   loupe ÷ it = {ours / ref:.2f}x")
print(f"numpy vs sentence-transformers embeddings: max |diff| {peers['numpy_vs_sentence_transformers_max_abs_diff']:.2e}")
print(json.dumps({"loupe": loupe, "peers": peers, "ratio_vs_sentence_transformers": ours / st, "ratio_vs_numpy": ours / ref}))
PY
