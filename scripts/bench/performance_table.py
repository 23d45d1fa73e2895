#!/usr/bin/env python3
"""Turns the JSON lines that scripts/bench/all.sh collected (RECORDS/BENCH.ROUND.json, each line one
script's final JSON plus the load average it started at, its commit and its CPU) into
docs/PERFORMANCE.md: one row per workload with Loupe's figure, the best peer's, the ratio (above
1: Loupe is faster), the share of the roof where the script measured one, and the load averages.
A figure is the median over the rounds. Each record names the commit and the CPU it was measured at; the table says which scripts
ran at which. Usage: performance_table.py RECORDS"""
import collections
import datetime
import glob
import json
import os
import platform
import statistics
import sys

out = sys.argv[1]
commits = collections.defaultdict(set)  # script -> the commits its records were measured at
machines = collections.defaultdict(set)  # script -> the CPUs its records were measured on
# workload -> list of (loupe, peer name, peer, unit, higher_is_better, roof, load, peer's roof)
rows = collections.OrderedDict()


notes = collections.defaultdict(list)  # workload -> notes, one a round


def add(workload, loupe, peer_name, peer, unit, load, higher=True, roof=None, note=None, peer_roof=None):
    """A row; `peer` None for a figure with a target but no peer program. `roof` and `peer_roof`: the
    shares of the FP32 roof Loupe and the peer reach, where the script measured the roof."""
    if loupe is None:
        return
    rows.setdefault(workload, []).append((loupe, peer_name, peer, unit, higher, roof, load, peer_roof))
    if note:
        notes[workload].append(note)


def embed(r, load):
    st = r["peers"]["sentence_transformers"]["sentences_per_second"]
    l = r["loupe"]
    shape = f"{l['sentences']} × {l['mean_tokens']:.0f} tokens, batch {l['batch_size']}"
    roof = l.get("fraction_of_roof")
    # The same model and tokens, so the peer's share of the roof is Loupe's scaled by their speeds.
    add(f"MiniLM fp32, {r['set']} ({shape})", l["sentences_per_second"], "sentence-transformers", st,
        "sentences/s", load, roof=roof, peer_roof=roof and roof * st / l["sentences_per_second"])
    q = r.get("loupe_int8")
    if q:
        add(f"MiniLM int8 against the fp32 peer, {r['set']} ({shape})",
            q["sentences_per_second"], "sentence-transformers fp32", st, "sentences/s", load,
            note=f"cosine to fp32 ≥ {q['minimum_cosine_to_fp32']:.4f}")
    a = r.get("loupe_int8_avx2")
    if a:
        # Named by the kernel that ran: a CPU without AVX2 narrows `--int8-kernel avx2` further.
        kernel = (a.get("int8_kernel") or "?").upper()
        add(f"MiniLM int8 on its {kernel} path against the fp32 peer, {r['set']} ({shape})",
            a["sentences_per_second"], "sentence-transformers fp32", st, "sentences/s", load,
            note=f"{kernel} int8 kernel and {a.get('int8_attention')} attention, as on a CPU without AVX-512 VNNI and BF16")


def retrieval(r, load):
    l = r["loupe"]
    add(f"BM25, Cranfield ({l['documents']:,} docs, one thread)", l["queries_per_second"], "bm25s-numba",
        r["peers"]["bm25s_numba"]["queries_per_second"], "queries/s", load)


def retrieval_scale(r, load):
    l, peers = r["loupe"], r["peers"]
    best = max(("bm25s_numba", "tantivy"), key=lambda p: peers[p]["queries_per_second"])
    same = r.get("identical_vs_bm25s", {})
    names = {"bm25s_numba": "bm25s-numba (batched)", "tantivy": "tantivy"}
    add(f"BM25, Cranfield ×100 ({l['documents']:,} docs, one thread)", l["queries_per_second"], names[best],
        peers[best]["queries_per_second"], "queries/s", load,
        note=f"top-100 identical to bm25s's on {same.get('allowing_ties')}/{same.get('queries')} queries (ties aside)")
    fastest = min(("bm25s_numba", "tantivy"), key=lambda p: peers[p]["index_seconds"])
    add(f"BM25 index build, {l['documents']:,} docs", l["index_seconds"], names[fastest], peers[fastest]["index_seconds"],
        "s", load, higher=False)


