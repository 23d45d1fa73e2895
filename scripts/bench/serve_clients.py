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
last answer read, aggregate generated tokens/s, and time to first token p50 and p99 (nearest rank).
"""

import http.client
import json
import random
import sys
import time
import urllib.parse
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
    first, chunks, usage, prompt = None, 0, None, None
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
                if first is None:
                    first = time.perf_counter()
    connection.close()
    return (first - sent if first else None), (usage if usage is not None else chunks), prompt


def client(index):
    return [one(index * per_client + request) for request in range(per_client)]


if system:
    one("warm", tokens=1)
start = time.perf_counter()
with ThreadPoolExecutor(clients) as pool:
    results = [r for rs in pool.map(client, range(clients)) for r in rs]
wall = time.perf_counter() - start
ttfts = sorted(t for t, _, _ in results if t is not None)


def rank(q):
    return ttfts[min(len(ttfts) - 1, max(0, int(-(-q * len(ttfts) // 1)) - 1))] if ttfts else None


tokens = sum(n for _, n, _ in results)
prompts = sorted({p for _, _, p in results if p is not None})
print(json.dumps({"clients": clients, "mode": mode if system else "unique", "requests": len(results), "prompt_tokens": prompts, "tokens": tokens,
                  "wall_s": wall,
                  "tokens_per_s": tokens / wall, "ttft_p50_s": rank(0.5), "ttft_p99_s": rank(0.99)}))
