#!/usr/bin/env python3
"""Independent reference for SmolLM2's tokenizer: Hugging Face `tokenizers` built from the
vocabulary, merges and token types that PyPI `gguf` reads out of the model's GGUF file.

The pipeline is the one llama.cpp runs for `tokenizer.ggml.pre = smollm` (research brief
local-llm.md section 3; it equals `llama_tokenize(parse_special = true)`):
  - the CONTROL tokens (token type 3) are added as special tokens, matched whole first;
  - pre-tokenizer: Digits(individual_digits) then ByteLevel(add_prefix_space = False), whose
    regex is GPT-2's;
  - model: byte-level BPE from the vocabulary and the merges (rank = index in the list);
  - decoder: ByteLevel.
With --pre gpt2 the Digits step is left out (llama.cpp's plain `gpt2` pre-tokenizer).

Usage (with the venv scripts/python-peers makes):
  .venv-peers/bin/python scripts/reference/smollm2_tokenizer.py [--gguf FILE] [--pre P] [--jsonl]
      reads one text per stdin line and prints its ids as a JSON list, one line per text.
      With --jsonl each input line is a JSON string (so texts may hold newlines and \\r).
      With --plain-special, special tokens spelled in the text are plain text (parse_special = false).
  ... smollm2_tokenizer.py --gguf FILE --dump-vocabulary
      prints {"tokens", "merges", "types", "pre", "eos", "chat_template"} as one JSON object,
      for tests that build the Swift tokenizer from arrays.
FILE defaults to $LOUPE_MODELS (or ~/.cache/loupe/models)/SmolLM2-135M-Instruct/
SmolLM2-135M-Instruct.Q4_1.gguf; scripts/fetch-smollm2 fetches it.
"""
import argparse
import json
import os
import sys

import gguf
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

CONTROL = 3  # llama.cpp's LLAMA_TOKEN_TYPE_CONTROL


def default_model_path():
    root = os.environ.get("LOUPE_MODELS") or os.path.expanduser("~/.cache/loupe/models")
    return os.path.join(root, "SmolLM2-135M-Instruct", "SmolLM2-135M-Instruct.Q4_1.gguf")


def field_value(reader, key):
    """A metadata value: a str, an int, or a list of str/int, as the GGUF stores it."""
    field = reader.fields.get(key)
    if field is None:
        sys.exit(f"{reader.path}: {key}: missing")
    value = field.contents()
    return value


def read_vocabulary(path):
    reader = gguf.GGUFReader(path)
    tokens = field_value(reader, "tokenizer.ggml.tokens")
    merges = field_value(reader, "tokenizer.ggml.merges")
    types = [int(t) for t in field_value(reader, "tokenizer.ggml.token_type")]
    pre = field_value(reader, "tokenizer.ggml.pre")
    eos = int(field_value(reader, "tokenizer.ggml.eos_token_id"))
    template = field_value(reader, "tokenizer.chat_template")
    if len(types) != len(tokens):
        sys.exit(f"{path}: {len(tokens)} tokens but {len(types)} token types")
    return tokens, merges, types, pre, eos, template


def build_tokenizer(tokens, merges, types, pre):
    vocab = {token: index for index, token in enumerate(tokens)}
    pairs = [tuple(merge.split(" ", 1)) for merge in merges]
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=pairs))
    steps = [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)]
    if pre == "smollm":
        steps.insert(0, pre_tokenizers.Digits(individual_digits=True))
    elif pre != "gpt2":
        sys.exit(f"unknown pre-tokenizer '{pre}': this reference knows smollm and gpt2")
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(steps)
    tokenizer.decoder = decoders.ByteLevel()
    specials = [AddedToken(tokens[i], special=True, normalized=False) for i, t in enumerate(types) if t == CONTROL]
    tokenizer.add_special_tokens(specials)
    return tokenizer


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gguf", default=default_model_path())
    parser.add_argument("--pre", help="override tokenizer.ggml.pre (smollm or gpt2)")
    parser.add_argument("--jsonl", action="store_true", help="each stdin line is a JSON string")
    parser.add_argument("--plain-special", action="store_true", help="do not match special tokens in the text")
    parser.add_argument("--dump-vocabulary", action="store_true")
    args = parser.parse_args()
    if not os.path.exists(args.gguf):
        sys.exit(f"{args.gguf}: not found: run scripts/fetch-smollm2")
    tokens, merges, types, pre, eos, template = read_vocabulary(args.gguf)
    if args.dump_vocabulary:
        vocabulary = {"tokens": tokens, "merges": merges, "types": types, "pre": pre, "eos": eos}
        vocabulary["chat_template"] = template
        json.dump(vocabulary, sys.stdout)
        print()
        return
    tokenizer = build_tokenizer(tokens, merges, types, args.pre or pre)
    tokenizer.encode_special_tokens = args.plain_special
    out = sys.stdout
    for line in sys.stdin.buffer:
        raw = line.decode("utf-8")
        text = json.loads(raw) if args.jsonl else raw.rstrip("\n")
        ids = tokenizer.encode(text, add_special_tokens=False).ids
        out.write(json.dumps(ids) + "\n")
    out.flush()


if __name__ == "__main__":
    main()