def kernels(r, load):
    ours = {(k["kernel"], k["shape"]): k["seconds"] for k in r["loupe"]["kernels"]}
    for key in r["ratios"]:
        mine, theirs = key.split(" / torch ")
        kernel, shape = mine.split(" ")
        torch_seconds = r["torch"]["seconds"][theirs][shape]
        add(f"kernel {kernel} {shape}", ours[(kernel, shape)] * 1e3, f"torch {theirs}", torch_seconds * 1e3, "ms",
            load, higher=False)


def sae(r, load):
    l = r["loupe"]
    add(f"TopK SAE training, {l['inputs']} × {l['width']}, k {l['k']}, batch {l['batch']}",
        l["train_tokens_per_second"], "PyTorch CPU", r["torch"]["train_tokens_per_second"], "tokens/s", load)


def traces(r, load):
    add(f"loupe trace import, {r['file_bytes'] / 1e6:.0f} MB OTLP JSON Lines, end to end",
        r["import_megabytes_per_second"], "Python json.loads (parse alone)", r.get("python_json_loads_megabytes_per_second"),
        "MB/s", load, note="target ≥ 60 MB/s")
    # Its own row, so each round's figure is in the median rather than a note per round.
    add("loupe trace import, peak RSS", r["import_peak_rss_over_file"], "", None, "× the file", load,
        higher=False, note="target ≤ 2")
    add(f"open a {r['replay_spans']:,}-span trace, first frame", r["open_first_frame_milliseconds"], "", None, "ms", load,
        higher=False, note="target ≤ 200 ms")


def hnsw(r, load):
    at = r["qps_at_recall_095"]
    # The target's peers are the float ones (hnswlib, faiss); the 8-bit peers get a row of their own.
    for label, names in (("float peers", ("hnswlib", "faiss", "usearch")), ("8-bit peers", ("usearch i8", "faiss sq8"))):
        peers = {name: at[name] for name in names if at.get(name)}
        if peers:
            best = max(peers, key=peers.get)
            add(f"HNSW, {r['set']} (queries/s at recall@10 0.95, one thread; {label})", at.get("loupe"), best,
                peers[best], "queries/s", load,
                note=f"beam on 8-bit vectors, exact rerank; float beam {at.get('loupe f32') or 0:,.0f}/s; "
                     f"plot: docs/hnsw-recall-qps-{r['set']}.png; target 1.5×")
    p = r["peers"]
    builds = {name: p.get(f"{name}_build_seconds") for name in ("hnswlib", "faiss", "usearch")}
    builds = {name: s for name, s in builds.items() if s}
    if builds:
        fastest = min(builds, key=builds.get)
        add(f"HNSW build, {r['set']} (M 16, efConstruction 200, one thread)", r["loupe"]["build_seconds"], fastest,
            builds[fastest], "s", load, higher=False, note="target ≤ 0.5× hnswlib's")


