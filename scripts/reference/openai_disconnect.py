"""Checks that a non-streaming client that closes its connection mid-answer cancels its request,
and reads `loupe serve`'s /metrics with prometheus_client's own parser; prints a JSON report for
OpenAIPeerTests.

A raw socket asks for a 2000-token answer without streaming and closes once /metrics shows the
sequence in flight; /metrics is then scraped until the request is counted as 499 and the queue is
empty (a bounded number of scrapes, no clock), and the official `openai` client's next request
must be answered: the server runs with --openai-queue 1, so it would be refused (429) while the
abandoned sequence still held its slot. A bad request adds a 400. Where the cache is paged, the
key/value blocks in use are read while the abandoned answer grows. The last scrape is reported as
parsed samples.

Usage: openai_disconnect.py BASE_URL MODEL
"""

import json
import socket
import sys
import time
import urllib.request

import openai
from prometheus_client.parser import text_string_to_metric_families

base_url, model = sys.argv[1], sys.argv[2]
root = base_url.removesuffix("/v1")
host, port = root.removeprefix("http://").split(":")
report = {}


def scrape():
    with urllib.request.urlopen(root + "/metrics", timeout=30) as response:
        return response.headers["Content-Type"], response.read().decode()


def samples(text):
    """Every sample as {name, labels, value}, as prometheus_client parses the exposition."""
    return [{"family": family.name, "type": family.type, "name": s.name, "labels": s.labels, "value": s.value}
            for family in text_string_to_metric_families(text) for s in family.samples]


def value(parsed, name, **labels):
    found = [s["value"] for s in parsed if s["name"] == name and all(s["labels"].get(k) == v for k, v in labels.items())]
    return found[0] if found else None


def poll(predicate, limit=2000):
    """Scrapes until predicate holds on the parsed samples; how many scrapes it took, or None."""
    for count in range(1, limit + 1):
        if predicate(samples(scrape()[1])):
            return count
        time.sleep(0.01)
    return None


body = json.dumps({"model": model, "messages": [{"role": "user", "content": "Tell a long story."}],
                   "temperature": 0, "max_tokens": 2000, "user": "leaves-early"}).encode()
connection = socket.create_connection((host, int(port)))
connection.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: loupe\r\nContent-Type: application/json\r\n"
                   + b"Content-Length: %d\r\n\r\n" % len(body) + body)
report["scrapes_until_running"] = poll(lambda parsed: value(parsed, "loupe_serve_queue_depth") == 1)
# A paged cache's blocks while the answer grows: held by it, within the pool.
if value(samples(scrape()[1]), "loupe_serve_kv_blocks") is not None:
    loaded = []
    poll(lambda parsed: (value(parsed, "loupe_serve_kv_blocks_in_use") or 0) > 0 and not loaded.append(parsed))
    if loaded:
        report["kv_under_load"] = {"in_use": value(loaded[0], "loupe_serve_kv_blocks_in_use"),
                                   "total": value(loaded[0], "loupe_serve_kv_blocks")}
connection.close()
report["scrapes_until_cancelled"] = poll(
    lambda parsed: value(parsed, "loupe_serve_requests_total", status="499") == 1
    and value(parsed, "loupe_serve_queue_depth") == 0)

client = openai.OpenAI(base_url=base_url, api_key="unused-on-loopback", max_retries=0, timeout=120)
after = client.chat.completions.create(model=model, messages=[{"role": "user", "content": "Name three colors."}],
                                       temperature=0, max_tokens=24)
report["next"] = {"finish_reason": after.choices[0].finish_reason, "usage": after.usage.model_dump()}
try:
    client.chat.completions.create(model=model, messages=[{"role": "user", "content": "hi"}], temperature=7)
except openai.BadRequestError as error:
    report["bad_status"] = error.status_code

content_type, text = scrape()
report["content_type"] = content_type
report["samples"] = samples(text)
report["types"] = {family.name: family.type for family in text_string_to_metric_families(text)}
print(json.dumps(report))
