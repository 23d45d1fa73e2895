#!/usr/bin/env python3
"""A trace that grows over many requests (issue 64, F-3): what one one-span request costs `loupe serve`
as the trace it adds to reaches 1,000, 5,000 and 20,000 spans.

Starts `loupe serve` on a fresh workspace and a free loopback port, grows one OTLP/JSON trace in
batches of 1,000 spans (each span a model call under the root with a 500-character attribute, as
an agent session exports them), and at each size posts REPEATS one-span requests to it, one at a
time, printing the median and the worst milliseconds per request. Before the append (F-3) each
request re-read and rewrote the whole trace in the one writer, and every other client waited.

With --one-by-one N it sends a trace of N spans one span a request instead (children as they
end, the root last, as an exporter sends them) and prints the milliseconds per span of the first
and the last 500 requests: when a request costs what its own span costs, the two agree.

Usage: scripts/bench/growing_trace.py [--loupe .build/release/loupe] [--sizes 1000,5000,20000] [--repeats 20]
       scripts/bench/growing_trace.py [--loupe .build/release/loupe] --one-by-one 5000
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRACE = "0af7651916cd43dd8448eb211c80319c"
START = 1_767_225_600_000_000_000


def span(number, trace=TRACE):
    """Span `number` of the trace: the root, else a model call under it, each starting later."""
    start = START + number * 1_000_000
    record = {
        "traceId": trace, "spanId": f"{number + 1:016x}", "name": "agent" if number == 0 else "chat model",
        "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 900_000),
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent" if number == 0 else "chat"}},
            {"key": "gen_ai.usage.input_tokens", "value": {"intValue": str(10 + number % 50)}},
            {"key": "note", "value": {"stringValue": "n" * 500}},
        ],
    }
    if number:
        record["parentSpanId"] = f"{1:016x}"
    return record


def body(spans):
    return json.dumps({"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "bench"}}]},
        "scopeSpans": [{"scope": {"name": "bench"}, "spans": spans}],
    }]}).encode()


def post(address, data):
    request = urllib.request.Request(address, data=data, headers={"Content-Type": "application/json"})
    started = time.monotonic()
    with urllib.request.urlopen(request, timeout=600) as answer:
        if answer.status != 200:
            raise SystemExit(f"the server answered {answer.status}")
    return (time.monotonic() - started) * 1000


def one_by_one(address, count, window=500):
    """Sends spans 1..count-1 then the root, one a request; prints the cost per span at each end."""
    order = list(range(1, count)) + [0]
    times = [post(address, body([span(number)])) for number in order]
    window = min(window, count // 2)
    print(f"{count} spans, one a request, {sum(times) / 1000:.1f} s in all")
    for label, part in (("first", times[:window]), ("last", times[-window:])):
        print(f"{label:>5} {window}: median {statistics.median(part):.2f} ms, mean {statistics.mean(part):.2f} ms, "
              f"worst {max(part):.1f} ms a span", flush=True)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--loupe", default=os.path.join(ROOT, ".build/release/loupe"))
    parser.add_argument("--sizes", default="1000,5000,20000")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--one-by-one", type=int, default=0, metavar="N",
                        help="send a trace of N spans one span a request; print the first and last 500's cost")
    options = parser.parse_args()
    sizes = [int(size) for size in options.sizes.split(",")]
    folder = tempfile.mkdtemp(prefix="loupe-grow-")
    process = subprocess.Popen(
        [os.path.abspath(options.loupe), "--workspace", os.path.join(folder, "w.sqlite"), "serve",
         "--http-port", "0", "--no-grpc"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        first = process.stdout.readline()
        address = next(word for word in first.split() if word.startswith("http://"))
        if options.one_by_one:
            return one_by_one(address, options.one_by_one)
        stored = 0
        print(f"{'spans':>7}  {'median ms':>9}  {'worst ms':>8}")
        for size in sizes:
            while stored < size:
                count = min(1000, size - stored)
                post(address, body([span(stored + i) for i in range(count)]))
                stored += count
            times = []
            for _ in range(options.repeats):
                times.append(post(address, body([span(stored)])))
                stored += 1
            print(f"{size:>7}  {statistics.median(times):>9.1f}  {max(times):>8.1f}", flush=True)
    finally:
        process.terminate()
        process.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
