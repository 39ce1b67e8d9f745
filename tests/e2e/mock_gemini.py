"""A scripted Gemini API (``models/<model>:streamGenerateContent`` and ``:generateContent``)
on 127.0.0.1, for driving the real Gemini CLI offline in the end-to-end tests.

    python mock_gemini.py --port 0 --port-file P --pid-file F --script turns.json \\
        --log requests.jsonl [--max-lifetime 900]

Conventions of ``mock_anthropic.py``: ``--port 0`` and ``--port-file`` (written once the
socket listens), ``--pid-file``, ``--max-lifetime``. The CLI is pointed at it with
``GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:PORT`` and any ``GEMINI_API_KEY``.

The script is a JSON list of turns, each consumed by one *main* request (one whose
``tools`` declare functions: a step of the agent loop)::

    {"text": "All done."}
    {"shell": "echo hi > a.txt"}                          # run_shell_command
    {"write": {"file_path": "notes.md", "content": "hi"}}  # write_file
    {"call": {"name": "replace", "args": {...}}}           # any tool

with an optional ``"call_id"`` (default ``call_<turn>``). An exhausted script answers
``[mock: script exhausted]``, so the CLI always ends. ``POST /_mock/script`` replaces the
script. Side requests (the model router, the next-speaker check: no function
declarations) never consume a turn: one that asks for JSON gets an object built from its
``responseJsonSchema`` (an enum's first value, ``next_speaker`` ``user``, numbers their
``minimum`` or 1: Gemini CLI's router refuses a complexity score of 0), else ``ok``.

A streamed reply is sent as Gemini sends it (measured with 0.61.0,
shared/ref/gemini-hooks.md §2): ``data: {candidates: [...]}`` chunks separated by
``\\r\\n\\r\\n``, a text split in two chunks, ``finishReason`` and ``usageMetadata`` on the
last. Every request is one JSON line of ``--log`` (``kind`` main/side/other, ``turn``,
``body``, ``reply``).
"""

from __future__ import annotations

import json
from typing import Any

from mockserve import LOCK, ScriptedHandler, log_request, next_turn, send_events, send_json, serve

STATE: dict[str, Any] = {"script": [], "cursor": 0, "log": None, "served": 0}
USAGE = {"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120}


def parts_of(turn: dict[str, Any] | None, index: int) -> list[dict[str, Any]]:
    """The model's parts for one scripted turn."""
    if turn is None:
        return [{"text": "[mock: script exhausted]"}]
    call_id = str(turn.get("call_id") or f"call_{index}")
    if "shell" in turn:
        call = {"name": "run_shell_command",
                "args": {"command": turn["shell"], "description": "scripted command"}}
    elif "write" in turn:
        call = {"name": "write_file", "args": dict(turn["write"])}
    elif "call" in turn:
        call = {"name": turn["call"]["name"], "args": dict(turn["call"].get("args") or {})}
    else:
        return [{"text": str(turn.get("text", ""))}]
    return [{"functionCall": {"id": call_id, **call}}]


def side_value(schema: Any, key: str = "") -> Any:
    """A value that satisfies ``schema`` (what a side request asked for)."""
    if not isinstance(schema, dict):
        return "ok"
    kind = schema.get("type")
    kind = (kind[0] if isinstance(kind, list) and kind else kind or "").lower()
    if schema.get("enum"):
        return schema["enum"][0]
    if kind == "object" or "properties" in schema:
        return {k: side_value(v, k) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        return []
    if kind == "boolean":
        return False
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    return {"next_speaker": "user", "model_choice": "flash"}.get(key, "ok")


def side_text(body: dict[str, Any]) -> str:
    config = body.get("generationConfig") or {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema")
    if schema or config.get("responseMimeType") == "application/json":
        return json.dumps(side_value(schema or {"type": "object"}))
    return "ok"


def chunks(parts: list[dict[str, Any]], model: str, response_id: str) -> list[dict[str, Any]]:
    """The streamed chunks of one reply: a text in two halves, each other part alone;
    ``finishReason`` and usage on the last chunk."""
    pieces: list[list[dict[str, Any]]] = []
    for part in parts:
        text = part.get("text")
        if isinstance(text, str) and len(text) > 1:
            half = len(text) // 2
            pieces += [[{"text": text[:half]}], [{"text": text[half:]}]]
        else:
            pieces.append([part])
    out = []
    for i, piece in enumerate(pieces or [[]]):
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": piece}, "index": 0}
        chunk: dict[str, Any] = {"candidates": [candidate], "modelVersion": model,
                                 "responseId": response_id}
        if i == len(pieces or [[]]) - 1:
            candidate["finishReason"] = "STOP"
            chunk["usageMetadata"] = USAGE
        out.append(chunk)
    return out


class Handler(ScriptedHandler):
    STATE = STATE

    def answer(self, path: str, body: Any) -> None:
        if path.endswith(":countTokens"):
            send_json(self, 200, {"totalTokens": 100})
            return
        streaming = path.endswith(":streamGenerateContent")
        if not isinstance(body, dict) or not (streaming or path.endswith(":generateContent")):
            log_request(STATE, {"method": "POST", "path": self.path, "kind": "other"})
            send_json(self, 200, {})
            return
        model = path.rsplit("/", 1)[-1].split(":", 1)[0]
        main = any(isinstance(t, dict) and t.get("functionDeclarations")
                   for t in body.get("tools") or [])
        if main:
            index, turn = next_turn(STATE)
            parts = parts_of(turn, index)
        else:
            index, parts = -1, [{"text": side_text(body)}]
        with LOCK:
            STATE["served"] += 1
            response_id = f"resp_{STATE['served']}"
        reply = chunks(parts, model, response_id)
        log_request(STATE, {"method": "POST", "path": self.path, "kind": "main" if main else "side",
              "turn": index, "body": body, "reply": reply})
        if not streaming:
            whole = dict(reply[-1])
            whole["candidates"] = [{**reply[-1]["candidates"][0],
                                    "content": {"role": "model", "parts": parts}}]
            send_json(self, 200, whole)
            return
        send_events(self, [f"data: {json.dumps(chunk)}\r\n\r\n".encode() for chunk in reply])


def main(argv: list[str] | None = None) -> int:
    return serve(Handler, STATE, argv, "scripted Gemini API")


if __name__ == "__main__":
    raise SystemExit(main())
