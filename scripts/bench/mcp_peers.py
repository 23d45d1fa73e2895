"""Tool-call latency of `loupe mcp` as an agent host sees it: the official MCP Python SDK (`mcp`,
in .venv-peers) calls a few representative tools over stdio (it launches the server) and over
streamable HTTP (a server already listening), CALLS times each after a warm-up, one call at a
time; then the same questions asked of the `loupe` CLI, one process per call (what an agent
without MCP runs). `loupe bench mcp` runs it and prints its JSON.

    python mcp_peers.py LOUPE WORKSPACE HTTP-URL CALLS CLI-CALLS
"""

import asyncio
import json
import os
import subprocess
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

TOOLS = [
    ("workspace_info", {}),
    ("traces_list", {"limit": 50}),
    ("trace_show", {"id": 1, "max_steps": 20}),
    ("trace_search", {"text": "error"}),
    ("eval_show", {"id": 1}),
]
# The CLI's answer to the same question, where the CLI has one.
CLI = {
    "traces_list": ["trace", "list", "--json"],
    "trace_show": ["trace", "show", "1", "--json"],
    "eval_show": ["eval", "show", "1", "--json"],
}


def summary(milliseconds, seconds):
    ordered = sorted(milliseconds)

    def quantile(q):
        return ordered[min(len(ordered) - 1, round((len(ordered) - 1) * q))]

    return {
        "calls": len(ordered),
        "p50_ms": quantile(0.5),
        "p99_ms": quantile(0.99),
        "max_ms": ordered[-1],
        "calls_per_second": len(ordered) / seconds,
    }


async def measure(session, calls):
    results = {}
    for name, arguments in TOOLS:
        for _ in range(max(3, calls // 20)):
            await session.call_tool(name, arguments)
        times = []
        start = time.perf_counter()
        for _ in range(calls):
            before = time.perf_counter()
            result = await session.call_tool(name, arguments)
            times.append((time.perf_counter() - before) * 1000)
            if result.is_error:
                raise SystemExit(f"{name} failed: {result.content[0].text}")
        results[name] = summary(times, time.perf_counter() - start)
    return results


def server_rss_kb(workspace):
    """The peak resident set of the `loupe mcp` serving WORKSPACE on stdio, from /proc."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            arguments = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
            if b"mcp" in arguments and workspace.encode() in arguments and b"--http" not in arguments:
                for line in open(f"/proc/{pid}/status"):
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1])
        except OSError:
            continue
    return None


async def main(loupe, workspace, url, calls, cli_calls):
    report = {}
    params = StdioServerParameters(command=loupe, args=["mcp", "--workspace", workspace])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            report["stdio"] = await measure(session, calls)
            report["stdio_server_peak_rss_kb"] = server_rss_kb(workspace)
    import httpx2

    async with httpx2.AsyncClient(timeout=30) as client:
        async with streamable_http_client(url, http_client=client) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                report["http"] = await measure(session, calls)
    report["cli"] = {}
    for name, arguments in CLI.items():
        times = []
        start = time.perf_counter()
        for _ in range(cli_calls):
            before = time.perf_counter()
            subprocess.run([loupe, "--workspace", workspace] + arguments, check=True, capture_output=True)
            times.append((time.perf_counter() - before) * 1000)
        report["cli"][name] = summary(times, time.perf_counter() - start)
    return report


if __name__ == "__main__":
    loupe, workspace, url, calls, cli_calls = sys.argv[1:6]
    print(json.dumps(asyncio.run(main(loupe, workspace, url, int(calls), int(cli_calls)))))
