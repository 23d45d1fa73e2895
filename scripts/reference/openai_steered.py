"""One greedy chat answer through the official `openai` client, for a steered `loupe serve`.

Usage: openai_steered.py BASE_URL MODEL PROMPT MAX_TOKENS. Prints one JSON object: the answer's
text, its finish reason and the usage the client parsed.
"""

import json
import sys

from openai import OpenAI

base, model, prompt, max_tokens = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
client = OpenAI(base_url=base, api_key="unused-on-loopback")
reply = client.chat.completions.create(
    model=model, messages=[{"role": "user", "content": prompt}], max_tokens=max_tokens, temperature=0
)
choice = reply.choices[0]
print(
    json.dumps(
        {
            "text": choice.message.content,
            "finish_reason": choice.finish_reason,
            "usage": {"prompt_tokens": reply.usage.prompt_tokens, "completion_tokens": reply.usage.completion_tokens},
        }
    )
)
