"""What every scripted model server of this folder does besides its API: the command line
(``--port 0 --port-file P --pid-file F --script S --log L --max-lifetime N``), a server on
127.0.0.1 only that stops by itself, the port file written once the socket listens, and one
JSON reply. Standard library only: the mocks run as plain scripts."""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

LOCK = threading.Lock()


def log_request(state: dict[str, Any], entry: dict[str, Any]) -> None:
    """One line of the request log (``state["log"]``), if there is one."""
    with LOCK:
        if state["log"]:
            with open(state["log"], "a", encoding="utf-8") as fh:
                fh.write(json.dumps(entry, ensure_ascii=False) + "\n")


def next_turn(state: dict[str, Any]) -> tuple[int, dict[str, Any] | None]:
    """The next turn of the script (its index, or None once the script is exhausted)."""
    with LOCK:
        i = state["cursor"]
        script = state["script"]
        if i < len(script):
            state["cursor"] = i + 1
            return i, script[i]
        return i, None


def read_body(handler: BaseHTTPRequestHandler) -> tuple[str, Any]:
    """The request's path (no query) and its JSON body (``{"_unparsed": text}`` when it is
    not JSON)."""
    size = int(handler.headers.get("Content-Length") or 0)
    raw = handler.rfile.read(size) if size else b""
    try:
        body = json.loads(raw or b"{}")
    except ValueError:
        body = {"_unparsed": raw.decode("utf-8", "replace")}
    return handler.path.split("?", 1)[0], body


def send_json(handler: BaseHTTPRequestHandler, code: int, obj: Any) -> None:
    data = json.dumps(obj).encode()
    handler.send_response(code)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def send_events(handler: BaseHTTPRequestHandler, frames: list[bytes]) -> None:
    """A streamed (server-sent events) reply of ``frames``, then the connection closed."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Connection", "close")
    handler.end_headers()
    for frame in frames:
        handler.wfile.write(frame)
    handler.wfile.flush()
    handler.close_connection = True


class ScriptedHandler(BaseHTTPRequestHandler):
    """What every mock answers alike: a GET (``LISTING``), a new script (``POST
    /_mock/script``), no request logged on stderr; any other POST is the mock's own API
    (:meth:`answer`). ``STATE`` is the mock's state (``script``, ``cursor``, ``log``)."""

    protocol_version = "HTTP/1.1"
    STATE: ClassVar[dict[str, Any]] = {}
    LISTING: ClassVar[dict[str, Any]] = {"models": []}

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        log_request(self.STATE, {"method": "GET", "path": self.path, "kind": "other"})
        send_json(self, 200, self.LISTING)

    def do_POST(self) -> None:
        path, body = read_body(self)
        if path == "/_mock/script":
            with LOCK:
                self.STATE["script"] = body if isinstance(body, list) else []
                self.STATE["cursor"] = 0
            send_json(self, 200, {"ok": True})
            return
        self.answer(path, body)

    def answer(self, path: str, body: Any) -> None:
        raise NotImplementedError


def serve(handler: type[BaseHTTPRequestHandler], state: dict[str, Any],
          argv: list[str] | None, description: str) -> int:
    """Parse the command line into ``state`` (``script``, ``log``) and serve until the
    lifetime ends."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--pid-file")
    ap.add_argument("--script")
    ap.add_argument("--log")
    ap.add_argument("--max-lifetime", type=float, default=900.0)
    a = ap.parse_args(argv)
    if a.script:
        with open(a.script, encoding="utf-8") as fh:
            state["script"] = json.load(fh)
    state["log"] = a.log
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), handler)
    srv.daemon_threads = True
    if a.pid_file:
        with open(a.pid_file, "w") as fh:
            fh.write(str(os.getpid()))
    timer = threading.Timer(a.max_lifetime, srv.shutdown)
    timer.daemon = True
    timer.start()
    with open(a.port_file + ".tmp", "w") as fh:
        fh.write(str(srv.server_address[1]))
    os.replace(a.port_file + ".tmp", a.port_file)
    print(f"{description} on 127.0.0.1:{srv.server_address[1]}", file=sys.stderr, flush=True)
    srv.serve_forever()
    return 0
