#!/usr/bin/env python3
"""Loupe's q8 logits against llama.cpp's on the same GGUF and the same token ids (see
scripts/bench/llama-parity.sh, which builds llama-cpp-python and runs this in .venv-bench).

Per text: Loupe tokenizes it (`loupe logits --json`, special tokens read) and writes every
position's logits (`--logits-out`); llama.cpp evaluates the same ids with logits at every position
(llama-cpp-python, logits_all). Per position: KL(llama.cpp || Loupe) over the whole vocabulary, in
float64 from each side's log-softmax; top-1 agreement where llama.cpp's top two logits are at
least 0.5 apart (a closer call is a coin either engine may flip). Gates: mean KL <= 1e-2 and
agreement >= 97% (issue 58). Exit status 1 if either fails.
"""
import argparse, json, os, subprocess, sys, tempfile

import numpy as np
from llama_cpp import Llama

# Eight texts of at least 64 tokens each, of the kinds the tokenizer corpus covers: a chat in the
# model's template, code, numbers and dates, prose, other languages, JSON, arithmetic, markdown.
TEXTS = [
    "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
    "<|im_start|>user\nExplain in two sentences why the sky is blue and sunsets are red.<|im_end|>\n"
    "<|im_start|>assistant\nSunlight scatters off air molecules, and the shorter blue wavelengths scatter far "
    "more than red ones, so blue light reaches our eyes from every direction of the sky. At sunset the light "
    "crosses much more air, and most of the blue is scattered away before it arrives.",
    "def fibonacci(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n\n"
    "print([fibonacci(i) for i in range(20)])  # 0 1 1 2 3 5 8 13 21 34\n\n"
    "class Stack:\n    def __init__(self):\n        self.items = []\n\n    def push(self, x):\n"
    "        self.items.append(x)\n",
    "In 2024, the 3 largest cities were Tokyo (37,194,000), Delhi (32,941,000) and Shanghai (29,210,000); "
    "their total is 99,345,000 people, about 1.23% of 8,100,000,000. Prices rose 4.5% to $12.99. "
    "Call 555-0123 before 10:30 on 2025-03-14 or write to 221B Baker Street.",
    "The lighthouse keeper climbed the spiral stairs every evening at dusk, counting one hundred and twelve "
    "steps, and lit the great lamp whose beam swept across the dark water. Ships that had lost their way "
    "in the fog would see it and turn towards the harbour, where the old stone pier waited for them. In "
    "winter the storms came in from the west, and he kept the brass polished and the wick trimmed all night.",
    "La capitale de la France est Paris, une ville connue pour la tour Eiffel et le musée du Louvre. "
    "Berlin ist die Hauptstadt von Deutschland und hat ungefähr 3,7 Millionen Einwohner. "
    "Madrid es la capital de España; Roma è la capitale d'Italia.",
    '{"id": 42, "name": "Ada Lovelace", "born": "1815-12-10", "languages": ["English", "French"], '
    '"notes": {"analytical_engine": true, "first_program": "Bernoulli numbers"}, "tags": [], '
    '"score": 9.75, "url": "https://en.wikipedia.org/wiki/Ada_Lovelace"}',
    "Question: A train leaves at 9:15 and travels 240 km at 80 km/h. When does it arrive?\n"
    "Answer: The trip takes 240 / 80 = 3 hours, so it arrives at 9:15 + 3:00 = 12:15.\n"
    "Question: What is 17 * 23?\nAnswer: 17 * 23 = 17 * 20 + 17 * 3 = 340 + 51 = 391.\n",
    "# Release notes\n\n## 2.1.0\n\n- **Faster search**: queries now use the HNSW index (about 3x faster).\n"
    "- Fixed a crash when the config file was empty ([#1234](https://github.com/example/repo/issues/1234)).\n"
    "- `--verbose` prints timings.\n\n## 2.0.0\n\n- Dropped Python 3.8.\n",
]


def log_softmax(x):
    x = x.astype(np.float64)
    top = x.max(axis=-1, keepdims=True)
    return x - top - np.log(np.exp(x - top).sum(axis=-1, keepdims=True))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--loupe", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    llm = Llama(model_path=args.model, n_ctx=1024, n_batch=1024, logits_all=True, n_threads=args.threads,
                verbose=False)
    scratch = tempfile.mkdtemp()
    workspace = os.path.join(scratch, "w.sqlite")
    rows, klsAll, agreeAll, eligibleAll = [], [], 0, 0
    for index, text in enumerate(TEXTS):
        path = os.path.join(scratch, f"logits-{index}.f32")
        out = subprocess.run(
            [args.loupe, "--workspace", workspace, "logits", text, "--precision", "q8", "--top", "1", "--json",
             "--logits-out", path], check=True, capture_output=True, text=True).stdout
        ids = json.loads(out)["ids"]
        loupe = np.fromfile(path, dtype="<f4").reshape(len(ids), -1)
        llm.reset()
        llm.eval(ids)
        llama = np.array(llm.scores[: len(ids)], dtype=np.float32)
        assert llama.shape == loupe.shape, (llama.shape, loupe.shape)
        p_log, q_log = log_softmax(llama), log_softmax(loupe)
        kl = (np.exp(p_log) * (p_log - q_log)).sum(axis=-1)
        ordered = np.sort(llama, axis=-1)
        eligible = (ordered[:, -1] - ordered[:, -2]) >= 0.5
        agree = llama.argmax(axis=-1) == loupe.argmax(axis=-1)
        rows.append({"text": index, "tokens": len(ids), "mean_kl": float(kl.mean()), "max_kl": float(kl.max()),
                     "eligible": int(eligible.sum()), "agree": int((agree & eligible).sum()),
                     "agree_all": float(agree.mean())})
        klsAll.append(kl)
        agreeAll += int((agree & eligible).sum())
        eligibleAll += int(eligible.sum())
        print(f"text {index}: {len(ids):3d} tokens  mean KL {kl.mean():.2e}  max {kl.max():.2e}  "
              f"top-1 {int((agree & eligible).sum())}/{int(eligible.sum())} where llama.cpp's margin >= 0.5 "
              f"({agree.mean():.1%} of all positions)")
    kls = np.concatenate(klsAll)
    agreement = agreeAll / max(1, eligibleAll)
    passed = kls.mean() <= 1e-2 and agreement >= 0.97
    print(f"all {len(kls)} positions: mean KL {kls.mean():.2e} (gate 1e-2), 99th percentile {np.percentile(kls, 99):.2e}, "
          f"max {kls.max():.2e}; top-1 agreement {agreement:.1%} of {eligibleAll} (gate 97%): "
          + ("pass" if passed else "FAIL"))
    print(json.dumps({"bench": "llama-parity", "positions": int(len(kls)), "mean_kl": float(kls.mean()),
                      "p99_kl": float(np.percentile(kls, 99)), "max_kl": float(kls.max()),
                      "top1_agreement": agreement, "eligible": eligibleAll, "passed": bool(passed),
                      "texts": rows}))
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
