#!/usr/bin/env python3
"""Expected roofline figures for the ncu --csv exports in this directory (NERSC metric set).

Re-run:  python3 expected.py > expected.json   (stdlib only; reads every *.csv next to this file)

Per launch (one ncu "ID"), following the NERSC roofline-on-nvidia-gpus methodology:
  time_seconds = X__cycles_elapsed.avg / X__cycles_elapsed.avg.per_second   (X = sm, else smsp)
  FP64 = dadd + dmul + 2*dfma, FP32 = fadd + fmul + 2*ffma, FP16 = hadd + hmul + 2*hfma
         (X__sass_thread_inst_executed_op_<op>_pred_on.sum, X = sm, else smsp)
  Tensor = 512 * X__inst_executed_pipe_tensor.sum   (NERSC's factor; see PROVENANCE.md)
  DRAM = dram__bytes.sum (else dram__bytes_read.sum + dram__bytes_write.sum),
  L2 = lts__t_bytes.sum, L1 = l1tex__t_bytes.sum
  AI(level) = (sum of all precisions' FLOPs incl. Tensor) / bytes(level)
A quantity is null when the export lacks every metric it needs (absent, not zero).
Values are converted to base units (bytes, seconds, cycles, cycles/second).
Kernels are also aggregated by name (sums over launches), as Loupe lists them.
"""
import csv
import json
import sys
from pathlib import Path

TENSOR_FLOPS_PER_INST = 512

# unit -> factor to base unit (byte, second, cycle, cycle/second, inst)
UNITS = {
    "": 1, "byte": 1, "cycle": 1, "inst": 1, "cycle/second": 1,
    "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "tbyte": 1e12,
    "kibyte": 1024, "mibyte": 1024**2, "gibyte": 1024**3,
    "nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1,
    "cycle/nsecond": 1e9, "cycle/usecond": 1e6, "cycle/msecond": 1e3,
    "hz": 1, "khz": 1e3, "mhz": 1e6, "ghz": 1e9,
}


def number(text, unit, seen):
    """ncu writes en-US thousands separators ("1,708,634.20"); drop them, scale the unit."""
    text = text.strip()
    if text == "" or text.lower() == "n/a":
        return None
    if "," in text:
        seen["thousands_separators"] = True
    u = unit.strip().lower()
    if u not in UNITS:
        raise ValueError(f"unknown unit {unit!r} for value {text!r}")
    seen["units"].add(unit)
    return float(text.replace(",", "")) * UNITS[u]


READ = {"gpu__time_duration.sum", "dram__bytes.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
        "lts__t_bytes.sum", "l1tex__t_bytes.sum"}
for _x in ("sm", "smsp"):
    READ |= {f"{_x}__cycles_elapsed.avg", f"{_x}__cycles_elapsed.avg.per_second", f"{_x}__inst_executed_pipe_tensor.sum"}
    READ |= {f"{_x}__sass_thread_inst_executed_op_{p}{op}_pred_on.sum" for p in "dfh" for op in ("add", "mul", "fma")}


def wanted(metric):
    """Only the metrics the figures use (others may be text, or in units this script does not know)."""
    return metric in READ


def read_launches(path):
    """Returns (layout, preamble_lines, launches); launch = dict(id, kernel, metrics{name: base value})."""
    lines = path.read_text(encoding="utf-8").splitlines()
    hdr = next(i for i, l in enumerate(lines) if l.startswith('"ID"') or l.startswith("ID,"))
    rows = [r for r in csv.reader(l for l in lines[hdr:] if l.strip() and not l.startswith("=="))]
    header, body = rows[0], rows[1:]
    seen = {"thousands_separators": False, "units": set(), "ragged_rows": 0, "rule_rows": 0}
    launches = {}
    if "Metric Name" in header:
        layout = "details"
        c = {n: header.index(n) for n in ("ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value")}
        for r in body:
            if len(r) != len(header):
                seen["ragged_rows"] += 1
            if len(r) <= max(c.values()) or not r[c["Metric Name"]]:
                seen["rule_rows"] += 1  # rule/advice rows: no metric
                continue
            lid = r[c["ID"]]
            launch = launches.setdefault(lid, {"id": lid, "kernel": r[c["Kernel Name"]], "metrics": {}})
            name = r[c["Metric Name"]]
            if wanted(name):
                launch["metrics"][name] = number(r[c["Metric Value"]], r[c["Metric Unit"]], seen)
    else:
        layout = "raw"
        units, data = body[0], body[1:]
        for r in data:
            lid = r[header.index("ID")]
            launch = launches.setdefault(lid, {"id": lid, "kernel": r[header.index("Kernel Name")], "metrics": {}})
            for i, name in enumerate(header):
                if wanted(name) and i < len(r):
                    launch["metrics"][name] = number(r[i], units[i], seen)
    return layout, hdr, list(launches.values()), seen


