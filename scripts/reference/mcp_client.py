"""Drive `loupe mcp` with the official MCP Python SDK (`mcp` from PyPI), as an agent host would.

Over stdio (it launches the server) or streamable HTTP (a server already listening), it lists the
tools, calls each one on a workspace built from sample-data, and makes the protocol errors an agent
can cause (an unknown tool, arguments of the wrong type, a missing argument), checking that the
server answers each with a JSON-RPC error and keeps serving. It prints one JSON report on standard
output; LoupeMCPTests (Tests/LoupeMCPTests/MCPPythonClientTests.swift) reads it.

    python mcp_client.py stdio LOUPE WORKSPACE
    python mcp_client.py http URL [TOKEN]
    python mcp_client.py triage stdio LOUPE WORKSPACE     # the docs/mcp.md transcript
    python mcp_client.py tokens stdio LOUPE WORKSPACE TRACE LIMIT   # trace_tokens whole and paged
    python mcp_client.py list stdio LOUPE WORKSPACE [SERVER-ARGS…]  # notebooks/mcp.md: the tools
    python mcp_client.py call stdio LOUPE WORKSPACE [SERVER-ARGS…] -- TOOL JSON [text]   # one call, as an agent sees it
    python mcp_client.py call http URL TOKEN -- TOOL JSON [text]
"""

import asyncio
import json
import sys
from contextlib import asynccontextmanager

from mcp import ClientSession, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


@asynccontextmanager
async def connect(argv):
    if argv[0] == "stdio":
        params = StdioServerParameters(command=argv[1], args=["mcp", "--workspace", argv[2]] + argv[3:])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                yield session
    else:
        import httpx2

        headers = {"Authorization": f"Bearer {argv[2]}"} if len(argv) > 2 else {}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as client:
            async with streamable_http_client(argv[1], http_client=client) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    yield session


def result_json(result):
    return {
        "is_error": bool(result.is_error),
        "structured": result.structured_content,
        "text": "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text"),
    }


async def protocol_error(session, name, arguments):
    try:
        result = await session.call_tool(name, arguments)
    except MCPError as error:
        return {"code": error.error.code, "message": error.error.message}
    return {"unexpected_result": result_json(result)}


async def protocol_error_of(request):
    try:
        result = await request
    except MCPError as error:
        return {"code": error.error.code, "message": error.error.message}
    return {"unexpected_result": str(result)[:200]}


