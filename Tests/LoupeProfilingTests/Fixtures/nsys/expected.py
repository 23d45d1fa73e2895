#!/usr/bin/env python3
"""Figures NsysReaderTests checks the Swift reader against, computed from each fixture with
plain SQL (stdlib sqlite3 only), independently of the reader. Writes expected.json beside it.

Definitions (what each figure means):
- kernels, memcpy, memset, sync: the rows of CUPTI_ACTIVITY_KIND_{KERNEL,MEMCPY,MEMSET,
  SYNCHRONIZATION}: count, and total ns (sum of end - start).
- top_kernels: per kernel name (StringIds[demangledName]), count and total ns, the 5 longest
  in total (ties by name).
- runtime: CUPTI_ACTIVITY_KIND_RUNTIME rows of event class 0 (runtime) or 1 (driver);
  backtrace_rows: the class-67 rows that repeat a call.
- nvtx_ranges: NVTX_EVENTS rows of a range type (59, 60, 70, 71) with an end;
  nvtx_other: the other NVTX rows.
- pairs: GPU activity rows that share (correlationId, pid) with a class 0/1 runtime row, the
  pid from globalPid on the GPU side and globalTid on the runtime side ((id >> 24) & 0xFFFFFF),
  per table; naive_pairs: the same join ignoring the pid (more where processes reuse ids).
- launch_pairs: the pairs whose runtime call, without CUPTI's _vNNNN suffix, is one of
  LAUNCH_NAMES (a copy of ProfileAnalysis.launchNames): what ProfileAnalysis.launches counts.
- copy_names, memset_names, sync_names: how many copies, memsets and syncs have each name
  Kineto gives them ("Memcpy HtoD (Pageable -> Device)", "Memset (Device)", "Stream Sync"), the
  kinds from the export's ENUM tables where it has them, CUPTI's values where not.
- busy_ns / span_ns: the union of all GPU activity intervals (kernels, copies, memsets, syncs)
  and the time from the first one's start to the last one's end.
- events: kernels + copies + memsets + syncs + runtime + NVTX ranges; start/end: their first
  start and last end.

Usage: python3 expected.py
"""

import json
import os
import re
import sqlite3

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = [
    "fuser-64ee035-report1.sqlite",
    "fuser-ee4fcf3-report1.sqlite",
    "mordred-03527a5-report1.sqlite",
    "pipit-saxpy-mpi-cuda.sqlite",
]
GPU_TABLES = {
    "kernel": "CUPTI_ACTIVITY_KIND_KERNEL",
    "memcpy": "CUPTI_ACTIVITY_KIND_MEMCPY",
    "memset": "CUPTI_ACTIVITY_KIND_MEMSET",
    "sync": "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
}
LAUNCH_NAMES = {
    "cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx", "cudaMemcpyAsync", "cudaMemsetAsync",
    "runFunction - job_prep_and_submit_for_execution", "hipLaunchKernel", "hipExtModuleLaunchKernel",
    "hipMemcpyAsync", "hipMemsetAsync", "hipMemcpyWithStream",
}
RANGE_TYPES = (59, 60, 70, 71)
COPY_KINDS = {0: "Unknown", 1: "HtoD", 2: "DtoH", 3: "HtoA", 4: "AtoH", 5: "AtoA", 6: "AtoD", 7: "DtoA", 8: "DtoD",
              9: "HtoH", 10: "PtoP", 11: "UVM HtoD", 12: "UVM DtoH", 13: "UVM DtoD"}
MEMORY_KINDS = {0: "Pageable", 1: "Pinned", 2: "Device", 3: "Array", 4: "Managed", 5: "Device Static",
                6: "Managed Static", 7: "Unknown"}
SYNC_KINDS = {1: "Event Sync", 2: "Stream Wait Event", 3: "Stream Sync", 4: "Context Sync"}
PID = "((({0}) >> 24) & 16777215)"