def first(m, *names):
    for n in names:
        if m.get(n) is not None:
            return n, m[n]
    return None, None


def figures(m):
    out = {"time_source": None, "time_seconds": None}
    if m.get("gpu__time_duration.sum") is not None:
        out["time_source"], out["time_seconds"] = "gpu__time_duration.sum", m["gpu__time_duration.sum"]
    else:
        for x in ("sm", "smsp"):
            cyc, rate = m.get(f"{x}__cycles_elapsed.avg"), m.get(f"{x}__cycles_elapsed.avg.per_second")
            if cyc is not None and rate:
                out["time_source"] = f"{x}__cycles_elapsed.avg / {x}__cycles_elapsed.avg.per_second"
                out["time_seconds"] = cyc / rate
                out["cycles"], out["cycles_per_second"] = cyc, rate
                break
    flops = {}
    for prec, p in (("FP64", "d"), ("FP32", "f"), ("FP16", "h")):
        vals = {}
        for op in ("add", "mul", "fma"):
            _, v = first(m, f"sm__sass_thread_inst_executed_op_{p}{op}_pred_on.sum",
                         f"smsp__sass_thread_inst_executed_op_{p}{op}_pred_on.sum")
            vals[op] = v
        flops[prec] = None if all(v is None for v in vals.values()) else \
            sum(vals[op] or 0.0 for op in ("add", "mul")) + 2 * (vals["fma"] or 0.0)
    _, tinst = first(m, "sm__inst_executed_pipe_tensor.sum", "smsp__inst_executed_pipe_tensor.sum")
    flops["Tensor"] = None if tinst is None else TENSOR_FLOPS_PER_INST * tinst
    out["tensor_inst"] = tinst
    out["flops_by_precision"] = flops
    dram = m.get("dram__bytes.sum")
    if dram is None and m.get("dram__bytes_read.sum") is not None:
        dram = m["dram__bytes_read.sum"] + (m.get("dram__bytes_write.sum") or 0)
    out["bytes_by_level"] = {"DRAM": dram, "L2": m.get("lts__t_bytes.sum"), "L1": m.get("l1tex__t_bytes.sum")}
    total = sum(v for v in flops.values() if v is not None) if any(v is not None for v in flops.values()) else None
    out["flops_total"] = total
    out["arithmetic_intensity"] = {lvl: (None if total is None or not b else total / b)
                                   for lvl, b in out["bytes_by_level"].items()}
    out["flops_per_second"] = None if total is None or not out["time_seconds"] else total / out["time_seconds"]
    return out


def add(a, b):
    return b if a is None else (a if b is None else a + b)


def main():
    here = Path(__file__).resolve().parent
    result = []
    for path in sorted(here.glob("*.csv")):
        layout, preamble, launches, seen = read_launches(path)
        per_launch, kernels = [], {}
        for l in launches:
            f = figures(l["metrics"])
            per_launch.append({"id": l["id"], "kernel_name": l["kernel"], **f})
            k = kernels.setdefault(l["kernel"], {"kernel_name": l["kernel"], "launch_ids": [], "time_seconds": None,
                                                 "flops_by_precision": {}, "bytes_by_level": {}})
            k["launch_ids"].append(l["id"])
            k["time_seconds"] = add(k["time_seconds"], f["time_seconds"])
            for p, v in f["flops_by_precision"].items():
                k["flops_by_precision"][p] = add(k["flops_by_precision"].get(p), v)
            for lvl, v in f["bytes_by_level"].items():
                k["bytes_by_level"][lvl] = add(k["bytes_by_level"].get(lvl), v)
        for k in kernels.values():
            fl = [v for v in k["flops_by_precision"].values() if v is not None]
            total = sum(fl) if fl else None
            k["arithmetic_intensity"] = {lvl: (None if total is None or not b else total / b)
                                         for lvl, b in k["bytes_by_level"].items()}
        result.append({
            "file": path.name, "layout": layout, "preamble_lines_before_header": preamble,
            "units_seen": sorted(seen["units"]), "thousands_separators": seen["thousands_separators"],
            "rows_not_matching_header_width": seen["ragged_rows"], "rows_without_metric_skipped": seen["rule_rows"],
            "tensor_flops_per_inst": TENSOR_FLOPS_PER_INST,
            "launches": per_launch, "kernels_aggregated_by_name": list(kernels.values()),
        })
    json.dump(result, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
