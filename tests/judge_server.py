"""A scripted Messages API on 127.0.0.1 for the LLM judge tests (stdlib only).

Each POST takes the next scripted answer: ``{"text": ..., "delay": s, "status": n}``.
The raw request bodies are kept, so a test can check ``context_digest`` against the
exact bytes the judge received.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class JudgeServer:
    def __init__(self) -> None:
        self.answers: list[dict[str, Any]] = []
        self.bodies: list[bytes] = []
        self.headers: list[dict[str, str]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                server.bodies.append(body)
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                answer = server.answers.pop(0) if server.answers else {"text": "no answer"}
                time.sleep(float(answer.get("delay", 0)))
                status = int(answer.get("status", 200))
                reply = json.dumps({"id": "msg_judge", "type": "message", "role": "assistant",
                                    "model": "judge", "stop_reason": "end_turn",
                                    "content": [{"type": "text", "text": answer["text"]}],
                                    "usage": {"input_tokens": 1, "output_tokens": 1}}).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(reply)))
                    self.end_headers()
                    self.wfile.write(reply)
                except OSError:
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def verdict(self, choice: str, reason: str, **extra: Any) -> None:
        self.answers.append({"text": json.dumps({"verdict": choice, "reason": reason}), **extra})


@contextmanager
def judge_server() -> Iterator[JudgeServer]:
    server = JudgeServer()
    server.thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
