"""A client that sends a request's headers and then trickles its body, one byte a second.

Usage: openai_slow_body.py BASE_URL MODEL. `loupe serve` must answer 408 once its body deadline
passes (not wait for the body), and then answer an ordinary request: the slow client held no
model slot. Prints one JSON object: the slow request's status line, the bytes trickled before
it came, and the next request's status and whether it carried a choice.
"""

import json
import socket
import sys
import urllib.request
from urllib.parse import urlparse

base, model = sys.argv[1], sys.argv[2]
url = urlparse(base)
body = json.dumps({"model": model, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4}).encode()
# Far more bytes than are ever sent: the body is never complete.
head = (
    f"POST {url.path}/chat/completions HTTP/1.1\r\nHost: {url.netloc}\r\n"
    f"Content-Type: application/json\r\nContent-Length: {len(body) + 1000}\r\n\r\n"
).encode()
slow = socket.create_connection((url.hostname, url.port), timeout=1)
slow.sendall(head)
reply = b""
trickled = 0
for _ in range(120):  # at most two minutes: well past any deadline the server should keep
    try:
        reply += slow.recv(4096)
        if b"\r\n" in reply:
            break
        if not reply:
            break  # closed without an answer
    except socket.timeout:
        pass
    try:
        slow.sendall(body[trickled % len(body) : trickled % len(body) + 1])
        trickled += 1
    except OSError:
        break
slow.close()
request = urllib.request.Request(
    base + "/chat/completions",
    data=json.dumps({"model": model, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4,
                     "temperature": 0}).encode(),
    headers={"Content-Type": "application/json"},
)
with urllib.request.urlopen(request, timeout=120) as response:
    answer = json.loads(response.read())
    print(json.dumps({
        "slow_status": reply.split(b"\r\n", 1)[0].decode(errors="replace"),
        "slow_body": reply.split(b"\r\n\r\n", 1)[-1].decode(errors="replace"),
        "trickled": trickled,
        "next_status": response.status,
        "next_choices": len(answer.get("choices", [])),
    }))
