#!/usr/bin/env python3
"""Peers for `loupe bench embed`: sentence-transformers (torch, CPU) and the numpy reference,
on the same sentences, batch 32, median of the passes. Prints one JSON object."""
import json
import os
import statistics
import sys
import time

import numpy as np
import torch
from sentence_transformers import SentenceTransformer

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "reference"))
import minilm_reference  # noqa: E402

model_dir, sentences_file, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3])
sentences = [line for line in open(sentences_file, encoding="utf-8").read().splitlines() if line]


def timed(function):
    function()  # warm-up
    passes = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        passes.append(time.perf_counter() - start)
    return passes


model = SentenceTransformer(model_dir, device="cpu")
st_passes = timed(lambda: model.encode(sentences, batch_size=32, convert_to_numpy=True))
st = model.encode(sentences, batch_size=32, convert_to_numpy=True)

# The numpy reference, in float32, one sentence at a time (it has no batching): a floor.
from safetensors.numpy import load_file  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402

weights = {k: v for k, v in load_file(os.path.join(model_dir, "model.safetensors")).items() if v.dtype != np.int64}
tokenizer = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
tokenizer.no_padding()
tokenizer.enable_truncation(256)


def numpy_embed():
    out = []
    for s in sentences:
        hidden, _ = minilm_reference.forward(weights, tokenizer.encode(s).ids)
        pooled = hidden.mean(axis=0)
        out.append(pooled / np.linalg.norm(pooled))
    return np.stack(out)


np_passes = timed(numpy_embed) if repeats else []
agreement = float(np.abs(numpy_embed() - st).max())
print(json.dumps({
    "torch_threads": torch.get_num_threads(),
    "sentence_transformers": {"pass_seconds": st_passes,
                              "sentences_per_second": len(sentences) / statistics.median(st_passes)},
    "numpy_reference": {"pass_seconds": np_passes,
                        "sentences_per_second": len(sentences) / statistics.median(np_passes)},
    "numpy_vs_sentence_transformers_max_abs_diff": agreement,
}))
