"""PyTorch (CPU) on the kernels `loupe bench kernels` runs, same shapes and thread count, best of
repeats; prints JSON {kernel: {shape: seconds}}. Usage: kernels_peers.py THREADS SECONDS."""
import json
import sys
import time

import torch
import torch.nn.functional as F

threads, budget = int(sys.argv[1]), float(sys.argv[2])
torch.set_num_threads(threads)
torch.manual_seed(0)


def best(fn):
    fn()  # warm up
    times, spent = [], 0.0
    while len(times) < 2 or (spent < budget and len(times) < 50):
        start = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - start
        times.append(elapsed)
        spent += elapsed
    return min(times)


def uniform(*shape):
    return torch.rand(*shape, dtype=torch.float32) * 2 - 1


results = {}


def record(kernel, shape, seconds):
    results.setdefault(kernel, {})["x".join(map(str, shape))] = seconds


with torch.inference_mode():
    for m, n, k in [(2048, 2048, 2048), (1024, 1024, 1024)]:
        a, b, c = uniform(m, k), uniform(k, n), torch.empty(m, n)
        record("matmul", (m, n, k), best(lambda: torch.mm(a, b, out=c)))
    # Dynamic quantisation as PyTorch ships it: int8 weights per channel, activations quantised
    # per call (fbgemm), the peer of loupe's matmul-int8-dynamic.
    m, n, k = 1024, 1024, 1024
    linear = torch.ao.quantization.quantize_dynamic(
        torch.nn.Sequential(torch.nn.Linear(k, n, bias=False)), {torch.nn.Linear}, dtype=torch.qint8)
    a = uniform(m, k)
    record("linear-int8-dynamic", (m, n, k), best(lambda: linear(a)))
    for rows, columns in [(8, 262_144), (4, 33_554_432)]:
        x, y = uniform(rows, columns), torch.empty(rows, columns)
        record("softmax", (rows, columns), best(lambda: torch.softmax(x, dim=-1, out=y)))
    for rows, columns in [(384, 4096), (16384, 4096)]:
        x, g, b = uniform(rows, columns), uniform(columns), uniform(columns)
        record("layernorm", (rows, columns), best(lambda: F.layer_norm(x, (columns,), g, b, 1e-12)))
    for count in [4_194_304, 67_108_864]:
        x = uniform(count)
        record("gelu", (count,), best(lambda: F.gelu(x, approximate="none")))
    # One head per thread, as loupe runs it: batch = threads, one head each.
    t, d = 2048, 64
    q, k_, v = uniform(threads, 1, t, d), uniform(threads, 1, t, d), uniform(threads, 1, t, d)
    record("sdpa", (t, d), best(lambda: F.scaled_dot_product_attention(q, k_, v)))

print(json.dumps({"torch": torch.__version__, "threads": threads, "seconds": results}))