async def exercise(argv):
    report = {}
    async with connect(argv) as session:
        init = await session.initialize()
        report["server"] = {"name": init.server_info.name, "protocol": init.protocol_version}
        tools = (await session.list_tools()).tools
        report["tools"] = {t.name: {"schema": t.input_schema, "read_only": t.annotations.read_only_hint} for t in tools}
        calls = {}
        calls["workspace_info"] = result_json(await session.call_tool("workspace_info", {}))
        calls["traces_list"] = result_json(await session.call_tool("traces_list", {"limit": 5}))
        cursor = calls["traces_list"]["structured"]["next_cursor"]
        calls["traces_list_page2"] = result_json(await session.call_tool("traces_list", {"limit": 5, "cursor": cursor}))
        calls["traces_list_errors"] = result_json(await session.call_tool("traces_list", {"filter": "errors"}))
        first = calls["traces_list"]["structured"]["traces"][0]["id"]
        calls["trace_show"] = result_json(await session.call_tool("trace_show", {"id": first, "max_steps": 2}))
        calls["trace_show_missing"] = result_json(await session.call_tool("trace_show", {"id": 999999}))
        calls["trace_search"] = result_json(await session.call_tool("trace_search", {"text": "flutter"}))
        calls["evals_list"] = result_json(await session.call_tool("evals_list", {}))
        calls["eval_show"] = result_json(await session.call_tool("eval_show", {"id": 1}))
        calls["eval_show_all"] = result_json(
            await session.call_tool("eval_show", {"id": 2, "failed_only": False, "limit": 3})
        )
        calls["eval_compare"] = result_json(await session.call_tool("eval_compare", {"a": 2, "b": 3, "items": 3}))
        traces = calls["traces_list"]["structured"]["traces"]
        calls["trace_diff"] = result_json(
            await session.call_tool("trace_diff", {"left": traces[1]["id"], "right": traces[0]["id"], "max_rows": 3})
        )
        calls["sessions_list"] = result_json(await session.call_tool("sessions_list", {"limit": 2}))
        sessions = calls["sessions_list"]["structured"]["sessions"]
        if sessions:
            calls["session_show"] = result_json(await session.call_tool("session_show", {"id": sessions[0]["id"]}))
        calls["session_show_missing"] = result_json(await session.call_tool("session_show", {"id": "no-such-session"}))
        calls["retrieval_search"] = result_json(
            await session.call_tool("retrieval_search", {"query": "boundary layer heat transfer", "k": 5})
        )
        calls["retrieval_search_dense"] = result_json(
            await session.call_tool("retrieval_search", {"query": "boundary layer", "retriever": "dense"})
        )
        calls["retrieval_evaluate"] = result_json(
            await session.call_tool("retrieval_evaluate", {"retriever": "bm25", "stem": True, "limit": 5})
        )
        calls["review_progress"] = result_json(await session.call_tool("review_progress", {"queue": "arith"}))
        calls["review_progress_all"] = result_json(await session.call_tool("review_progress", {}))
        calls["review_calibration"] = result_json(
            await session.call_tool("review_calibration", {"run": 1, "queue": "arith"})
        )
        calls["review_calibration_missing"] = result_json(
            await session.call_tool("review_calibration", {"run": 1, "queue": "no-such-queue"})
        )
        calls["review_disagreements"] = result_json(
            await session.call_tool("review_disagreements", {"run": 1, "queue": "arith", "limit": 5})
        )
        calls["sae_feature"] = result_json(await session.call_tool("sae_feature", {"sae": 1, "feature": 3}))
        calls["sae_feature_smollm2"] = result_json(await session.call_tool("sae_feature", {"sae": 2, "feature": 0}))
        calls["sae_feature_missing"] = result_json(await session.call_tool("sae_feature", {"sae": 1, "feature": 9999}))
        calls["sae_features_of_text"] = result_json(
            await session.call_tool("sae_features_of_text", {"sae": 1, "text": "boundary layer heat transfer"})
        )
        calls["profile_breakdown"] = result_json(await session.call_tool("profile_breakdown", {"profile": "1", "top": 3}))
        calls["profile_breakdown_missing"] = result_json(
            await session.call_tool("profile_breakdown", {"profile": "no-such-profile"})
        )
        calls["roofline_kernels"] = result_json(
            await session.call_tool("roofline_kernels", {"profile": "H100", "limit": 2})
        )
        report["calls"] = calls
        templates = (await session.list_resource_templates()).resource_templates
        report["resource_templates"] = sorted(t.uri_template for t in templates)
        resources = {}
        for name, uri in [("trace", f"loupe://trace/{first}"), ("eval", "loupe://eval/1"), ("feature", "loupe://feature/1/3")]:
            contents = (await session.read_resource(uri)).contents
            resources[name] = {"uri": str(contents[0].uri), "mime": contents[0].mime_type, "json": json.loads(contents[0].text)}
        report["resources"] = resources
        prompts = (await session.list_prompts()).prompts
        report["prompts"] = {p.name: [a.name for a in (p.arguments or [])] for p in prompts}
        triage = await session.get_prompt("triage_failed_answers", {"run": "1"})
        regression = await session.get_prompt("explain_regression", {"a": "2", "b": "3"})
        report["prompt_texts"] = {
            "triage": triage.messages[0].content.text,
            "regression": regression.messages[0].content.text,
        }
        report["resource_errors"] = {
            "missing_trace": await protocol_error_of(session.read_resource("loupe://trace/999999")),
            "bad_uri": await protocol_error_of(session.read_resource("loupe://nothing/1")),
            "missing_run": await protocol_error_of(session.get_prompt("triage_failed_answers", {"run": "99"})),
            "bad_argument": await protocol_error_of(session.get_prompt("explain_regression", {"a": "x", "b": "3"})),
        }
        report["errors"] = {
            "unknown_tool": await protocol_error(session, "no_such_tool", {}),
            "wrong_type": await protocol_error(session, "trace_show", {"id": "three"}),
            "missing": await protocol_error(session, "eval_show", {}),
            "unknown_argument": await protocol_error(session, "traces_list", {"limt": 3}),
        }
        report["alive_after_errors"] = result_json(await session.call_tool("workspace_info", {}))["structured"]
    return report


async def triage(argv):
    """A transcript of an agent triaging the failed answers of the demo's Inspect run."""
    async with connect(argv) as session:
        await session.initialize()
        steps = [
            ("workspace_info", {}),
            ("evals_list", {}),
            ("eval_show", {"id": 1, "failed_only": True}),
        ]
        for name, arguments in steps:
            result = await session.call_tool(name, arguments)
            print(f">>> {name} {json.dumps(arguments)}")
            print(result_json(result)["text"])
            print()
            if name == "eval_show":
                for answer in result.structured_content["answers"]:
                    if answer["trace"] is not None:
                        shown = await session.call_tool("trace_show", {"id": answer["trace"], "max_steps": 5})
                        print(f">>> trace_show {json.dumps({'id': answer['trace'], 'max_steps': 5})}")
                        print(result_json(shown)["text"])
                        print()


