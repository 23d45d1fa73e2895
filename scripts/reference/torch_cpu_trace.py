#!/usr/bin/env python3
"""Generates a real PyTorch profiler (Kineto) Chrome trace of a few CPU training steps of a tiny MLP,
for Loupe's trace-import tests. Writes Tests/LoupeProfilingTests/Fixtures/kineto/cpu-mlp-step.json.gz.

  OMP_NUM_THREADS=1 .venv-bench/bin/python scripts/reference/torch_cpu_trace.py [OUT.json.gz]

.venv-bench is the project's benchmark venv (any venv with torch works). The committed fixture was
made with torch 2.15.0+cu132 on CPU, Python 3.11. Seeds and thread counts are fixed so the event
structure (ops, shapes, FLOPs, step count) is reproducible; timestamps and durations are not.

Profiler setup: CPU activity only, record_shapes=True, with_flops=True, profile_memory=True,
schedule(wait=1, warmup=1, active=3, repeat=1), so the trace holds ProfilerStep#2..#4 (three active
steps; HTA-style analyses drop the last one). Each step: forward, MSE loss, backward, SGD step,
inside record_function("## forward ##") / ("## backward ##") / ("## optimizer ##") annotations.
"""
import gzip
import os
import sys
import tempfile

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile, record_function, schedule

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEFAULT_OUT = os.path.join(ROOT, "Tests", "LoupeProfilingTests", "Fixtures", "kineto", "cpu-mlp-step.json.gz")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_OUT
    torch.manual_seed(20261125)
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    torch.use_deterministic_algorithms(True)

    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.GELU(), nn.Linear(128, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.MSELoss()
    g = torch.Generator().manual_seed(7)
    batches = [(torch.randn(32, 64, generator=g), torch.randn(32, 10, generator=g)) for _ in range(5)]

    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "cpu-mlp-step.json")

        def on_ready(prof):
            prof.export_chrome_trace(raw)

        with profile(
            activities=[ProfilerActivity.CPU],
            schedule=schedule(wait=1, warmup=1, active=3, repeat=1),
            on_trace_ready=on_ready,
            record_shapes=True,
            with_flops=True,
            profile_memory=True,
        ) as prof:
            for x, y in batches:
                with record_function("## forward ##"):
                    pred = model(x)
                    loss = loss_fn(pred, y)
                with record_function("## backward ##"):
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                with record_function("## optimizer ##"):
                    opt.step()
                prof.step()

        with open(raw, "rb") as f:
            data = f.read()
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "wb") as f:
        # mtime=0 and no file name in the gzip header, so reruns differ only by trace content.
        with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0, compresslevel=9) as gz:
            gz.write(data)
    print(f"torch {torch.__version__}: wrote {out} ({os.path.getsize(out)} bytes gz, {len(data)} bytes json), final loss {loss.item():.6f}")


if __name__ == "__main__":
    main()
