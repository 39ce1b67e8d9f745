"""``smllm mcp``: a stdio MCP server with one tool, ``smllm({ session, event, params })``.

Messages are JSON-RPC 2.0, one per line (the MCP stdio transport). The tool fires
the event exactly as ``smllm fire`` does (same audit, same texts); a refused event
comes back with ``isError: true`` and the text that says what is offered.
"""

from __future__ import annotations

import os
import sys

from smllm import VERSION
from smllm.base import jsonfast
from smllm.base.errors import SmllmError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

PROTOCOL = "2025-06-18"
TOOL = {
    "name": "smllm",
    "description": (
        "Fire an event in your smllm session's state machine. The <smllm> texts you are "
        "shown name the session and list the events you may fire, with their params."),
    "inputSchema": {
        "type": "object",
        "properties": {
            "session": {"type": "string", "description": "The session key, e.g. sm-nqvfvw."},
            "event": {"type": "string", "description": "The event to fire, e.g. reproduced."},
            "params": {"type": "object", "additionalProperties": {"type": "string"},
                       "description": "The event's params, e.g. {\"bugId\": \"BUG-7\"}."},
        },
        "required": ["event"],
    },
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "Serve the `smllm` MCP tool on stdin/stdout (JSON-RPC, one per line)."


def _call(arguments: dict[str, Any]) -> dict[str, Any]:
    # the machine code loads at the first call: Claude Code starts this server with every
    # session, and most sessions fire nothing
    from smllm.machine import session  # noqa: PLC0415 - see above

    event = arguments.get("event")
    params = arguments.get("params") or {}
    given = arguments.get("session")
    key = session.resolve_key(given if isinstance(given, str) else None, os.environ)
    if not isinstance(event, str) or not event:
        return _text("smllm: error: the event is missing (pass event, e.g. \"enter\")", True)
    if not isinstance(params, dict) or not all(isinstance(v, str) for v in params.values()):
        return _text("smllm: error: params must map names to strings "
                     "(e.g. {\"bugId\": \"BUG-7\"})", True)
    try:
        _, decision, location = session.fire(key, event,
                                               dict(params), cwd=os.getcwd(), harness="mcp")
    except SmllmError as exc:
        return _text(f"smllm: error: {exc.render()}", True)
    # no structuredContent: Claude Code would show the model that instead of the text
    del location
    return _text(decision.text or "", not decision.ok)


def _text(text: str, error: bool) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": error}


def handle(message: dict[str, Any]) -> dict[str, Any] | None:
    """The response to one JSON-RPC message (None for notifications)."""
    method = message.get("method")
    mid = message.get("id")
    if mid is None:
        return None
    result: dict[str, Any]
    if method == "initialize":
        asked = (message.get("params") or {}).get("protocolVersion")
        result = {"protocolVersion": asked if isinstance(asked, str) else PROTOCOL,
                  "capabilities": {"tools": {"listChanged": False}},
                  "serverInfo": {"name": "smllm", "version": VERSION}}
    elif method == "ping":
        result = {}
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        p = message.get("params") or {}
        if p.get("name") != "smllm":
            return {"jsonrpc": "2.0", "id": mid,
                    "error": {"code": -32602, "message": f"unknown tool {p.get('name')!r}"}}
        result = _call(p.get("arguments") or {})
    else:
        return {"jsonrpc": "2.0", "id": mid,
                "error": {"code": -32601, "message": f"method not found: {method}"}}
    return {"jsonrpc": "2.0", "id": mid, "result": result}


def run(args: argparse.Namespace) -> int:
    return serve()


def serve() -> int:
    """Answer JSON-RPC messages on stdin until it closes."""
    for raw in sys.stdin:
        if not raw.strip():
            continue
        try:
            message = jsonfast.loads(raw)
        except (ValueError, RecursionError):
            reply: dict[str, Any] | None = {
                "jsonrpc": "2.0", "id": None,
                "error": {"code": -32700, "message": "parse error"}}
        else:
            reply = handle(message) if isinstance(message, dict) else {
                "jsonrpc": "2.0", "id": None,
                "error": {"code": -32600, "message": "invalid request"}}
        if reply is not None:
            sys.stdout.write(jsonfast.dumps(reply) + "\n")
            sys.stdout.flush()
    return 0