async def cancel(argv):
    """One session that gives up on a long call after 50 ms (the SDK then sends notifications/cancelled)
    and goes on: the server must answer its next calls."""
    report = {"cancelled": False}
    async with connect(argv) as session:
        await session.initialize()
        try:
            await asyncio.wait_for(session.call_tool("retrieval_evaluate", {"limit": 1}), timeout=0.05)
        except (asyncio.TimeoutError, TimeoutError):
            report["cancelled"] = True
        report["after"] = result_json(await session.call_tool("workspace_info", {}))
        report["evaluate_after"] = result_json(await session.call_tool("retrieval_evaluate", {"limit": 1}))
    return report


async def drop(argv):
    """A client that gives up on a long call (retrieval_evaluate over every judged query) after 50 ms
    and closes its connection, then a new client whose calls must be answered."""
    report = {"dropped": False}
    try:
        async with connect(argv) as session:
            await session.initialize()
            try:
                await asyncio.wait_for(session.call_tool("retrieval_evaluate", {"limit": 1}), timeout=0.05)
            except (asyncio.TimeoutError, TimeoutError):
                report["dropped"] = True
    except BaseException as error:  # the transport may complain that its request was cut off
        report["closing_error"] = type(error).__name__
    async with connect(argv) as session:
        await session.initialize()
        report["after"] = result_json(await session.call_tool("workspace_info", {}))
        report["evaluate_after"] = result_json(await session.call_tool("retrieval_evaluate", {"limit": 1}))
    return report


async def tokens(argv):
    """trace_tokens on one trace: in one call, then page by page (LIMIT tokens each, following
    next_cursor), then each span it listed asked for by its id."""
    trace, limit = int(argv[-2]), int(argv[-1])
    report = {}
    async with connect(argv[:-2]) as session:
        await session.initialize()
        tools = {t.name: t for t in (await session.list_tools()).tools}
        report["read_only"] = tools["trace_tokens"].annotations.read_only_hint
        whole = result_json(await session.call_tool("trace_tokens", {"id": trace, "limit": 2000}))
        report["whole"] = whole
        pages, arguments = [], {"id": trace, "limit": limit}
        while len(pages) < 1000:
            page = result_json(await session.call_tool("trace_tokens", arguments))
            pages.append(page["structured"])
            if page["structured"]["next_cursor"] is None:
                break
            arguments["cursor"] = page["structured"]["next_cursor"]
        report["pages"] = pages
        report["by_span"] = {
            span["span"]: result_json(await session.call_tool("trace_tokens", {"id": trace, "span": span["span"]}))[
                "structured"
            ]
            for span in (whole["structured"] or {}).get("spans", [])
        }
        report["missing_span"] = result_json(await session.call_tool("trace_tokens", {"id": trace, "span": "nope"}))
        report["bad_limit"] = await protocol_error(session, "trace_tokens", {"id": trace, "limit": 0})
    return report


async def list_tools(argv):
    """Each tool as a host shows it: name, read-only or not, title."""
    async with connect(argv) as session:
        await session.initialize()
        for tool in (await session.list_tools()).tools:
            kind = "read-only" if tool.annotations.read_only_hint else "writes"
            print(f"{tool.name:22} {kind:9}  {tool.title}")


async def call(argv):
    """One tool call: the text an agent reads, then (unless `text` follows the arguments) the
    structured result (JSON); a protocol error prints its JSON-RPC code and message."""
    split = argv.index("--")
    name, arguments = argv[split + 1], json.loads(argv[split + 2])
    text_only = argv[split + 3 :] == ["text"]
    async with connect(argv[:split]) as session:
        await session.initialize()
        try:
            result = await session.call_tool(name, arguments)
        except MCPError as error:
            print(f"JSON-RPC error {error.error.code}: {error.error.message}")
            return
        print(f"isError: {str(bool(result.is_error)).lower()}")
        print(result_json(result)["text"])
        if result.structured_content is not None and not text_only:
            print("structured:", json.dumps(result.structured_content, indent=1, sort_keys=True))


if __name__ == "__main__":
    if sys.argv[1] == "list":
        asyncio.run(list_tools(sys.argv[2:]))
    elif sys.argv[1] == "call":
        asyncio.run(call(sys.argv[2:]))
    elif sys.argv[1] == "tokens":
        print(json.dumps(asyncio.run(tokens(sys.argv[2:])), indent=1, sort_keys=True))
    elif sys.argv[1] == "triage":
        asyncio.run(triage(sys.argv[2:]))
    elif sys.argv[1] == "cancel":
        print(json.dumps(asyncio.run(cancel(sys.argv[2:])), indent=1, sort_keys=True))
    elif sys.argv[1] == "drop":
        print(json.dumps(asyncio.run(drop(sys.argv[2:])), indent=1, sort_keys=True))
    else:
        print(json.dumps(asyncio.run(exercise(sys.argv[1:])), indent=1, sort_keys=True))
