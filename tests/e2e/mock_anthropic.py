#!/usr/bin/env python3
"""A scripted Anthropic Messages API on 127.0.0.1, for driving the real Claude Code CLI.

Adapted from ``shared/tools/mock_anthropic.py`` (see ``shared/ref/real-client.md``), plus a
**judge queue** for smllm's LLM reviewer. Standard library only; it refuses any
non-loopback address.

    python mock_anthropic.py --port 0 --port-file P --pid-file F --max-lifetime 600 \\
        --script turns.json --log requests.jsonl

Requests are classified, in this order:

``judge``
    no ``tools`` and the ``system`` text contains :data:`JUDGE_MARKER`. Takes the next
    entry of the ``judge`` list: ``{"text": "..."}`` with optional ``"delay"`` (seconds
    before answering) and ``"status"`` (an HTTP error status, e.g. 500, answered with an
    Anthropic-style error body). When the queue is empty the answer is the text
    ``[mock: judge queue exhausted]`` (a verdict no strict parser accepts).
``main``
    a non-empty ``tools`` list (the agent loop). Takes the next turn of the script:
    ``{"text": ...}``, ``{"tool_use": {"name", "input"}}`` or ``{"content": [blocks]}``,
    with optional ``id``, ``stop_reason``, ``delay`` and ``status``. A block of
    ``content`` may carry ``"pause": seconds``: a streamed reply waits that long before
    the block starts (the block itself is sent without it). When the script is
    used up the answer is ``[mock: script exhausted]`` with ``end_turn``, so the CLI ends.
``side``
    anything else on ``/v1/messages`` (titles, bash-prefix checks): a short canned text.

Replies stream (SSE) when the request says ``stream: true``, else plain JSON.
Every request is appended to ``--log`` as one JSON line: ``method``, ``path``,
``headers`` (keys cut short), ``body``, ``kind``, ``stream``, ``reply``, ``index``.

Control endpoints:

* ``GET /_mock/state`` -> ``{"cursor", "turns", "judge_cursor", "judge", "requests"}``
* ``POST /_mock/script`` with ``[turns]`` or ``{"script": [turns], "judge": [entries]}``:
  replace what is given and reset its cursor.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

JUDGE_MARKER = "smllm-approval-judge"
LOOPBACK = ("127.0.0.1", "localhost", "::1")

LOCK = threading.Lock()
STATE: dict[str, Any] = {
    "script": [], "cursor": 0, "judge": [], "judge_cursor": 0, "requests": 0, "log": None,
}


def log_event(ev: dict[str, Any]) -> None:
    ev.setdefault("ts", time.time())
    line = json.dumps(ev, ensure_ascii=False)
    with LOCK:
        STATE["requests"] += 1
        if STATE["log"]:
            with open(STATE["log"], "a", encoding="utf-8") as fh:
                fh.write(line + "\n")


def system_text(body: dict[str, Any]) -> str:
    sysp = body.get("system")
    if isinstance(sysp, str):
        return sysp
    if isinstance(sysp, list):
        return "\n".join(str(b.get("text", "")) for b in sysp if isinstance(b, dict))
    return ""


def request_text(body: dict[str, Any]) -> str:
    """The system and message texts of a request, flattened (for the side heuristics)."""
    parts = [system_text(body)]
    for m in body.get("messages") or []:
        c = m.get("content") if isinstance(m, dict) else None
        if isinstance(c, str):
            parts.append(c)
        elif isinstance(c, list):
            parts += [str(b.get("text", "")) for b in c if isinstance(b, dict)]
    return "\n".join(parts)


def classify(body: dict[str, Any]) -> str:
    if body.get("tools"):
        return "main"
    if JUDGE_MARKER in system_text(body):
        return "judge"
    return "side"


def side_reply(body: dict[str, Any]) -> str:
    low = request_text(body).lower()
    if "policy_spec" in low or "command prefix" in low:
        return "none"
    if "isnewtopic" in low or "new conversation topic" in low:
        return '{"isNewTopic": false, "title": null}'
    if "title" in low:
        return '{"title": "Mock session"}'
    return "ok"


def take(queue: str, cursor: str) -> tuple[int, dict[str, Any] | None]:
    with LOCK:
        i = STATE[cursor]
        if i < len(STATE[queue]):
            STATE[cursor] += 1
            return i, STATE[queue][i]
        return i, None


def turn_blocks(idx: int, turn: dict[str, Any] | None, exhausted: str) -> list[dict[str, Any]]:
    if turn is None:
        return [{"type": "text", "text": exhausted}]
    if "content" in turn:
        blocks = []
        for j, b in enumerate(turn["content"]):
            block = dict(b)
            if block.get("type") == "tool_use":
                block.setdefault("id", f"toolu_mock_{idx}_{j}")
                block.setdefault("input", {})
            blocks.append(block)
        return blocks
    if "tool_use" in turn:
        tu = turn["tool_use"]
        return [{"type": "tool_use", "id": turn.get("id", f"toolu_mock_{idx}"),
                 "name": tu["name"], "input": tu.get("input", {})}]
    return [{"type": "text", "text": str(turn.get("text", ""))}]


def make_message(model: str, blocks: list[dict[str, Any]], stop_reason: str) -> dict[str, Any]:
    return {
        "id": "msg_mock_" + uuid.uuid4().hex[:20],
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
    }


def _halves(text: str) -> list[str]:
    return [c for c in (text[: len(text) // 2], text[len(text) // 2:]) if c]


def _block_events(i: int, b: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if b["type"] == "text":
        yield {"type": "content_block_start", "index": i,
               "content_block": {"type": "text", "text": ""}}
        for chunk in _halves(b["text"]):
            yield {"type": "content_block_delta", "index": i,
                   "delta": {"type": "text_delta", "text": chunk}}
    elif b["type"] == "tool_use":
        yield {"type": "content_block_start", "index": i,
               "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"],
                                 "input": {}}}
        for chunk in _halves(json.dumps(b["input"])):
            yield {"type": "content_block_delta", "index": i,
                   "delta": {"type": "input_json_delta", "partial_json": chunk}}
    elif b["type"] == "thinking":
        yield {"type": "content_block_start", "index": i,
               "content_block": {"type": "thinking", "thinking": "", "signature": ""}}
        yield {"type": "content_block_delta", "index": i,
               "delta": {"type": "thinking_delta", "thinking": b.get("thinking", "")}}
        yield {"type": "content_block_delta", "index": i,
               "delta": {"type": "signature_delta", "signature": b.get("signature", "mock")}}
    yield {"type": "content_block_stop", "index": i}


def sse_events(msg: dict[str, Any],
               pauses: list[float] | None = None) -> Iterator[dict[str, Any]]:
    start = dict(msg, content=[], stop_reason=None,
                 usage=dict(msg["usage"], output_tokens=1))
    yield {"type": "message_start", "message": start}
    yield {"type": "ping"}
    for i, b in enumerate(msg["content"]):
        if pauses and i < len(pauses) and pauses[i]:
            yield {"type": "_pause", "seconds": pauses[i]}
        yield from _block_events(i, b)
    yield {"type": "message_delta",
           "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
           "usage": {"output_tokens": msg["usage"]["output_tokens"]}}
    yield {"type": "message_stop"}


def _reply_for(kind: str, body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the message, what to log about the choice incl. delay/status)."""
    model = str(body.get("model", "claude-mock"))
    if kind == "side":
        return make_message(model, [{"type": "text", "text": side_reply(body)}], "end_turn"), {}
    if kind == "judge":
        idx, entry = take("judge", "judge_cursor")
        blocks = turn_blocks(idx, entry, "[mock: judge queue exhausted]")
    else:
        idx, entry = take("script", "cursor")
        blocks = turn_blocks(idx, entry, "[mock: script exhausted]")
    pauses = [float(b.pop("pause", 0) or 0) for b in blocks]
    has_tool = any(b["type"] == "tool_use" for b in blocks)
    stop = (entry or {}).get("stop_reason") or ("tool_use" if has_tool else "end_turn")
    info = {"index": idx, "exhausted": entry is None,
            "delay": float((entry or {}).get("delay", 0) or 0),
            "status": int((entry or {}).get("status", 200) or 200)}
    if any(pauses):
        info["pauses"] = pauses
    return make_message(model, blocks, stop), info


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "smllm-mock-anthropic/1.0"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _read_body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            return self.rfile.read(n)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                data += self.rfile.read(size)
                self.rfile.readline()
            return data
        return b""

    def _send_json(self, code: int, obj: Any) -> None:
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", "req_mock_" + uuid.uuid4().hex[:12])
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _hdrs(self) -> dict[str, str]:
        keep = {}
        for k, v in self.headers.items():
            kl = k.lower()
            keep[kl] = v[:12] + "..." if kl in ("x-api-key", "authorization") else v
        return keep

    def do_HEAD(self) -> None:
        log_event({"method": "HEAD", "path": self.path, "headers": self._hdrs(), "kind": "other"})
        self._send_json(200, {})

    def do_GET(self) -> None:
        if self.path.startswith("/_mock/state"):
            with LOCK:
                st = {k: STATE[k] for k in ("cursor", "judge_cursor", "requests")}
                st.update(turns=len(STATE["script"]), judge=len(STATE["judge"]))
            self._send_json(200, st)
            return
        log_event({"method": "GET", "path": self.path, "headers": self._hdrs(), "kind": "other"})
        if self.path.startswith("/v1/models"):
            self._send_json(200, {"data": [], "has_more": False, "first_id": None,
                                  "last_id": None})
            return
        self._send_json(200, {})

    def _control(self, body: Any) -> None:
        with LOCK:
            if isinstance(body, list):
                body = {"script": body}
            if isinstance(body, dict) and "script" in body:
                STATE["script"], STATE["cursor"] = list(body["script"]), 0
            if isinstance(body, dict) and "judge" in body:
                STATE["judge"], STATE["judge_cursor"] = list(body["judge"]), 0
            out = {"ok": True, "turns": len(STATE["script"]), "judge": len(STATE["judge"])}
        self._send_json(200, out)

    def do_POST(self) -> None:
        raw = self._read_body()
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
        path = self.path.split("?", 1)[0]
        if path == "/_mock/script":
            self._control(body)
            return
        base = {"method": "POST", "path": self.path, "headers": self._hdrs(), "body": body}
        if path == "/v1/messages/count_tokens":
            log_event({**base, "kind": "count_tokens"})
            self._send_json(200, {"input_tokens": 100})
            return
        if path != "/v1/messages" or not isinstance(body, dict):
            log_event({**base, "kind": "other"})
            self._send_json(200, {})
            return
        kind = classify(body)
        msg, info = _reply_for(kind, body)
        log_event({**base, "kind": kind, "stream": bool(body.get("stream")), "reply": msg,
                   **info})
        if info.get("delay"):
            time.sleep(info["delay"])
        status = info.get("status", 200)
        if status != 200:
            self._send_json(status, {"type": "error", "error": {
                "type": "api_error", "message": f"mock: scripted status {status}"}})
            return
        if not body.get("stream"):
            self._send_json(200, msg)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.send_header("request-id", "req_mock_" + uuid.uuid4().hex[:12])
        self.end_headers()
        for data in sse_events(msg, info.get("pauses")):
            if data["type"] == "_pause":
                time.sleep(float(data["seconds"]))
                continue
            self.wfile.write(f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
        self.close_connection = True


def _load(path: str | None) -> list[Any]:
    if not path:
        return []
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    return list(data) if isinstance(data, list) else []


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="scripted Anthropic Messages API (loopback only)")
    ap.add_argument("--port", type=int, required=True, help="0 = pick a free port")
    ap.add_argument("--port-file", help="write the bound port here once listening")
    ap.add_argument("--pid-file", help="write this process's pid here")
    ap.add_argument("--max-lifetime", type=float, default=600,
                    help="exit by itself after this many seconds (0 = never)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--script", help="JSON list of main turns")
    ap.add_argument("--judge", help="JSON list of judge answers")
    ap.add_argument("--log", help="append one JSON line per request here")
    a = ap.parse_args(argv)
    if a.host not in LOOPBACK:
        ap.error("loopback only")
    STATE["script"], STATE["judge"], STATE["log"] = _load(a.script), _load(a.judge), a.log
    srv = ThreadingHTTPServer((a.host, a.port), Handler)
    srv.daemon_threads = True
    if a.pid_file:
        with open(a.pid_file, "w") as fh:
            fh.write(str(os.getpid()))
    if a.max_lifetime:
        timer = threading.Timer(a.max_lifetime, srv.shutdown)
        timer.daemon = True
        timer.start()
    if a.port_file:
        with open(a.port_file + ".tmp", "w") as fh:
            fh.write(str(srv.server_address[1]))
        os.replace(a.port_file + ".tmp", a.port_file)
    print(f"mock-anthropic on http://{a.host}:{srv.server_address[1]}", file=sys.stderr,
          flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        srv.serve_forever()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