def generate(r, load):
    # scripts/bench/generate.sh: llama-bench's pp512 and tg128 at depth 512, per thread count. Its
    # rounds alternate single runs of both programs; each figure carries the median and range of
    # the load averages read before its runs (older records have none).
    peer = "llama.cpp (llama-bench)"

    def loads(t, ours, theirs):
        if ours not in t:
            return ""
        a, b = t[ours], t[theirs]
        return (f"; load during runs: Loupe {a['median']:.1f} ({a['min']:.1f}–{a['max']:.1f}), "
                f"llama.cpp {b['median']:.1f} ({b['min']:.1f}–{b['max']:.1f})")

    for t in r["threads"]:
        n = t["threads"]
        threads = f"{n} thread{'s' if n != 1 else ''}"
        add(f"SmolLM2-135M Q4_1 prefill, 512 tokens, {threads}", t["loupe_prefill"], peer, t["llama_prefill"],
            "tokens/s", load, note="target 3×" + loads(t, "loupe_load", "llama_prefill_load"))
        add(f"SmolLM2-135M Q4_1 decode, 128 tokens at depth 512, {threads}", t["loupe_decode"], peer,
            t["llama_decode"], "tokens/s", load,
            note=f"{t['decode_share_of_memory_bound'] * 100:.0f}% of the memory bound "
                 f"({t['memory_bandwidth_gbs']:.1f} GB/s triad); target 2× and 60%"
                 + loads(t, "loupe_load", "llama_decode_load"))
    llama_rss = r.get("llama_peak_rss_mb")
    add("SmolLM2-135M peak RSS, pp512 then tg128", r["peak_rss_mb"], "llama.cpp (llama-bench)" if llama_rss else "",
        llama_rss, "MB", load, higher=False,
        note=f"GGUF tensors {r['weight_bytes'] / 1e6:.1f} MB; target ≤ the GGUF + the KV cache (29.5 MB) + 60 MB")


def speculative(r, load):
    # scripts/bench/speculative.sh: edit tasks, greedy; the peer is plain decoding in the same run.
    add(f"SmolLM2-135M edit task, prompt-lookup decoding, {r['threads']} threads", r["speculative_decode_tokens_per_second"],
        "plain decoding", r["plain_decode_tokens_per_second"], "tokens/s", load,
        note=f"acceptance {r['acceptance_rate'] * 100:.0f}%; same tokens: "
             f"{'yes' if r['all_same_tokens'] else 'NO'}; target 1.5×")


def glassbox(r, load):
    # scripts/bench/glassbox.sh: SmolLM2's insides on a long context; no other program reads them with
    # Loupe's kernels, so the lens has a target, and the capturing prefill the plain one as its peer.
    context = f"{r['context_tokens']:,}-token context, {r['threads']} threads"
    add(f"SmolLM2-135M logit lens, one position of a {context}", r["lens_seconds"] * 1000, "", None, "ms", load,
        higher=False, note=f"target ≤ {r['target_lens_seconds'] * 1000:.0f} ms; from nothing (a probe, then the lens) "
                           f"{r['lens_from_nothing_seconds']:.2f} s")
    add(f"SmolLM2-135M prefill keeping every position's residual stream, {context}",
        r["capture_all_prefill_seconds"], "plain prefill", r["plain_prefill_seconds"], "s", load, higher=False,
        note=f"{r['captured_megabytes']:.0f} MB captured")
    view, steer = r.get("token_view"), r.get("steering")  # records before both were measured lack them
    if view:
        add(f"Traces panel: a {view['step_tokens']}-token local step's token view, T to its first frame",
            view["open_milliseconds"], "", None, "ms", load, higher=False,
            note=f"target ≤ {view['target_open_milliseconds']:.0f} ms; from enter on the trace "
                 f"{view['from_trace_milliseconds']:.1f} ms")
    if steer:
        add(f"SmolLM2-135M steered generation, {steer['tokens']} tokens ({steer['precision']}, layer {steer['layer']}, "
            f"α {steer['alpha']:g})", steer["steered_seconds"], "the same plain generation", steer["plain_seconds"],
            "s", load, higher=False,
            note=f"steered / plain {steer['steered_over_plain']:.2f}×, target ≤ {steer['target_ratio']}×; "
                 f"{steer['direction']}")


def mcp(r, load):
    # Phoenix's MCP server is not installed: the peer column is the loupe CLI, one process per call.
    for tool in ("traces_list", "trace_show", "eval_show"):
        stdio, cli = r["stdio"][tool], r["cli"][tool]
        add(f"MCP {tool} over stdio, p99 (peer: the loupe CLI per call, p50)", stdio["p99_ms"], "loupe CLI",
            cli["p50_ms"], "ms", load, higher=False,
            note=f"p50 {stdio['p50_ms']:.1f} ms, HTTP p99 {r['http'][tool]['p99_ms']:.1f} ms; target p99 ≤ 20 ms")


