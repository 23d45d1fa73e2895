"""A chat-completions server for `team-evals.sh`: every POST waits LATENCY seconds, then answers
"Paris" in OpenAI's JSON, the way a hosted model's latency dominates an eval run. The standard
library's threading HTTP server, one thread a request, on a free loopback port it prints."""
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

latency = float(sys.argv[1]) if len(sys.argv) > 1 else 0.2
body = json.dumps({
    "id": "chatcmpl-bench", "object": "chat.completion", "created": 1763800000, "model": "bench-model",
    "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Paris"}}],
    "usage": {"prompt_tokens": 20, "completion_tokens": 1, "total_tokens": 21},
}).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # The headers and the body leave as two writes: with Nagle's algorithm the body waits for the
    # client's delayed ACK of the headers, 40 ms an answer on a kept-alive connection.
    disable_nagle_algorithm = True

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", "0")))
        time.sleep(latency)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256

    def handle_error(self, request, client_address):
        pass  # a worker killed mid-request (the benches and tests do that) is not news


server = Server(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
