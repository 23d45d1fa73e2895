"""Writes a set for `loupe bench hnsw` and its peers as raw Float32 files (vectors.f32,
queries.f32) in OUT_DIR.

  hnsw_data.py OUT_DIR [N] [Q] [D]       the retrieval issue's clustered synthetic set: N
                                         vectors of D dims around 1,000 Gaussian centres (fixed
                                         seed), and Q queries drawn the same way
  hnsw_data.py OUT_DIR cranfield MODEL   MiniLM (sentence-transformers, normalised) embeddings of
                                         every Cranfield sentence (split at " . "), and of the
                                         225 Cranfield queries"""
import json
import sys

import numpy as np

out = sys.argv[1]
if len(sys.argv) > 2 and sys.argv[2] == "cranfield":
    import torch
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(0)
    sentences = []
    for line in open("sample-data/cranfield/corpus.jsonl"):
        text = json.loads(line)["text"]
        sentences += [s.strip() for s in text.split(" . ") if len(s.split()) >= 3]
    queries = [json.loads(line)["text"] for line in open("sample-data/cranfield/queries.jsonl")]
    model = SentenceTransformer(sys.argv[3], device="cpu")
    encode = lambda texts: model.encode(texts, batch_size=64, normalize_embeddings=True).astype(np.float32)
    encode(sentences).tofile(f"{out}/vectors.f32")
    encode(queries).tofile(f"{out}/queries.f32")
    sys.exit(0)
n, q, d = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000, int(sys.argv[3]) if len(sys.argv) > 3 else 1_000, int(sys.argv[4]) if len(sys.argv) > 4 else 384
rng = np.random.default_rng(1234)
centres = rng.standard_normal((1000, d)).astype(np.float32)
def draw(count):
    x = centres[rng.integers(0, 1000, count)] + 0.5 * rng.standard_normal((count, d)).astype(np.float32)
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
draw(n).tofile(f"{out}/vectors.f32")
draw(q).tofile(f"{out}/queries.f32")
