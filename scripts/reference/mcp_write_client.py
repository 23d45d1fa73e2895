"""Make a write through `loupe mcp --allow-writes` with the official MCP Python SDK, as an agent would.

It launches the server over stdio on WORKSPACE, lists the tools, labels eval run RUN through the
write tool `eval_label`, reads the run back through `evals_list`, imports TRACE through
`trace_import` (and a file that is not there, and `-`, which must be refused), runs the eval suite
SUITE through `eval_run` (its first 3 items, a new run; then a suite that is not there and NETSUITE,
which names a network provider, and BADSUITE, which is not YAML: all must fail), and prints one
JSON report on standard output: the write tools' names and read-only hints, and each call's result.
Tests/LoupeCommandsTests/MCPHistoryPeerTests.swift reads it, then checks `loupe history`.

    python mcp_write_client.py LOUPE WORKSPACE RUN LABEL TRACE SUITE NETSUITE BADSUITE
"""

import asyncio
import json
import sys

# The connection and the result and error shapes are mcp_client.py's (beside this file, so on
# sys.path): what the read-only client reports and what this one does are read the same way.
from mcp_client import connect, protocol_error, result_json


async def exercise(loupe, workspace, run, label, trace, suite, netsuite, badsuite):
    async with connect(["stdio", loupe, workspace, "--allow-writes"]) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
        report = {
            "writes": {t.name: {"read_only": t.annotations.read_only_hint} for t in tools
                       if t.annotations is not None and t.annotations.read_only_hint is False},
            "label": result_json(await session.call_tool("eval_label", {"id": run, "label": label})),
            "evals_list": result_json(await session.call_tool("evals_list", {})),
            "trace_import": result_json(await session.call_tool("trace_import", {"path": trace})),
            "trace_import_missing": result_json(
                await session.call_tool("trace_import", {"path": trace + ".missing"})
            ),
            "trace_import_stdin": await protocol_error(session, "trace_import", {"path": "-"}),
            "traces_list": result_json(await session.call_tool("traces_list", {})),
            "eval_run": result_json(
                await session.call_tool("eval_run", {"path": suite, "limit": 3, "new": True})
            ),
            "eval_run_missing": result_json(await session.call_tool("eval_run", {"path": suite + ".missing"})),
            "eval_run_network": result_json(await session.call_tool("eval_run", {"path": netsuite})),
            "eval_run_bad_yaml": result_json(await session.call_tool("eval_run", {"path": badsuite})),
            "eval_run_bad_limit": await protocol_error(session, "eval_run", {"path": suite, "limit": 0}),
        }
        return report


def main():
    if len(sys.argv) != 9:
        sys.exit(__doc__)
    loupe, workspace, run, label, trace, suite, netsuite, badsuite = sys.argv[1:9]
    report = asyncio.run(exercise(loupe, workspace, int(run), label, trace, suite, netsuite, badsuite))
    print(json.dumps(report, sort_keys=True))


if __name__ == "__main__":
    main()
