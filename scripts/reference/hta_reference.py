#!/usr/bin/env python3
"""Reference figures from Holistic Trace Analysis (HTA) on the real Kineto traces under
Tests/LoupeProfilingTests/Fixtures/kineto/. Writes
Tests/LoupeProfilingTests/Fixtures/kineto/hta-reference.json, which Swift tests compare Loupe's own
trace analyses against. How HTA computes each figure is written down in HTA-DEFINITIONS.md next to it.

  python3 -m venv .venv-hta && .venv-hta/bin/pip install HolisticTraceAnalysis==0.5.0
  OMP_NUM_THREADS=1 .venv-hta/bin/python scripts/reference/hta_reference.py [OUT.json]

Made with HolisticTraceAnalysis 0.5.0 (the newest on the package index at the time; upstream's
git HEAD is 0.6.1), pandas 3.1.1, numpy 2.4.6, Python 3.11. Each fixture set is one directory of
trace files (one file per rank; HTA reads the rank from "distributedInfo": {"rank": N}, rank 0 when
absent). HTA's own defaults are used throughout (last ProfilerStep dropped, ns timestamps rounded to
whole microseconds, num_kernels=10, duration_ratio=0.8, consecutive_kernel_delay=30), except that
the traces are parsed in this one process (no multiprocessing pool) and plots are off.

Keys under "extra_not_hta" are computed by this script from HTA's parsed and filtered dataframe, not
by an HTA API; they are there so Loupe can check its parsing/filtering (counts, plain per-kernel
stats) separately from HTA's aggregation quirks.
"""
import json
import math
import os
import sys
from importlib import metadata

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import pandas as pd

from hta.analyzers.breakdown_analysis import BreakdownAnalysis
from hta.common.trace import Trace
from hta.trace_analysis import TraceAnalysis
from hta.utils.utils import get_kernel_type, KernelType

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FIXTURES = os.path.join(ROOT, "Tests", "LoupeProfilingTests", "Fixtures", "kineto")

# (set name = directory under FIXTURES, short description)
SETS = [
    ("distributed-2rank", "2 ranks (0 and 1 of a 128-rank NCCL job), A100-class, sampled; NCCL SendRecv on its own stream"),
    ("nccl-allreduce-a100", "rank 0 of 2, A100, ns-resolution float timestamps, NCCL AllReduce kernels with collective args"),
    ("ns-resolution-v100", "rank 0 of 1, V100, displayTimeUnit ns, float timestamps, 5 ProfilerSteps"),
    ("amd-mi250", "single ROCm 6.2 MI250 trace (no distributedInfo -> rank 0), tiny"),
    ("alexnet-a100", "rank 0, A100, AlexNet benchmark, no ProfilerStep (no iteration filtering), cuda_sync events"),
]

TOP_KERNELS = 15


def clean(x):
    """Make a value JSON-safe: numpy scalars -> Python, NaN/inf -> None."""
    if isinstance(x, dict):
        return {str(k): clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [clean(v) for v in x]
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating, float)):
        f = float(x)
        return None if (math.isnan(f) or math.isinf(f)) else f
    if isinstance(x, np.bool_):
        return bool(x)
    if x is pd.NA or x is pd.NaT:
        return None
    return x


def records(df):
    if df is None:
        return None
    return clean(df.to_dict("records"))


def load(set_dir):
    t = Trace(trace_dir=set_dir)
    # Same as TraceAnalysis(trace_dir=...) but parsed in-process (one CPU) instead of a fork pool.
    t.load_traces(include_last_profiler_step=False, use_multiprocessing=False)
    ta = TraceAnalysis.__new__(TraceAnalysis)
    ta.t = t
    return ta


def gpu_df(t, rank):
    """HTA's view of a rank's GPU events, as used by the breakdown analyses (stream != -1)."""
    sym = t.symbol_table.get_sym_table()
    df = t.get_trace(rank)
    g = df[df["stream"].ne(-1)].copy()
    g["s_name"] = g["name"].apply(lambda i: sym[i])
    g["s_cat"] = g["cat"].apply(lambda i: sym[i])
    g["kernel_type"] = g["s_name"].apply(get_kernel_type)
    return g


def describe(series):
    s = series.astype(float)
    if len(s) == 0:
        return {"count": 0}
    d = s.describe(percentiles=[0.25, 0.5, 0.75, 0.9, 0.99])
    return clean({k: d[k] for k in d.index})


