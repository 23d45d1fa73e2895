#!/usr/bin/env python3
"""Independent reference for all-MiniLM-L6-v2: token ids from Hugging Face `tokenizers`, the
encoder forward pass in plain numpy from the `model.safetensors` weights. Writes the fixtures
that Loupe's Swift implementation is tested against:

  Tests/LoupeModelsTests/Fixtures/minilm/reference.json   ids, tokens, embeddings per sentence,
                                                          and sentence pairs with token types
  Tests/LoupeModelsTests/Fixtures/minilm/attention-NN.f32 attention probabilities, float32 LE,
                                                          [layer][head][query][key], when T <= 64

Run it in a venv with numpy, safetensors and tokenizers from PyPI:
  python3 -m venv .venv-reference && .venv-reference/bin/pip install numpy safetensors tokenizers
  .venv-reference/bin/python scripts/reference/minilm_reference.py [MODEL_DIR]
MODEL_DIR defaults to ~/.cache/loupe/models/all-MiniLM-L6-v2 (scripts/fetch-minilm fills it).
"""
import hashlib
import json
import math
import os
import sys

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

MAX_TOKENS = 256  # sentence_bert_config.json: max_seq_length
HEADS = 12
EPS = 1e-12

SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "Attention is all you need.",
    "Wait... what?! No way -- that's (really) \"unbelievable\"; isn't it?",
    "Café, naïve, résumé, Ångström and jalapeño were served à la carte.",
    "我们今天去公园散步。",
    "東京タワーは333メートルです。",
    "In 2023, the model scored 87.5% on 1,024 samples (p < 0.05) at $3.14 each.",
    "Supercalifragilisticexpialidocious antidisestablishmentarianism pneumonoultramicroscopic.",
    "Email me at alice@example.com or visit https://example.org/path?q=1.",
    "Emoji 🙂 and symbols ∑ ∫ √ are not in the vocabulary ☃.",
    "MiXeD CaSe TeXt With ALL CAPS WORDS",
    " ".join(["The boundary layer on the swept wing thickens downstream as the pressure gradient grows."] * 24),
]


def layer_norm(x, weight, bias):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + EPS) * weight + bias


_erf = np.vectorize(math.erf, otypes=[np.float64])


def gelu(x):
    # BERT's "gelu" is the exact erf form, not the tanh approximation.
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


PAIRS = [
    ("The cat sat on the mat.", "It was tired after the long day."),
    ("What is the boundary layer thickness?", "The boundary layer thickens downstream as the pressure gradient grows."),
]


def forward(w, ids, type_ids=None):
    """One sequence, no padding. Returns (hidden [T, 384], attentions [L, H, T, T])."""
    t = len(ids)
    types = np.zeros(t, dtype=np.int64) if type_ids is None else np.array(type_ids)
    x = (w["embeddings.word_embeddings.weight"][ids]
         + w["embeddings.position_embeddings.weight"][:t]
         + w["embeddings.token_type_embeddings.weight"][types])
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    attentions = []
    layer = 0
    while f"encoder.layer.{layer}.attention.self.query.weight" in w:
        p = f"encoder.layer.{layer}."
        lin = lambda name, h: h @ w[p + name + ".weight"].T + w[p + name + ".bias"]
        q, k, v = (lin("attention.self." + n, x) for n in ("query", "key", "value"))
        d = q.shape[1] // HEADS
        split = lambda m: m.reshape(t, HEADS, d).transpose(1, 0, 2)
        qh, kh, vh = split(q), split(k), split(v)
        scores = qh @ kh.transpose(0, 2, 1) / math.sqrt(d)
        scores = scores - scores.max(axis=-1, keepdims=True)
        probs = np.exp(scores)
        probs = probs / probs.sum(axis=-1, keepdims=True)
        attentions.append(probs)
        context = (probs @ vh).transpose(1, 0, 2).reshape(t, HEADS * d)
        x = layer_norm(lin("attention.output.dense", context) + x,
                       w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
        hidden = gelu(lin("intermediate.dense", x))
        x = layer_norm(lin("output.dense", hidden) + x,
                       w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        layer += 1
    return x, np.stack(attentions)


def main():
    model_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.expanduser("~/.cache/loupe/models/all-MiniLM-L6-v2")
    out_dir = os.path.join(os.path.dirname(__file__), "..", "..", "Tests", "LoupeModelsTests", "Fixtures", "minilm")
    os.makedirs(out_dir, exist_ok=True)
    weights_path = os.path.join(model_dir, "model.safetensors")
    # Compute in float64 so the reference's own rounding is far below the 1e-4 tolerance.
    w = {k: v.astype(np.float64) for k, v in load_file(weights_path).items() if v.dtype != np.int64}
    tokenizer = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(MAX_TOKENS)
    records = []
    for index, text in enumerate(SENTENCES):
        encoding = tokenizer.encode(text)
        ids = encoding.ids
        hidden, attentions = forward(w, ids)
        pooled = hidden.mean(axis=0)
        embedding = pooled / np.linalg.norm(pooled)
        record = {"text": text, "ids": ids, "tokens": encoding.tokens,
                  "embedding": [round(float(v), 8) for v in embedding]}
        if len(ids) <= 64:
            name = f"attention-{index:02d}.f32"
            attentions.astype("<f4").tofile(os.path.join(out_dir, name))
            record["attention_file"] = name
            record["attention_shape"] = list(attentions.shape)
        records.append(record)
        print(f"{index:2d}  T={len(ids):3d}  {text[:60]}")
    pairs = []
    for index, (first, second) in enumerate(PAIRS):
        encoding = tokenizer.encode(first, second)
        hidden, attentions = forward(w, encoding.ids, encoding.type_ids)
        pooled = hidden.mean(axis=0)
        name = f"pair-attention-{index:02d}.f32"
        attentions.astype("<f4").tofile(os.path.join(out_dir, name))
        pairs.append({"first": first, "second": second, "ids": encoding.ids, "type_ids": encoding.type_ids,
                      "tokens": encoding.tokens,
                      "embedding": [round(float(v), 8) for v in pooled / np.linalg.norm(pooled)],
                      "attention_file": name, "attention_shape": list(attentions.shape)})
        print(f"pair {index}  T={len(encoding.ids):3d}  {first[:30]} | {second[:30]}")
    with open(weights_path, "rb") as handle:
        digest = hashlib.sha256(handle.read()).hexdigest()
    with open(os.path.join(out_dir, "reference.json"), "w", encoding="utf-8") as handle:
        json.dump({"model": "sentence-transformers/all-MiniLM-L6-v2", "model_sha256": digest,
                   "max_tokens": MAX_TOKENS, "sentences": records, "pairs": pairs}, handle, ensure_ascii=False, indent=1)
        handle.write("\n")


if __name__ == "__main__":
    main()
