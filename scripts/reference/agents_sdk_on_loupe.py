"""The OpenAI Agents SDK pointed at Loupe twice at once, for AgentsSDKOnLoupeTests: its model is
`loupe serve --openai-port`'s endpoint (the SDK's OpenAIChatCompletionsModel with BASE_URL), and its
own trace goes to the same server's OTLP receiver (OpenInference's processor for the SDK, which
replaces the SDK's exporter to OpenAI, then the OpenTelemetry SDK's OTLP/HTTP exporter to ENDPOINT).

One small agent with one function tool (`add`): the first model call must call a tool
(tool_choice "required"; the SDK resets it to "auto" once a tool ran, so the run can end), at most
three turns, a few dozen tokens an answer. The 135M model's answer may well be wrong: what the run
shows is the plumbing.

How the two sides meet: neither the SDK nor the `openai` client sends a W3C `traceparent` header.
OpenInference's processor makes each SDK span the current OpenTelemetry context while it is open
(it attaches it on span start), so the script does what opentelemetry-instrumentation-httpx does
for any traced client: an httpx request hook injects the current context with OpenTelemetry's own
propagator. Loupe's endpoint records the request under that trace, as a child of the SDK's
generation span.

Prints a JSON report: the answer (or why the run stopped), each request the client made with the
traceparent it carried (and whether the SDK had set one itself), and every span exported with its
ids; exits 1 when an export failed.

Usage: agents_sdk_on_loupe.py BASE_URL MODEL ENDPOINT
"""

import asyncio
import json
import sys

import httpx
from agents import (Agent, MaxTurnsExceeded, ModelSettings, OpenAIChatCompletionsModel, RunConfig, Runner,
                    function_tool)
from openai import AsyncOpenAI
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from opentelemetry import propagate
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

base_url, model_name, endpoint = sys.argv[1], sys.argv[2], sys.argv[3]


class Recording(SpanExporter):
    """The OTLP exporter, noting each span it sent (ids, name, OpenInference kind) and what failed."""

    def __init__(self, inner):
        self.inner, self.spans, self.failed = inner, [], 0

    def export(self, spans):
        result = self.inner.export(spans)
        if result != SpanExportResult.SUCCESS:
            self.failed += len(spans)
            return result
        for span in spans:
            self.spans.append({
                "trace_id": format(span.context.trace_id, "032x"),
                "span_id": format(span.context.span_id, "016x"),
                "parent_id": format(span.parent.span_id, "016x") if span.parent else None,
                "name": span.name,
                "kind": span.attributes.get("openinference.span.kind"),
            })
        return result

    def shutdown(self):
        self.inner.shutdown()


recording = Recording(OTLPSpanExporter(endpoint=endpoint))
provider = TracerProvider(resource=Resource.create({"service.name": "agents-sdk-on-loupe"}))
provider.add_span_processor(SimpleSpanProcessor(recording))
OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)

requests = []


async def carry_trace_context(request: httpx.Request):
    """W3C traceparent from the current OpenTelemetry context (the SDK span that is open)."""
    had = "traceparent" in request.headers
    propagate.inject(request.headers)
    requests.append({"path": request.url.path, "sdk_sent_traceparent": had,
                     "traceparent": request.headers.get("traceparent")})


@function_tool
def add(a: int, b: int) -> int:
    """Adds two whole numbers."""
    return a + b


client = AsyncOpenAI(base_url=base_url, api_key="unused-on-loopback", max_retries=0, timeout=120,
                     http_client=httpx.AsyncClient(event_hooks={"request": [carry_trace_context]}, timeout=120))
agent = Agent(
    name="Adder", instructions="Add numbers with the add tool, then say the sum.", tools=[add],
    model=OpenAIChatCompletionsModel(model=model_name, openai_client=client),
    model_settings=ModelSettings(tool_choice="required", max_tokens=48, temperature=0))


async def main():
    report = {}
    try:
        result = await Runner.run(agent, "What is 17 plus 25?", max_turns=3,
                                  run_config=RunConfig(workflow_name="Adder on Loupe"))
        report["final_output"] = str(result.final_output)
    except MaxTurnsExceeded as error:
        report["stopped"] = f"MaxTurnsExceeded: {error}"
    return report


report = asyncio.run(main())
provider.force_flush()
provider.shutdown()
report["requests"] = requests
report["spans"] = recording.spans
report["failed"] = recording.failed
print(json.dumps(report, indent=1))
sys.exit(1 if recording.failed else 0)
