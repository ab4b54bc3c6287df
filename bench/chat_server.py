"""A local OpenAI-compatible chat server for client benchmarks: every request answered at
once with one fixed completion and its usage, over HTTP/1.1 keep-alive.

    .venv/bin/python bench/chat_server.py [--port 0] [--answer 'COUNT(1)']

It prints ``listening on http://127.0.0.1:PORT/v1`` when ready. ``GET /stats`` returns the
TCP connections accepted and the requests answered so far (what a client benchmark reads
to see whether connections were reused); ``POST /stats/reset`` zeroes them. Runs until
killed. The server is a separate process so its CPU is not charged to the client.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def serve(port: int, answer: str) -> None:
    lock = threading.Lock()
    stats = {"connections": 0, "requests": 0, "request_bytes": 0}
    reply = {"id": "bench", "object": "chat.completion", "created": 1700000000, "model": "bench-model",
             "system_fingerprint": "fp_bench",
             "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
             "usage": {"prompt_tokens": 900, "completion_tokens": 4, "total_tokens": 904}}
    payload = json.dumps(reply).encode()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            with lock:
                stats["connections"] += 1

        def log_message(self, *args: object) -> None:
            pass

        def _send(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - http.server API
            with lock:
                body = json.dumps(stats).encode()
            self._send(200 if self.path == "/stats" else 404, body)

        def do_POST(self) -> None:  # noqa: N802 - http.server API
            length = int(self.headers.get("Content-Length", "0"))
            self.rfile.read(length)  # read, not parsed: the server does as little as it can
            if self.path == "/stats/reset":
                with lock:
                    stats.update(dict.fromkeys(stats, 0))
                self._send(200, b"{}")
                return
            with lock:
                stats["requests"] += 1
                stats["request_bytes"] += length
            self._send(200 if self.path.endswith("/chat/completions") else 404, payload)

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    server.request_queue_size = 128
    print(f"listening on http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    server.serve_forever()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="0: any free port")
    parser.add_argument("--answer", default="COUNT(1)")
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        serve(args.port, args.answer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
