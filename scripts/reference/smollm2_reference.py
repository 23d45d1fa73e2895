#!/usr/bin/env python3
"""Independent float32 reference for SmolLM2-135M-Instruct's forward pass, in plain numpy from
the weights PyPI `gguf` reads and dequantizes out of the model's GGUF file (no torch).

The model is llama.cpp's `llama` graph (research brief local-llm.md section 3):
  x = token_embd[id]; per layer:
    h   = x + Wo · attention(RoPE(Wq · n), RoPE(Wk · n), Wv · n),  n = RMSNorm(x) · attn_norm
    x   = h + Wdown · (silu(Wgate · m) * (Wup · m)),                m = RMSNorm(h) · ffn_norm
  logits = token_embd · (RMSNorm(x) · output_norm)   (the head is tied to the embedding)
RoPE is llama.cpp's NORM mode: each head's adjacent pair (2i, 2i+1) turns by pos · base^(-2i/d),
base = llama.rope.freq_base. Attention is causal, grouped (query head j reads KV head j // (heads
/ kv_heads)), scaled by 1/sqrt(head_dim). RMSNorm is x / sqrt(mean(x^2) + eps). No biases.
Weights are dequantized to float32 and every product is float32; norms' sums and the RoPE angles
are computed in float64 and rounded to float32, so the result is deterministic.

Input: one JSON object on stdin.
  "prompts":   [[id, ...], ...]    token ids, run as they are
  "texts":     ["...", ...]        texts tokenized here (special tokens such as <|im_start|> are
                                   matched whole) and run after "prompts"
  "positions": N                   keep each prompt's first N ids (optional)
  "logits":    "/path"             write every position's logits, float32 little-endian, prompt
                                   after prompt, [sum of lengths][vocab] (optional)
  "top":       K                   report the top K (id, logit) at each prompt's last position
  "greedy":    N                   report each prompt's greedy continuation of up to N tokens,
                                   stopping after <|im_end|> (2) or <|endoftext|> (0)
  "steer":     {"layer": L, "vector": [v, ...]}
                                   add the vector (width values) to the residual stream leaving
                                   layer L at every position, in every pass this request runs
                                   (steering; optional)
  "probe":     {"attention_layers": [L, ...], "lens_positions": [P, ...], "top": K,
                "ablated": [[layer, head], ...]}
                                   the glass-box quantities: every query head's attention
                                   probabilities [head][query][key] in each layer asked for, and
                                   the logit lens at each position asked for: for the embeddings
                                   (layer 0) and the stream leaving each layer (layer l + 1), the
                                   final norm and head's top K (id, log-probability) and the next
                                   token's log-probability (optional)
With none of "logits", "top", "greedy" and "probe" the script only tokenizes (and loads no
weights).
Output: one JSON object on stdout: {"prompts": [[ids]], "top": [[[id, logit], ...]], "greedy":
[[ids]], "probe": [{"attention": {"L": [[[p]]]}, "lens": [[{"layer", "position", "top",
"next"}]]}]}.

  .venv-peers/bin/python scripts/reference/smollm2_reference.py [--gguf FILE] < request.json
  .venv-peers/bin/python scripts/reference/smollm2_reference.py --test-vector
      checks the research brief's vector: the ChatML "What is the capital of France?" prompt's
      last-position top 5 and greedy continuation; exits 1 on a mismatch.
FILE defaults to $LOUPE_MODELS (or ~/.cache/loupe/models)/SmolLM2-135M-Instruct/
SmolLM2-135M-Instruct.Q4_1.gguf; scripts/fetch-smollm2 fetches it.
"""
import argparse
import json
import os
import sys

import gguf
import numpy as np

CONTROL = 3  # llama.cpp's LLAMA_TOKEN_TYPE_CONTROL
END_OF_GENERATION = {0, 2}

FRANCE_IDS = [1, 9690, 198, 2683, 359, 253, 5356, 5646, 11173, 3365, 3511, 308, 34519, 28, 7018, 411, 407,
              19712, 8182, 2, 198, 1, 4093, 198, 1780, 314, 260, 3575, 282, 4649, 47, 2, 198, 1, 520, 9531, 198]
FRANCE_TOP5 = [("The", 25.325), ("L", 25.243), ("La", 24.942), ("Al", 24.402), ("Le", 24.315)]
FRANCE_GREEDY = [504, 3575, 282, 4649, 314, 7042, 30, 2]


def default_model_path():
    root = os.environ.get("LOUPE_MODELS") or os.path.expanduser("~/.cache/loupe/models")
    return os.path.join(root, "SmolLM2-135M-Instruct", "SmolLM2-135M-Instruct.Q4_1.gguf")


