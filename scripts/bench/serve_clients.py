"""Concurrent OpenAI clients against one server (scripts/bench/serve.sh): C clients, each sending
its requests one after the other over http.client, streaming, so time to first token is the
client's own view (the request sent to the first chunk with text).

Usage: serve_clients.py BASE_URL MODEL CLIENTS REQUESTS_PER_CLIENT PROMPT_FILE MAX_TOKENS

Each request's prompt is PROMPT_FILE's text after a number of its own (a run's random one and the
request's), so no two share a prefix a server could reuse, across runs too. Prints one JSON object: generated tokens (the servers' usage counts, or the
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
url = urllib.parse.urlparse(base_url)
run = random.randrange(10**6)


def one(number):
    body = json.dumps({
        "model": model, "prompt": f"Note {run}-{number}. {text}", "max_tokens": max_tokens, "temperature": 0,
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


start = time.perf_counter()
with ThreadPoolExecutor(clients) as pool:
    results = [r for rs in pool.map(client, range(clients)) for r in rs]
wall = time.perf_counter() - start
ttfts = sorted(t for t, _, _ in results if t is not None)


def rank(q):
    return ttfts[min(len(ttfts) - 1, max(0, int(-(-q * len(ttfts) // 1)) - 1))] if ttfts else None


tokens = sum(n for _, n, _ in results)
prompts = sorted({p for _, _, p in results if p is not None})
print(json.dumps({"clients": clients, "requests": len(results), "prompt_tokens": prompts, "tokens": tokens,
                  "wall_s": wall,
                  "tokens_per_s": tokens / wall, "ttft_p50_s": rank(0.5), "ttft_p99_s": rank(0.99)}))
