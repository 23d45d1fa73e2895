"""How long a received span takes to reach the screen: the real `loupe` TUI (in a private tmux
server, following a live trace) and a `loupe serve` on the same workspace, as a team's collector
and a user's terminal would be. Each round posts one OTLP/HTTP protobuf span, a new step of the
trace, and polls the screen every 2 ms from its 200 until the step's name shows.

Usage: live_step.py LOUPE ENDPOINT TMUX_SOCKET ROUNDS
The trace's first span must already be sent and the trace open (live_step.sh does that).
"""
import subprocess
import sys
import time
import urllib.request

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

TRACE = bytes.fromhex("4c0e5e11aa7e5eb5b5c0ffee00000001")
ROOT = bytes.fromhex("00000000000000aa")


def request(index: int) -> bytes:
    message = ExportTraceServiceRequest()
    resource = message.resource_spans.add()
    resource.resource.attributes.append(KeyValue(key="service.name", value=AnyValue(string_value="live-bench")))
    span = resource.scope_spans.add().spans.add()
    span.trace_id = TRACE
    span.span_id = (0x1000 + index).to_bytes(8, "big")
    # The root never comes: the trace stays live, as a running agent's does.
    span.parent_span_id = ROOT
    span.name = f"livestep{index:03d}"
    now = time.time_ns()
    span.start_time_unix_nano = now
    span.end_time_unix_nano = now + 1_000_000
    span.attributes.append(KeyValue(key="gen_ai.operation.name", value=AnyValue(string_value="execute_tool")))
    span.attributes.append(KeyValue(key="gen_ai.tool.name", value=AnyValue(string_value=f"livestep{index:03d}")))
    return message.SerializeToString()


def post(endpoint: str, body: bytes) -> None:
    sent = urllib.request.Request(endpoint, data=body, headers={"Content-Type": "application/x-protobuf"})
    with urllib.request.urlopen(sent, timeout=10) as answer:
        if answer.status != 200:
            raise SystemExit(f"{endpoint} answered {answer.status}")


def screen(socket: str) -> str:
    return subprocess.run(
        ["tmux", "-L", socket, "capture-pane", "-t", "app", "-p"], capture_output=True, text=True, check=True
    ).stdout


def main() -> None:
    endpoint, socket, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if sys.argv[4:] == ["first"]:
        post(endpoint, request(0))
        return
    delays = []
    for index in range(1, rounds + 1):
        post(endpoint, request(index))
        acknowledged = time.monotonic()
        name = f"livestep{index:03d}"
        while name not in screen(socket):
            if time.monotonic() - acknowledged > 10:
                raise SystemExit(f"{name} was not on screen 10 s after its 200:\n{screen(socket)}")
            time.sleep(0.002)
        delays.append((time.monotonic() - acknowledged) * 1000)
        time.sleep(0.3)
    print(" ".join(f"{d:.0f}" for d in delays), file=sys.stderr)
    delays.sort()
    print(
        f"new step on screen after its 200: median {delays[len(delays) // 2]:.0f} ms, "
        f"p90 {delays[int(len(delays) * 0.9)]:.0f} ms, max {delays[-1]:.0f} ms ({len(delays)} spans)"
    )


main()