def tables(db):
    return {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def union_length(intervals):
    total, current = 0, None
    for start, end in sorted(intervals):
        if current and start <= current[1]:
            current[1] = max(current[1], end)
        else:
            if current:
                total += current[1] - current[0]
            current = [start, end]
    if current:
        total += current[1] - current[0]
    return total


def figures(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    db.text_factory = lambda raw: raw.decode("utf-8", "replace")
    have = tables(db)
    out = {}
    intervals = []
    starts, ends = [], []
    for kind, table in GPU_TABLES.items():
        rows = db.execute(f"SELECT start, end FROM {table}").fetchall() if table in have else []
        out[kind] = {"count": len(rows), "total_ns": sum(end - start for start, end in rows)}
        intervals += rows
        starts += [start for start, _ in rows]
        ends += [end for _, end in rows]
    out["busy_ns"] = union_length(intervals)
    out["span_ns"] = (max(ends) - min(starts)) if intervals else 0

    kernel = GPU_TABLES["kernel"]
    if kernel in have:
        rows = db.execute(
            f"""SELECT s.value, COUNT(*), SUM(k.end - k.start) FROM {kernel} k
                JOIN StringIds s ON s.id = k.demangledName GROUP BY s.value"""
        ).fetchall()
        rows.sort(key=lambda row: (-row[2], row[0]))
        out["top_kernels"] = [{"name": n, "count": c, "total_ns": t} for n, c, t in rows[:5]]
        first = db.execute(
            f"""SELECT s.value, k.start, k.end - k.start, k.deviceId, k.streamId, k.correlationId,
                       k.gridX, k.gridY, k.gridZ, k.blockX, k.blockY, k.blockZ, k.registersPerThread,
                       k.staticSharedMemory + k.dynamicSharedMemory
                FROM {kernel} k JOIN StringIds s ON s.id = k.demangledName ORDER BY k.start, k.rowid LIMIT 1"""
        ).fetchone()
        keys = ["name", "start", "duration", "device", "stream", "correlation", "grid_x", "grid_y", "grid_z",
                "block_x", "block_y", "block_z", "registers", "shared_memory"]
        out["first_kernel"] = dict(zip(keys, first))
    else:
        out["top_kernels"] = []

    runtime = "CUPTI_ACTIVITY_KIND_RUNTIME"
    if runtime in have:
        out["runtime"] = db.execute(f"SELECT COUNT(*) FROM {runtime} WHERE eventClass IN (0, 1)").fetchone()[0]
        out["backtrace_rows"] = db.execute(f"SELECT COUNT(*) FROM {runtime} WHERE eventClass = 67").fetchone()[0]
        rows = db.execute(f"SELECT start, end FROM {runtime} WHERE eventClass IN (0, 1)").fetchall()
        starts += [start for start, _ in rows]
        ends += [end for _, end in rows]
    else:
        out["runtime"] = out["backtrace_rows"] = 0

    nvtx = "NVTX_EVENTS"
    if nvtx in have:
        ranges = f"eventType IN {RANGE_TYPES} AND end IS NOT NULL"
        out["nvtx_ranges"] = db.execute(f"SELECT COUNT(*) FROM {nvtx} WHERE {ranges}").fetchone()[0]
        out["nvtx_other"] = db.execute(f"SELECT COUNT(*) FROM {nvtx} WHERE NOT ({ranges})").fetchone()[0]
        rows = db.execute(f"SELECT start, end FROM {nvtx} WHERE {ranges}").fetchall()
        starts += [start for start, _ in rows]
        ends += [end for _, end in rows]
    else:
        out["nvtx_ranges"] = out["nvtx_other"] = 0

    out["pairs"], out["naive_pairs"], out["launch_pairs"] = {}, {}, 0
    for kind, table in GPU_TABLES.items():
        if table not in have or runtime not in have:
            out["pairs"][kind] = out["naive_pairs"][kind] = 0
            continue
        join = f"""FROM {table} g JOIN {runtime} r ON r.correlationId = g.correlationId
                   AND r.eventClass IN (0, 1)"""
        same_process = f"AND {PID.format('r.globalTid')} = {PID.format('g.globalPid')}"
        out["naive_pairs"][kind] = db.execute(f"SELECT COUNT(*) {join}").fetchone()[0]
        out["pairs"][kind] = db.execute(f"SELECT COUNT(*) {join} {same_process}").fetchone()[0]
        calls = db.execute(f"SELECT s.value {join} {same_process} JOIN StringIds s ON s.id = r.nameId").fetchall()
        out["launch_pairs"] += sum(1 for (name,) in calls if re.sub(r"_v\d{4,}$", "", name) in LAUNCH_NAMES)

    copy_kinds, memory_kinds = COPY_KINDS, MEMORY_KINDS
    if "ENUM_CUDA_MEMCPY_OPER" in have:
        copy_kinds = {i: re.sub(r"([A-Z])TO([A-Z])", r"\1to\2", name.removeprefix("CUDA_MEMCPY_KIND_"))
                      .replace("_", " ").replace("UNKNOWN", "Unknown")
                      for i, name in db.execute("SELECT id, name FROM ENUM_CUDA_MEMCPY_OPER")}
    if "ENUM_CUDA_MEM_KIND" in have:
        memory_kinds = dict(db.execute("SELECT id, label FROM ENUM_CUDA_MEM_KIND"))
    named = {
        "copy_names": (GPU_TABLES["memcpy"], "copyKind, srcKind, dstKind",
                       lambda c, s, d: f"Memcpy {copy_kinds[c]} ({memory_kinds[s]} -> {memory_kinds[d]})"),
        "memset_names": (GPU_TABLES["memset"], "memKind", lambda m: f"Memset ({memory_kinds[m]})"),
        "sync_names": (GPU_TABLES["sync"], "syncType", lambda t: SYNC_KINDS.get(t, "Unknown Sync")),
    }
    for key, (table, columns, name) in named.items():
        counts = {}
        if table in have:
            for row in db.execute(f"SELECT {columns} FROM {table}"):
                counts[name(*row)] = counts.get(name(*row), 0) + 1
        out[key] = counts

    out["events"] = sum(out[kind]["count"] for kind in GPU_TABLES) + out["runtime"] + out["nvtx_ranges"]
    out["start"], out["end"] = min(starts), max(ends)
    out["gpus"] = (
        [name for (name,) in db.execute("SELECT name FROM TARGET_INFO_GPU ORDER BY id")]
        if "TARGET_INFO_GPU" in have else []
    )
    return out


if __name__ == "__main__":
    expected = {name: figures(os.path.join(HERE, name)) for name in FIXTURES}
    with open(os.path.join(HERE, "expected.json"), "w") as file:
        json.dump(expected, file, indent=2, sort_keys=True, ensure_ascii=False)
        file.write("\n")
    for name, values in expected.items():
        print(name, values["events"], "events,", values["kernel"]["count"], "kernels,",
              values["launch_pairs"], "launch pairs,", sum(values["pairs"].values()), "pairs")