class Model:
    def __init__(self, path):
        reader = gguf.GGUFReader(path)
        self.reader = reader

        def field(key):
            entry = reader.fields.get(key)
            if entry is None:
                sys.exit(f"{path}: {key}: missing")
            return entry.contents()

        architecture = field("general.architecture")
        if architecture != "llama":
            sys.exit(f"{path}: general.architecture is '{architecture}', not 'llama'")
        self.field = field
        self.layers = int(field("llama.block_count"))
        self.width = int(field("llama.embedding_length"))
        self.heads = int(field("llama.attention.head_count"))
        self.kv_heads = int(field("llama.attention.head_count_kv"))
        self.head_dim = self.width // self.heads
        self.base = float(field("llama.rope.freq_base"))
        self.eps = float(field("llama.attention.layer_norm_rms_epsilon"))
        self.blocks = None  # the weights, loaded by the first forward pass (tokenizing needs none)
        self.steer = None  # (layer, vector [width]) added to the stream leaving that layer

    def load_weights(self):
        reader = self.reader
        tensors = {t.name: t for t in reader.tensors}

        def weight(name):
            tensor = tensors[name]
            values = gguf.quants.dequantize(tensor.data, tensor.tensor_type)
            ne = [int(n) for n in tensor.shape]  # ne0 first
            return np.ascontiguousarray(values, dtype=np.float32).reshape(list(reversed(ne)))

        self.embedding = weight("token_embd.weight")  # [vocab, width]
        self.output_norm = weight("output_norm.weight")
        self.blocks = []
        for i in range(self.layers):
            p = f"blk.{i}."
            self.blocks.append({k: weight(p + k + ".weight") for k in (
                "attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm", "ffn_gate", "ffn_up",
                "ffn_down")})

    def rms_norm(self, x, weight):
        mean = np.mean(x.astype(np.float64) ** 2, axis=-1, keepdims=True)
        scale = (1.0 / np.sqrt(mean + self.eps)).astype(np.float32)
        return (x * scale) * weight

    def rope(self, x, positions):
        """x: [T, heads, head_dim]; NORM mode: pairs (2i, 2i+1)."""
        d = self.head_dim
        theta = self.base ** (-np.arange(0, d, 2, dtype=np.float64) / d)  # [d/2]
        angles = np.asarray(positions, dtype=np.float64)[:, None] * theta[None, :]
        cos = np.cos(angles).astype(np.float32)[:, None, :]
        sin = np.sin(angles).astype(np.float32)[:, None, :]
        even, odd = x[..., 0::2], x[..., 1::2]
        out = np.empty_like(x)
        out[..., 0::2] = even * cos - odd * sin
        out[..., 1::2] = even * sin + odd * cos
        return out

    def logits(self, ids):
        """Every position's logits, [T, vocab] float32."""
        return self.head(self.forward(ids)["final"])

    def head(self, x):
        """The final RMSNorm and the tied head on residual rows [n, width]: logits [n, vocab]."""
        return self.rms_norm(x, self.output_norm) @ self.embedding.T

    def forward(self, ids, attention_layers=(), ablated=()):
        """The residual stream through every layer. Returns {"final": [T, width], "residuals":
        [layers + 1][T, width] (entry 0 the embeddings, entry l + 1 the stream leaving layer l),
        "attention": {layer: [heads, T, T]} for attention_layers}; heads in ablated ((layer, head)
        pairs) have their context zeroed before the output projection."""
        if self.blocks is None:
            self.load_weights()
        t = len(ids)
        positions = np.arange(t)
        group = self.heads // self.kv_heads
        scale = np.float32(1.0 / np.sqrt(self.head_dim))
        mask = np.triu(np.full((t, t), -np.inf, dtype=np.float32), k=1)
        x = self.embedding[np.asarray(ids, dtype=np.int64)]
        residuals = [x]
        attention = {}
        ablated = set(map(tuple, ablated))
        for index, block in enumerate(self.blocks):
            n = self.rms_norm(x, block["attn_norm"])
            q = self.rope((n @ block["attn_q"].T).reshape(t, self.heads, self.head_dim), positions)
            k = self.rope((n @ block["attn_k"].T).reshape(t, self.kv_heads, self.head_dim), positions)
            v = (n @ block["attn_v"].T).reshape(t, self.kv_heads, self.head_dim)
            context = np.empty((t, self.heads, self.head_dim), dtype=np.float32)
            kept = np.empty((self.heads, t, t), dtype=np.float32) if index in attention_layers else None
            for head in range(self.heads):
                kv = head // group
                scores = (q[:, head, :] @ k[:, kv, :].T) * scale + mask
                scores = scores - scores.max(axis=-1, keepdims=True)
                probabilities = np.exp(scores)
                probabilities /= probabilities.sum(axis=-1, keepdims=True)
                if kept is not None:
                    kept[head] = probabilities
                context[:, head, :] = probabilities @ v[:, kv, :]
                if (index, head) in ablated:
                    context[:, head, :] = 0
            if kept is not None:
                attention[index] = kept
            h = x + context.reshape(t, self.width) @ block["attn_output"].T
            m = self.rms_norm(h, block["ffn_norm"])
            gate = m @ block["ffn_gate"].T
            up = m @ block["ffn_up"].T
            x = h + ((gate / (np.float32(1) + np.exp(-gate))) * up) @ block["ffn_down"].T
            if self.steer is not None and index == self.steer[0]:
                x = x + self.steer[1]
            residuals.append(x)
        return {"final": x, "residuals": residuals, "attention": attention}

    def greedy(self, ids, count):
        ids = list(ids)
        out = []
        for _ in range(count):
            token = int(np.argmax(self.logits(ids)[-1]))
            out.append(token)
            ids.append(token)
            if token in END_OF_GENERATION:
                break
        return out

    def tokenizer(self):
        from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

        tokens = self.field("tokenizer.ggml.tokens")
        merges = self.field("tokenizer.ggml.merges")
        types = [int(t) for t in self.field("tokenizer.ggml.token_type")]
        tokenizer = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)},
                                         merges=[tuple(m.split(" ", 1)) for m in merges]))
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
        tokenizer.decoder = decoders.ByteLevel()
        tokenizer.add_special_tokens(
            [AddedToken(tokens[i], special=True, normalized=False) for i, t in enumerate(types) if t == CONTROL])
        return tokenizer, tokens


