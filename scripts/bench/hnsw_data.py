"""Writes the clustered synthetic set of the retrieval issue: N vectors of D dims around 1,000
Gaussian centres (fixed seed), and Q queries drawn the same way, as raw Float32 files.
Usage: hnsw_data.py OUT_DIR [N] [Q] [D]"""
import sys
import numpy as np

out, n, q, d = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 100_000, int(sys.argv[3]) if len(sys.argv) > 3 else 1_000, int(sys.argv[4]) if len(sys.argv) > 4 else 384
rng = np.random.default_rng(1234)
centres = rng.standard_normal((1000, d)).astype(np.float32)
def draw(count):
    x = centres[rng.integers(0, 1000, count)] + 0.5 * rng.standard_normal((count, d)).astype(np.float32)
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
draw(n).tofile(f"{out}/vectors.f32")
draw(q).tofile(f"{out}/queries.f32")
