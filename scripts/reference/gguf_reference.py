#!/usr/bin/env python3
"""Independent reference for Loupe's GGUF reader: PyPI `gguf`'s GGUFReader and
`gguf.quants.dequantize` read a GGUF file and print, as one JSON object on stdout, its version,
alignment, metadata keys, a few metadata values, the tensor count by type, and some tensors' rows
dequantized. Loupe's GGUFReaderTests compare the Swift reader with this output.

  .venv-peers/bin/python scripts/reference/gguf_reference.py MODEL.gguf [TENSOR:ROW ...]

Without TENSOR:ROW arguments it prints rows 0, 1, 2, 1000 and 49151 of token_embd.weight, rows 0
and 575 of blk.0.attn_q.weight and row 0 of output_norm.weight (the SmolLM2-135M-Instruct file).
"""
import collections
import json
import sys

import numpy as np
import gguf

DEFAULT_ROWS = [
    "token_embd.weight:0", "token_embd.weight:1", "token_embd.weight:2", "token_embd.weight:1000",
    "token_embd.weight:49151", "blk.0.attn_q.weight:0", "blk.0.attn_q.weight:575", "output_norm.weight:0",
]


def scalar(field):
    value = field.contents()
    return value if not isinstance(value, list) else None


def main():
    path = sys.argv[1]
    wanted = sys.argv[2:] or DEFAULT_ROWS
    reader = gguf.GGUFReader(path)
    keys = [k for k in reader.fields if not k.startswith("GGUF.")]
    tensors = {t.name: t for t in reader.tensors}
    out = {
        "version": int(reader.fields["GGUF.version"].contents()),
        "alignment": int(reader.alignment),
        "keys": keys,
        "tensor_count": len(reader.tensors),
        "types": dict(collections.Counter(t.tensor_type.name for t in reader.tensors)),
        "data_offset": int(reader.data_offset),
        "scalars": {k: scalar(reader.fields[k]) for k in keys if scalar(reader.fields[k]) is not None},
        "array_lengths": {
            k: len(reader.fields[k].data) for k in keys if reader.fields[k].types[0] == gguf.GGUFValueType.ARRAY
        },
        "first_merge": reader.fields["tokenizer.ggml.merges"].contents(0)
        if "tokenizer.ggml.merges" in reader.fields else None,
        "tensors": [
            {"name": t.name, "type": t.tensor_type.name, "dimensions": [int(d) for d in t.shape],
             "offset": int(t.data_offset), "bytes": int(t.n_bytes)}
            for t in reader.tensors
        ],
        "rows": [],
    }
    for spec in wanted:
        name, row = spec.rsplit(":", 1)
        tensor = tensors[name]
        data = tensor.data
        if data.ndim == 1:
            data = data.reshape(1, -1)
        raw = data[int(row)]
        values = gguf.quants.dequantize(np.asarray(raw), tensor.tensor_type).astype(np.float32).reshape(-1)
        out["rows"].append({"tensor": name, "row": int(row), "values": [float(v) for v in values]})
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