def analyze_set(name, desc):
    set_dir = os.path.join(FIXTURES, name)
    ta = load(set_dir)
    t = ta.t
    ranks = t.get_ranks()
    sym = t.symbol_table.get_sym_table()
    out = {
        "description": desc,
        "files": {str(r): os.path.relpath(t.trace_files[r], FIXTURES) for r in ranks},
        "ranks": ranks,
    }

    # ---- temporal breakdown (per rank)
    out["temporal_breakdown"] = records(ta.get_temporal_breakdown(visualize=False))

    # ---- kernel breakdown (kernel type table is summed over all ranks by HTA)
    kt, kd = ta.get_gpu_kernel_breakdown(visualize=False)
    kt_per_rank = []
    types = [KernelType.COMPUTATION.name, KernelType.COMMUNICATION.name, KernelType.MEMORY.name]
    for r in ranks:
        g = gpu_df(t, r)
        per = BreakdownAnalysis._get_gpu_kernel_type_time(g, types)
        total = per["sum"].sum()
        per["percentage"] = (per["sum"] / total * 100).round(1) if total else np.nan
        per = per.sort_values(by="sum", ascending=False, ignore_index=True)
        kt_per_rank.append({"rank": r, "kernel_types": records(per)})
    out["kernel_breakdown"] = {
        "parameters": {"duration_ratio": 0.8, "num_kernels": 10, "include_memory_kernels": True},
        "kernel_type_all_ranks": records(kt),
        "kernel_type_per_rank": kt_per_rank,
        "kernels": records(kd),
    }

    # ---- idle time breakdown (per rank, per stream)
    idle, idle_stats = ta.get_idle_time_breakdown(
        ranks=ranks, visualize=False, show_idle_interval_stats=True
    )
    if idle_stats is not None:
        idle_stats = idle_stats.reset_index().rename(columns={"index": "idle_category"})
    out["idle_time_breakdown"] = {
        "parameters": {"consecutive_kernel_delay": 30},
        "by_stream": records(idle),
        "interval_stats": records(idle_stats),
    }

    # ---- communication / computation overlap (per rank)
    out["comm_comp_overlap"] = records(ta.get_comm_comp_overlap(visualize=False))

    # ---- kernel launch stats (per rank): summaries of HTA's per-correlation table
    launch = ta.get_cuda_kernel_launch_stats(ranks=ranks, visualize=False)
    out["cuda_kernel_launch_stats"] = {
        "parameters": {"runtime_cutoff": 50, "launch_delay_cutoff": 100, "include_memory_events": True},
        "per_rank": [
            {
                "rank": r,
                "pairs": int(len(df)),
                "cpu_duration": describe(df["cpu_duration"]),
                "gpu_duration": describe(df["gpu_duration"]),
                "launch_delay": describe(df["launch_delay"]),
                "short_gpu_kernels": int(((df["cpu_duration"] <= 50) & (df["gpu_duration"] < df["cpu_duration"])).sum()),
                "runtime_outliers": int((df["cpu_duration"] > 50).sum()),
                "launch_delay_outliers": int((df["launch_delay"] > 100).sum()),
            }
            for r, df in launch.items()
        ],
    }

    # ---- queue length summary (per rank, per stream)
    try:
        q = ta.get_queue_length_summary(ranks=ranks)
        if q is not None:
            q.columns = [c[1] if isinstance(c, tuple) else c for c in q.columns]
            q = q.reset_index()
        out["queue_length_summary"] = records(q)
    except Exception as e:  # HTA asserts on some traces
        out["queue_length_summary"] = {"error": f"{type(e).__name__}: {e}"}

    # ---- extras computed here from HTA's filtered dataframe
    extra = []
    for r in ranks:
        df = t.get_trace(r)
        g = gpu_df(t, r)
        per_name = (
            g[g["kernel_type"].isin(types)]
            .groupby(["kernel_type", "s_name"])["dur"]
            .agg(["count", "sum", "mean", "max", "min", "std"])
            .reset_index()
            .rename(columns={"s_name": "name"})
        )
        top = []
        for kt_name in types:
            sub = per_name[per_name["kernel_type"].eq(kt_name)].sort_values(by=["sum", "name"], ascending=[False, True])
            top.extend(records(sub.head(TOP_KERNELS)))
        steps = sorted(s for s in sym if s.startswith("ProfilerStep"))
        extra.append(
            {
                "rank": r,
                "events_after_filter": int(len(df)),
                "gpu_events_by_cat": clean(g.groupby("s_cat").size().to_dict()),
                "gpu_events_by_kernel_type": clean(g.groupby("kernel_type").size().to_dict()),
                "gpu_dur_sum_by_kernel_type": clean(g.groupby("kernel_type")["dur"].sum().to_dict()),
                "streams": clean(sorted(g["stream"].unique().tolist())),
                "first_gpu_ts_aligned": clean(g["ts"].min()) if len(g) else None,
                "last_gpu_end_aligned": clean((g["ts"] + g["dur"]).max()) if len(g) else None,
                "profiler_step_names": steps,
                "iteration_filter_applied": len(steps) > 1,
                "top_kernels_by_type": top,
            }
        )
    out["extra_not_hta"] = {
        "min_ts_subtracted": clean(t.min_ts),
        "per_rank": extra,
    }
    return out


def main():
    result = {
        "generator": "scripts/reference/hta_reference.py",
        "hta_version": metadata.version("HolisticTraceAnalysis"),
        "pandas": pd.__version__,
        "numpy": np.__version__,
        "python": sys.version.split()[0],
        "time_unit": "microseconds (trace ts/dur units) unless a key says pctg/percentage/ratio",
        "sets": {},
    }
    for name, desc in SETS:
        result["sets"][name] = analyze_set(name, desc)
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(FIXTURES, "hta-reference.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=1, sort_keys=False)
        f.write("\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