def top(row, k):
    order = np.argsort(-row, kind="stable")[:k]
    return [[int(i), float(row[i])] for i in order]


def run(model, request):
    prompts = [list(map(int, p)) for p in request.get("prompts", [])]
    if request.get("texts"):
        tokenizer, _ = model.tokenizer()
        prompts += [tokenizer.encode(text, add_special_tokens=False).ids for text in request["texts"]]
    if request.get("positions"):
        prompts = [p[:int(request["positions"])] for p in prompts]
    result = {"prompts": prompts, "top": [], "greedy": []}
    if request.get("steer"):
        model.steer = (int(request["steer"]["layer"]), np.asarray(request["steer"]["vector"], dtype=np.float32))
    if request.get("probe"):
        result["probe"] = [probe(model, ids, request["probe"]) for ids in prompts]
    if not (request.get("logits") or request.get("top") or request.get("greedy")):
        return result
    sink = open(request["logits"], "wb") if request.get("logits") else None
    for ids in prompts:
        logits = model.logits(ids)
        if sink:
            sink.write(np.ascontiguousarray(logits, dtype="<f4").tobytes())
        if request.get("top"):
            result["top"].append(top(logits[-1], int(request["top"])))
        if request.get("greedy"):
            result["greedy"].append(model.greedy(ids, int(request["greedy"])))
    if sink:
        sink.close()
    return result


def log_softmax(rows):
    rows = rows.astype(np.float64)
    top = rows.max(axis=-1, keepdims=True)
    return rows - top - np.log(np.exp(rows - top).sum(axis=-1, keepdims=True))


def probe(model, ids, request):
    """The glass-box quantities of one prompt: every head's attention probabilities in the layers
    asked for, and the logit lens (each residual stream through the final norm and the head) at
    the positions asked for, each cell's top K and the next token's log-probability."""
    layers = [int(layer) for layer in request.get("attention_layers", [])]
    captured = model.forward(ids, attention_layers=set(layers), ablated=request.get("ablated", []))
    out = {"attention": {str(layer): captured["attention"][layer].tolist() for layer in layers}, "lens": []}
    k = int(request.get("top", 5))
    for position in request.get("lens_positions", []):
        rows = np.stack([stream[position] for stream in captured["residuals"]])
        logprobs = log_softmax(model.head(rows))
        cells = []
        for layer, row in enumerate(logprobs):
            order = np.argsort(-row, kind="stable")[:k]
            cell = {"layer": layer, "position": position, "top": [[int(i), float(row[i])] for i in order]}
            if position + 1 < len(ids):
                cell["next"] = float(row[ids[position + 1]])
            cells.append(cell)
        out["lens"].append(cells)
    return out


def test_vector(model):
    tokens = model.field("tokenizer.ggml.tokens")
    logits = model.logits(FRANCE_IDS)[-1]
    best = top(logits, 5)
    greedy = model.greedy(FRANCE_IDS, len(FRANCE_GREEDY))
    print("top 5:", ", ".join(f"{tokens[i]} {v:.3f}" for i, v in best))
    print("greedy:", greedy)
    ok = [tokens[i] for i, _ in best] == [t for t, _ in FRANCE_TOP5]
    ok = ok and all(abs(v - e) < 5e-3 for (_, v), (_, e) in zip(best, FRANCE_TOP5))
    ok = ok and greedy == FRANCE_GREEDY
    print("matches the research brief's test vector" if ok else "MISMATCH with the research brief's test vector")
    return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gguf", default=default_model_path())
    parser.add_argument("--test-vector", action="store_true")
    arguments = parser.parse_args()
    if not os.path.exists(arguments.gguf):
        sys.exit(f"{arguments.gguf}: no such file; run scripts/fetch-smollm2")
    model = Model(arguments.gguf)
    if arguments.test_vector:
        sys.exit(test_vector(model))
    json.dump(run(model, json.load(sys.stdin)), sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
