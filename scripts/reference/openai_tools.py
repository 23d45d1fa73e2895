"""Drives `loupe serve --openai-port`'s tool calling with the official `openai` Python client and
prints a JSON report for OpenAIPeerTests: a calculator and a weather tool offered under each
tool_choice, every call checked with `jsonschema` against its tool's parameters, the same request
streamed (the deltas joined as a client joins them), a call cut by max_tokens (streamed and not), a
tool message continuing the conversation, and the errors a client can cause with tools.

Usage: openai_tools.py BASE_URL MODEL
"""

import json
import sys

import openai
from jsonschema import Draft202012Validator

base_url, model = sys.argv[1], sys.argv[2]
client = openai.OpenAI(base_url=base_url, api_key="unused-on-loopback", max_retries=0, timeout=120)

calculator = {"type": "object", "properties": {"expression": {"type": "string", "maxLength": 40}},
              "required": ["expression"], "additionalProperties": False}
weather = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 30},
                                            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
           "required": ["city", "unit"], "additionalProperties": False}
tools = [
    {"type": "function", "function": {"name": "calculator", "description": "Evaluates an arithmetic expression.",
                                      "parameters": calculator}},
    {"type": "function", "function": {"name": "get_weather", "description": "The weather in a city now.",
                                      "parameters": weather}},
]
schemas = {"calculator": calculator, "get_weather": weather}
question = [{"role": "user", "content": "What is 12 times 7?"}]
report = {}


def calls(message):
    """The calls of a reply, each with whether its arguments parse and keep to its tool's schema."""
    listed = []
    for call in message.tool_calls or []:
        entry = {"id": call.id, "type": call.type, "name": call.function.name, "arguments": call.function.arguments}
        try:
            arguments = json.loads(call.function.arguments)
            errors = [e.message for e in Draft202012Validator(schemas[call.function.name]).iter_errors(arguments)]
            entry["valid"] = not errors
            entry["errors"] = errors
        except (ValueError, KeyError) as e:
            entry["valid"] = False
            entry["errors"] = [repr(e)]
        listed.append(entry)
    return listed


def answer(**fields):
    fields.setdefault("max_tokens", 60)
    response = client.chat.completions.create(model=model, messages=question, tools=tools, temperature=0,
                                              **fields)
    choice = response.choices[0]
    return response, {"content": choice.message.content, "finish_reason": choice.finish_reason,
                      "calls": calls(choice.message)}


named = {"type": "function", "function": {"name": "get_weather"}}
required_response, report["required"] = answer(tool_choice="required")
named_response, report["named"] = answer(tool_choice=named)
_, report["none"] = answer(tool_choice="none")
_, report["auto"] = answer()

def stream(**fields):
    """A streamed answer's calls (deltas joined by index, as clients join them) and finish reasons."""
    streamed = {}
    finish_reasons = []
    for chunk in client.chat.completions.create(model=model, messages=question, tools=tools, temperature=0,
                                                stream=True, **fields):
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        if choice.finish_reason:
            finish_reasons.append(choice.finish_reason)
        for delta in choice.delta.tool_calls or []:
            entry = streamed.setdefault(delta.index, {"id": None, "name": "", "arguments": "", "pieces": 0})
            if delta.id:
                entry["id"] = delta.id
            if delta.function and delta.function.name:
                entry["name"] += delta.function.name
            if delta.function and delta.function.arguments:
                entry["arguments"] += delta.function.arguments
                entry["pieces"] += 1
    return {"calls": [streamed[i] for i in sorted(streamed)], "finish_reasons": finish_reasons}


def parses(text):
    try:
        json.loads(text)
        return True
    except ValueError:
        return False


# The same required request streamed.
report["stream"] = stream(max_tokens=60, tool_choice="required")

# The named call cut by max_tokens inside its arguments: the largest limit under the whole
# answer's tokens whose streamed arguments do not parse, then the same request not streamed.
whole_tokens = named_response.usage.completion_tokens
cut = {"requests": 0, "whole_tokens": whole_tokens}
for limit in range(whole_tokens - 1, 1, -1):
    cut["requests"] += 1
    streamed_cut = stream(max_tokens=limit, tool_choice=named)
    arguments = streamed_cut["calls"][0]["arguments"] if streamed_cut["calls"] else ""
    if arguments and not parses(arguments):
        _, cut["answer"] = answer(tool_choice=named, max_tokens=limit)
        cut["requests"] += 1
        cut["max_tokens"] = limit
        cut["stream"] = streamed_cut
        break
report["cut"] = cut

# The conversation goes on: the assistant's calls, then each answered by a tool message.
assistant = required_response.choices[0].message
follow_up = question + [assistant.model_dump(exclude_none=True)] + [
    {"role": "tool", "tool_call_id": call.id, "content": "84"} for call in assistant.tool_calls or []]
continued = client.chat.completions.create(model=model, messages=follow_up, tools=tools, temperature=0,
                                           max_tokens=30)
report["continued"] = {"content": continued.choices[0].message.content,
                       "finish_reason": continued.choices[0].finish_reason,
                       "calls": calls(continued.choices[0].message),
                       "prompt_tokens": continued.usage.prompt_tokens,
                       "first_prompt_tokens": required_response.usage.prompt_tokens}


def error(call):
    try:
        call()
    except openai.APIStatusError as e:
        body = e.body if isinstance(e.body, dict) else {}
        return {"class": type(e).__name__, "status": e.status_code, "param": body.get("param")}
    return None


report["errors"] = {
    "unanswered_tool": error(lambda: client.chat.completions.create(
        model=model, messages=question + [{"role": "tool", "tool_call_id": "call_nowhere", "content": "1"}],
        tools=tools)),
    "unknown_choice": error(lambda: client.chat.completions.create(
        model=model, messages=question, tools=tools,
        tool_choice={"type": "function", "function": {"name": "launch"}})),
    "choice_without_tools": error(lambda: client.chat.completions.create(
        model=model, messages=question, tool_choice="required")),
    "with_response_format": error(lambda: client.chat.completions.create(
        model=model, messages=question, tools=tools, response_format={"type": "json_object"})),
    "bad_name": error(lambda: client.chat.completions.create(
        model=model, messages=question,
        tools=[{"type": "function", "function": {"name": "no spaces", "parameters": calculator}}])),
}

print(json.dumps(report))
