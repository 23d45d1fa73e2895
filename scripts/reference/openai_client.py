"""Drives `loupe serve --openai-port` with the official `openai` Python client (PyPI) and prints
a JSON report for OpenAIPeerTests: chat, completions, streaming with usage, logprobs, seeds,
stop strings, n, a stream the client abandons, and the errors a client can cause.

Usage: openai_client.py BASE_URL MODEL
"""

import json
import sys

import openai

base_url, model = sys.argv[1], sys.argv[2]
client = openai.OpenAI(base_url=base_url, api_key="unused-on-loopback", max_retries=0, timeout=120)
question = [{"role": "user", "content": "Name three colors."}]
report = {}

report["models"] = [m.id for m in client.models.list().data]

greedy = client.chat.completions.create(model=model, messages=question, temperature=0, max_tokens=24)
report["chat"] = {
    "text": greedy.choices[0].message.content,
    "finish_reason": greedy.choices[0].finish_reason,
    "usage": greedy.usage.model_dump(),
    "id": greedy.id,
}

completion = client.completions.create(model=model, prompt="The capital of France is", temperature=0, max_tokens=12,
                                       logprobs=2)
choice = completion.choices[0]
report["completion"] = {
    "text": choice.text,
    "finish_reason": choice.finish_reason,
    "tokens": choice.logprobs.tokens,
    "token_logprobs": choice.logprobs.token_logprobs,
    "top_logprobs": choice.logprobs.top_logprobs,
    "usage": completion.usage.model_dump(),
}

chunks = list(client.chat.completions.create(model=model, messages=question, temperature=0, max_tokens=24,
                                             stream=True, stream_options={"include_usage": True}))
report["stream"] = {
    "text": "".join(c.choices[0].delta.content or "" for c in chunks if c.choices),
    "finish_reasons": [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason],
    "last_usage": chunks[-1].usage.model_dump() if chunks[-1].usage else None,
    "last_choices": len(chunks[-1].choices),
}

with_logprobs = client.chat.completions.create(model=model, messages=question, temperature=0, max_tokens=8,
                                               logprobs=True, top_logprobs=3)
report["logprobs"] = [
    {"token": t.token, "logprob": t.logprob, "bytes": t.bytes,
     "top": [{"token": a.token, "logprob": a.logprob} for a in t.top_logprobs]}
    for t in with_logprobs.choices[0].logprobs.content
]


def sampled(seed):
    answer = client.chat.completions.create(model=model, messages=question, temperature=1.0, top_p=0.95, seed=seed,
                                            max_tokens=24)
    return answer.choices[0].message.content


report["seeds"] = {"7": sampled(7), "7_again": sampled(7), "8": sampled(8)}

stop_word = report["chat"]["text"].split()[2]
stopped = client.chat.completions.create(model=model, messages=question, temperature=0, max_tokens=24,
                                         stop=[stop_word])
report["stop"] = {"word": stop_word, "text": stopped.choices[0].message.content,
                  "finish_reason": stopped.choices[0].finish_reason}

several = client.chat.completions.create(model=model, messages=question, temperature=1.0, seed=3, n=2, max_tokens=8)
report["n"] = [c.message.content for c in several.choices]

# Constrained answers: any JSON object, then one a schema allows.
as_object = client.chat.completions.create(
    model=model, messages=[{"role": "user", "content": "Reply with a JSON object whose key ok is true."}], temperature=0, max_tokens=200,
    response_format={"type": "json_object"})
schema = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 20}, "legs": {"type": "integer"}},
          "required": ["name", "legs"], "additionalProperties": False}
as_schema = client.chat.completions.create(
    model=model, messages=[{"role": "user", "content": "Give an animal's name and its number of legs."}],
    temperature=0, max_tokens=200,
    response_format={"type": "json_schema", "json_schema": {"name": "animal", "schema": schema}})
report["json"] = {
    "object_text": as_object.choices[0].message.content,
    "object_finish": as_object.choices[0].finish_reason,
    "schema_text": as_schema.choices[0].message.content,
    "schema_finish": as_schema.choices[0].finish_reason,
}

# A stream the client leaves after three chunks: the server cancels its sequence.
abandoned = client.chat.completions.create(model=model, messages=[{"role": "user", "content": "Tell a long story."}],
                                           temperature=0, max_tokens=2000, stream=True, user="abandoner")
for index, _ in enumerate(abandoned):
    if index == 2:
        break
abandoned.close()
after = client.chat.completions.create(model=model, messages=question, temperature=0, max_tokens=24)
report["after_abandon"] = after.choices[0].message.content


def error(call):
    try:
        call()
    except openai.APIStatusError as e:
        body = e.body if isinstance(e.body, dict) else {}
        return {"class": type(e).__name__, "status": e.status_code, "param": body.get("param"),
                "type": body.get("type"), "message": body.get("message"),
                "retry_after": e.response.headers.get("retry-after")}
    return None


report["errors"] = {
    "no_messages": error(lambda: client.chat.completions.create(model=model, messages=[])),
    "bad_temperature": error(lambda: client.chat.completions.create(model=model, messages=question, temperature=7)),
    "unknown_model": error(lambda: client.chat.completions.create(model="gpt-9", messages=question)),
    "tools": error(lambda: client.chat.completions.create(
        model=model, messages=question,
        tools=[{"type": "function", "function": {"name": "f", "parameters": {"type": "object",
                                                                            "patternProperties": {}}}}])),
    "bad_schema": error(lambda: client.chat.completions.create(
        model=model, messages=question,
        response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object",
                                                                                       "patternProperties": {}}}})),
    "top_logprobs_alone": error(lambda: client.chat.completions.create(model=model, messages=question,
                                                                        top_logprobs=2)),
}

# The queue holds two requests (--openai-queue 2): two streams held open fill it, a third is 429.
held = [client.chat.completions.create(model=model, messages=question, temperature=0, max_tokens=400, stream=True)
        for _ in range(2)]
first_chunk = next(iter(held[0]))
report["errors"]["queue_full"] = error(lambda: client.chat.completions.create(model=model, messages=question))
for stream in held:
    stream.close()

print(json.dumps(report))
