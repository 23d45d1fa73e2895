#!/usr/bin/env python3
"""Writes sample-data/bench/sentences-256.txt (and passages-128.txt, below): the first 256 sentences of the Cranfield corpus
(documents in file order, split at " . ") that have 20 to 26 words, about 30 WordPiece tokens
each. Real text, fixed once, read by both `loupe bench embed` and scripts/bench/embed.sh."""
import json
import os

root = os.path.join(os.path.dirname(__file__), "..", "..")
sentences = []
with open(os.path.join(root, "sample-data", "cranfield", "corpus.jsonl"), encoding="utf-8") as corpus:
    for line in corpus:
        for sentence in json.loads(line)["text"].split(" . "):
            words = sentence.split()
            if 20 <= len(words) <= 26 and sentence not in sentences:
                sentences.append(" ".join(words) + " .")
        if len(sentences) >= 256:
            break
with open(os.path.join(root, "sample-data", "bench", "sentences-256.txt"), "w", encoding="utf-8") as out:
    out.write("\n".join(sentences[:256]) + "\n")

# sample-data/bench/passages-128.txt: the first 128 Cranfield documents (file order) of 230 words
# or more, one per line. Each is longer than MiniLM's 256 tokens, so both Loupe and
# sentence-transformers truncate every one to 256: the long-passage case of `loupe bench embed`.
passages = []
with open(os.path.join(root, "sample-data", "cranfield", "corpus.jsonl"), encoding="utf-8") as corpus:
    for line in corpus:
        words = json.loads(line)["text"].split()
        if len(words) >= 230:
            passages.append(" ".join(words))
        if len(passages) >= 128:
            break
with open(os.path.join(root, "sample-data", "bench", "passages-128.txt"), "w", encoding="utf-8") as out:
    out.write("\n".join(passages) + "\n")

# sample-data/bench/varied-sentences.txt: the 12 sentences MiniLM's parity fixtures are built from
# (scripts/reference/minilm_reference.py: plain, punctuation, accented, Chinese, Japanese, numbers,
# long words, an e-mail and a URL, emoji and symbols, mixed case, a passage past 256 tokens), one per
# line, for `loupe bench embed --precision int8` to measure int8's cosine to fp32 on varied text.
import ast

reference = open(os.path.join(root, "scripts", "reference", "minilm_reference.py"), encoding="utf-8").read()
assignment = next(node for node in ast.parse(reference).body
                  if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "SENTENCES")
varied = eval(compile(ast.Expression(assignment.value), "SENTENCES", "eval"))  # literals and one " ".join
with open(os.path.join(root, "sample-data", "bench", "varied-sentences.txt"), "w", encoding="utf-8") as out:
    out.write("\n".join(varied) + "\n")