seen = collections.Counter()
readers = {"embed": embed, "retrieval": retrieval, "retrieval-scale": retrieval_scale, "kernels": kernels, "sae": sae,
           "hnsw": hnsw, "traces": traces, "generate": generate, "speculative": speculative, "glassbox": glassbox, "mcp": mcp}
for path in sorted(glob.glob(os.path.join(out, "*.json"))):
    bench = os.path.basename(path).rsplit(".", 2)[0]
    seen[bench] += 1
    for line in open(path):
        record = json.loads(line)
        commits[bench].add(record.get("commit", "?"))
        machines[bench].add(record.get("cpu", "?"))
        readers[bench](record, record.get("load_average"))

print("# Performance\n")
every = sorted(set().union(*commits.values())) if commits else ["?"]
cpus = sorted(set().union(*machines.values())) if machines else ["?"]
at = f"at commit {every[0]}" if len(every) == 1 else "at commits " + ", ".join(every) + " (per script below)"
on = f"on {cpus[0]}" if len(cpus) == 1 else "on " + "; ".join(cpus) + " (per script below)"
print(f"Written by `scripts/bench/all.sh` on {datetime.date.today().isoformat()} {at}, {on}, "
      f"{platform.system()}. Each figure is the median of its rounds; each script runs its "
      "peers in the same run, so compare ratios, not figures across rows. The ratio is above 1 when Loupe is faster. "
      "The load average is the 1-minute average when the script started, one per round.\n")
missing = [bench for bench in readers if bench not in seen]
def script(bench, count):
    details = [str(count)]
    if len(every) > 1:
        details.append(", ".join(sorted(commits[bench])))
    if len(cpus) > 1:
        details.append("; ".join(sorted(machines[bench])))
    return f"{bench} ({', '.join(details)})"


print("Scripts in this table (rounds" + (", commit" if len(every) > 1 else "") + (", CPU" if len(cpus) > 1 else "")
      + "): "
      + ", ".join(script(bench, count) for bench, count in seen.items())
      + (f"; not in it: {', '.join(missing)}." if missing else ".") + "\n")
print("| Workload | Loupe | Best peer | Peer | Ratio | % of FP32 roof | Load | Notes |")
print("|---|---|---|---|---|---|---|---|")
for workload, runs in rows.items():
    loupe = statistics.median(r[0] for r in runs)
    peers = [r[2] for r in runs if r[2] is not None]
    peer = statistics.median(peers) if peers else None
    unit, higher = runs[0][3], runs[0][4]
    ratio = "—" if peer is None else f"{(loupe / peer if higher else peer / loupe):.2f}×"
    roofs = [r[5] for r in runs if r[5] is not None]
    roof = f"{statistics.median(roofs) * 100:.0f}%" if roofs else ""
    loads = ", ".join(f"{r[6]:.2f}" for r in runs if r[6] is not None)
    def figure(x):
        return f"{x:,.0f} {unit}" if x >= 100 else f"{x:.3g} {unit}"
    note = "; ".join(dict.fromkeys(notes[workload]))
    peer_roofs = [r[7] for r in runs if r[7] is not None]
    share = statistics.median(peer_roofs) if peer_roofs else 0
    if share > 0:
        note = (f"the peer at {share * 100:.0f}% of the roof: twice its speed would need "
                f"{2 * share * 100:.0f}%, {1 / share:.2f}× it at the roof itself" + ("; " + note if note else ""))
    peer_figure = "—" if peer is None else figure(peer)
    print(f"| {workload} | {figure(loupe)} | {runs[0][1] or '—'} | {peer_figure} | {ratio} | {roof} | {loads} | {note} |")

# The hand-written history beside the table: what each round changed and how it was measured.
# all.sh overwrites this file, so the history lives in docs/performance/ and is only linked here.
print("\nHow these figures moved, round by round, and what was tried and dropped: "
      "[performance/](performance/README.md) (MiniLM, kernels, retrieval, SAE training, traces); "
      "the PostgreSQL and eval-worker figures: [team.md](team.md#measured); "
      "`loupe serve` under 1, 4 and 16 clients: [performance/serving.md](performance/serving.md).")
