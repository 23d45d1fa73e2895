"""Concurrent OpenAI clients against one server (scripts/bench/serve.sh): C clients, each sending
its requests one after the other over http.client, streaming, so time to first token is the
client's own view (the request sent to the first chunk with text).

Usage: serve_clients.py BASE_URL MODEL CLIENTS REQUESTS_PER_CLIENT PROMPT_FILE MAX_TOKENS [SYSTEM_FILE shared|unique]

Each request's prompt is PROMPT_FILE's text after a number of its own (a run's random one and the
request's), so no two share a prefix a server could reuse, across runs too. With SYSTEM_FILE (a
system prompt), `shared` puts it first, so every request starts with the same tokens (what a prefix
cache reuses), and `unique` puts the request's number first, then it: the same tokens, no shared
prefix. Either way one untimed request of the same shape goes first, so a server whose cache keeps
the shared prefix has it before the timed requests start. Prints one JSON object: generated tokens (the servers' usage counts, or the
chunks with text where a server sends none), the wall time from the first request sent to the
last answer read, aggregate generated tokens/s, time to first token p50 and p99 (nearest rank), and
inter-token latency p50 and p99 (the gaps between one request's chunks with text, over all requests).

With SERVER_PID set, a sampler reads the server's resident memory (/proc/PID/status VmRSS) every
100 ms during the timed requests and reports its peak; with METRICS_URL set, it also reads that
Prometheus endpoint every 250 ms and reports the peak of each gauge whose name has `kv` in it
(Loupe's `loupe_serve_kv_blocks_in_use` and `loupe_serve_kv_blocks`; llama-server's KV cache
gauges when it runs with --metrics).
"""

import http.client
import json
import os
import random
import sys
import threading
import time
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor

base_url, model, clients, per_client, prompt_file, max_tokens = sys.argv[1:7]
clients, per_client, max_tokens = int(clients), int(per_client), int(max_tokens)
text = open(prompt_file).read()
system = open(sys.argv[7]).read() if len(sys.argv) > 7 else ""
mode = sys.argv[8] if len(sys.argv) > 8 else "unique"
if mode not in ("shared", "unique"):
    sys.exit(f"serve_clients.py: the mode is shared or unique, not {mode!r}")
url = urllib.parse.urlparse(base_url)
run = random.randrange(10**6)


def prompt_text(number):
    note = f"Note {run}-{number}. "
    return system + note + text if mode == "shared" else note + system + text


def one(number, tokens=None):
    body = json.dumps({
        "model": model, "prompt": prompt_text(number), "max_tokens": tokens or max_tokens, "temperature": 0,
        "stream": True, "stream_options": {"include_usage": True},
    })
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=600)
    sent = time.perf_counter()
    connection.request("POST", url.path + "/completions", body, {"Content-Type": "application/json"})
    response = connection.getresponse()
    if response.status != 200:
        raise RuntimeError(f"{base_url}: HTTP {response.status}: {response.read()[:300]!r}")
    first, chunks, usage, prompt, last, gaps = None, 0, None, None, None, []
    for raw in response:
        line = raw.decode().strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        event = json.loads(line[6:])
        if event.get("usage"):
            usage = event["usage"]["completion_tokens"]
            prompt = event["usage"].get("prompt_tokens")
        for choice in event.get("choices") or []:
            if choice.get("text"):
                chunks += 1
                now = time.perf_counter()
                if first is None:
                    first = now
                else:
                    gaps.append(now - last)
                last = now
    connection.close()
    return (first - sent if first else None), (usage if usage is not None else chunks), prompt, gaps


def client(index):
    return [one(index * per_client + request) for request in range(per_client)]


class Sampler(threading.Thread):
    """Peaks of the server's RSS and of its KV gauges while the timed requests run."""

    def __init__(self):
        super().__init__(daemon=True)
        self.pid = os.environ.get("SERVER_PID")
        self.metrics = os.environ.get("METRICS_URL")
        self.peak_rss_kb, self.kv = 0, {}
        self.done = threading.Event()

    def rss_kb(self):
        with open(f"/proc/{self.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def gauges(self):
        with urllib.request.urlopen(self.metrics, timeout=2) as response:
            for line in response.read().decode().splitlines():
                if line.startswith("#") or "kv" not in line.split(" ")[0].lower():
                    continue
                name, _, value = line.rpartition(" ")
                self.kv[name] = max(self.kv.get(name, 0.0), float(value))

    def run(self):
        tick = 0
        while not self.done.wait(0.1):
            if self.pid:
                self.peak_rss_kb = max(self.peak_rss_kb, self.rss_kb())
            if self.metrics and tick % 3 == 0:
                self.gauges()
            tick += 1


if system:
    one("warm", tokens=1)
sampler = Sampler()
sampler.start()
start = time.perf_counter()
with ThreadPoolExecutor(clients) as pool:
    results = [r for rs in pool.map(client, range(clients)) for r in rs]
wall = time.perf_counter() - start
sampler.done.set()
sampler.join()
ttfts = sorted(t for t, _, _, _ in results if t is not None)
itls = sorted(g for _, _, _, gaps in results for g in gaps)


def rank(values, q):
    return values[min(len(values) - 1, max(0, int(-(-q * len(values) // 1)) - 1))] if values else None


tokens = sum(n for _, n, _, _ in results)
prompts = sorted({p for _, _, p, _ in results if p is not None})
print(json.dumps({"clients": clients, "mode": mode if system else "unique", "requests": len(results), "prompt_tokens": prompts, "tokens": tokens,
                  "wall_s": wall,
                  "tokens_per_s": tokens / wall, "ttft_p50_s": rank(ttfts, 0.5), "ttft_p99_s": rank(ttfts, 0.99),
                  "itl_p50_s": rank(itls, 0.5), "itl_p99_s": rank(itls, 0.99),
                  "peak_rss_mb": sampler.peak_rss_kb / 1024 if sampler.pid else None, "peak_kv": sampler.kv}))
