"""A scripted OpenAI Responses API (``POST /v1/responses``, streamed as SSE) on 127.0.0.1,
for driving the real Codex CLI offline in the end-to-end tests.

    python mock_codex_responses.py --port 0 --port-file P --pid-file F --script turns.json \\
        --log requests.jsonl [--max-lifetime 900]

Conventions of ``mock_anthropic.py``: ``--port 0`` and ``--port-file`` (written once the
socket listens), ``--pid-file`` (the interpreter may be a shim), ``--max-lifetime``.

The script is a JSON list of turns, each consumed by one *main* request (one whose
``tools`` list is not empty; side requests such as a compaction summary get ``ok``)::

    {"text": "All done."}
    {"shell": "echo hi > a.txt"}                     # Codex's exec_command tool
    {"patch": "*** Begin Patch\\n...*** End Patch\\n"}  # Codex's apply_patch tool

with an optional ``"call_id"`` (default ``call_<turn>``). An exhausted script answers
``[mock: script exhausted]`` so the CLI always ends. ``POST /_mock/script`` replaces the
script (a resumed session gets its own); every request is one JSON line of ``--log``
(``kind`` main/side/other, ``turn``, ``body``).

What Codex 0.169 needs of the stream (measured): ``response.created``, per item
``response.output_item.added`` / ``.done``, and ``response.completed`` with ``usage``;
it builds the turn from the ``output_item.done`` items.
"""

from __future__ import annotations

import json
import time
from typing import Any, ClassVar

from mockserve import LOCK, ScriptedHandler, log_request, next_turn, send_events, send_json, serve

STATE: dict[str, Any] = {"script": [], "cursor": 0, "log": None, "served": 0}


def items_of(turn: dict[str, Any] | None, index: int) -> list[dict[str, Any]]:
    """The output items of one scripted turn."""
    with LOCK:
        STATE["served"] += 1
        n = STATE["served"]
    if turn is None:
        turn = {"text": "[mock: script exhausted]"}
    call_id = str(turn.get("call_id") or f"call_{index}")
    if "shell" in turn:
        return [{"id": f"fc_{n}", "type": "function_call", "status": "completed",
                 "name": "exec_command", "call_id": call_id,
                 "arguments": json.dumps({"cmd": turn["shell"]})}]
    if "patch" in turn:
        return [{"id": f"ctc_{n}", "type": "custom_tool_call", "status": "completed",
                 "name": "apply_patch", "call_id": call_id, "input": turn["patch"]}]
    return [{"id": f"msg_{n}", "type": "message", "status": "completed", "role": "assistant",
             "content": [{"type": "output_text", "text": str(turn.get("text", "")),
                          "annotations": []}]}]


def response(model: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    with LOCK:
        n = STATE["served"]
    return {"id": f"resp_{n}", "object": "response", "created_at": int(time.time()),
            "status": "completed", "model": model, "output": items, "error": None,
            "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": 120}}


def events(resp: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The SSE events of one response, in order."""
    out: list[tuple[str, dict[str, Any]]] = []
    start = {**resp, "status": "in_progress", "output": [], "usage": None}
    out.append(("response.created", {"type": "response.created", "response": start}))
    for i, item in enumerate(resp["output"]):
        out.append(("response.output_item.added",
                    {"type": "response.output_item.added", "output_index": i, "item": item}))
        out.append(("response.output_item.done",
                    {"type": "response.output_item.done", "output_index": i, "item": item}))
    out.append(("response.completed", {"type": "response.completed", "response": resp}))
    for seq, (_, data) in enumerate(out):
        data["sequence_number"] = seq
    return out


class Handler(ScriptedHandler):
    STATE = STATE
    LISTING: ClassVar[dict[str, Any]] = {"models": [], "data": [], "object": "list"}

    def answer(self, path: str, body: Any) -> None:
        if not path.endswith("/responses"):
            log_request(STATE, {"method": "POST", "path": self.path, "kind": "other"})
            send_json(self, 200, {"output": []})
            return
        main = isinstance(body, dict) and bool(body.get("tools"))
        if main:
            index, turn = next_turn(STATE)
            items = items_of(turn, index)
        else:
            index, items = -1, items_of({"text": "ok"}, -1)
        resp = response(str(body.get("model", "gpt-5.5")), items)
        log_request(STATE, {"method": "POST", "path": self.path, "kind": "main" if main else "side",
              "turn": index, "body": body, "reply": resp})
        send_events(self, [f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
                           for name, data in events(resp)])


def main(argv: list[str] | None = None) -> int:
    return serve(Handler, STATE, argv, "mock responses")


if __name__ == "__main__":
    raise SystemExit(main())
