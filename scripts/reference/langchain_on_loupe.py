"""LangChain's OpenAI chat model pointed at `loupe serve --openai-port`, for LangChainOnLoupeTests:
`langchain_openai.ChatOpenAI(base_url=BASE_URL)` with nothing else changed, as a LangChain user
would write it. It asks for a chat answer (greedy), the same answer streamed, one with
log-probabilities, and a tool call through `bind_tools` (a weather tool, tool_choice "required"),
whose arguments are checked with `jsonschema` against the tool's parameters, not by Loupe.

Prints a JSON report of what LangChain parsed: each answer's text, finish reason and token usage,
the streamed text, the log-probabilities, and the tool call's name, arguments and id.

Usage: langchain_on_loupe.py BASE_URL MODEL
"""

import json
import sys

from jsonschema import Draft202012Validator
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI

base_url, model = sys.argv[1], sys.argv[2]
chat = ChatOpenAI(base_url=base_url, api_key="unused-on-loopback", model=model, temperature=0, max_tokens=24,
                  max_retries=0, timeout=120)
question = [HumanMessage("Name three colors.")]
report = {}


def described(message):
    """What LangChain made of a reply: its text, finish reason and usage."""
    metadata = message.response_metadata
    usage = message.usage_metadata or {}
    return {"text": message.content, "finish_reason": metadata.get("finish_reason"),
            "model_name": metadata.get("model_name"),
            "usage": {"input_tokens": usage.get("input_tokens"), "output_tokens": usage.get("output_tokens")}}


report["chat"] = described(chat.invoke(question))
report["stream"] = {"text": "".join(chunk.content for chunk in chat.stream(question))}

with_logprobs = chat.bind(logprobs=True, top_logprobs=2, max_tokens=4).invoke(question)
report["logprobs"] = [{"token": entry["token"], "logprob": entry["logprob"],
                       "top": [top["token"] for top in entry["top_logprobs"]]}
                      for entry in with_logprobs.response_metadata["logprobs"]["content"]]

weather = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 30},
                                            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
           "required": ["city", "unit"], "additionalProperties": False}
tool = {"type": "function", "function": {"name": "get_weather", "description": "The weather in a city now.",
                                         "parameters": weather}}
caller = ChatOpenAI(base_url=base_url, api_key="unused-on-loopback", model=model, temperature=0, max_tokens=60,
                    max_retries=0, timeout=120).bind_tools([tool], tool_choice="required")
called = caller.invoke([HumanMessage("Is it cold in Oslo?")])
report["tool"] = described(called)
report["tool"]["calls"] = [{"name": call["name"], "args": call["args"], "id": call["id"],
                            "errors": [e.message for e in Draft202012Validator(weather).iter_errors(call["args"])]}
                           for call in called.tool_calls]
report["tool"]["invalid_calls"] = len(called.invalid_tool_calls)
report["requests"] = 4

print(json.dumps(report))
