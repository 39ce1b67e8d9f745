"""Copilot's ``events.jsonl`` (its transcript) -> ``model.call`` records, and the id of the
tool call a hook runs for.

Copilot 1.0.102 writes ``$COPILOT_HOME/session-state/<sessionId>/events.jsonl`` (the
agentStop hook's ``transcriptPath``): one JSON object a line, ``{type, data, id,
timestamp, parentId}``. Each model call is a ``session.usage_record`` (its usage) followed
by an ``assistant.message`` (its ``apiCallId``: the provider's message id, its text and
``toolRequests`` with each ``toolCallId``: the id the model gave the call). Before a
preToolUse hook runs, Copilot has written the call's ``tool.execution_start``
(``toolCallId``, ``toolName``, ``arguments``); its ``tool.execution_complete`` comes after
the postToolUse hook (shared/ref/copilot-hooks.md §7; measured).

Each Copilot hook reads what the file gained under its journal lock
(:class:`smllm.harness.ingesting`), from the offset kept in the sidecar (``copilot_events``);
a line still being written waits for the next hook. Tool hooks carry no id, so
:func:`call_id` finds it in the file's tail: the started call with the same tool and
arguments that has not completed.

>>> lines = [{"type": "session.usage_record", "data": {"usage": {"model": "m",
...           "inputTokens": 9, "outputTokens": 2}}},
...          {"type": "assistant.message", "timestamp": "T", "data": {"apiCallId": "msg_1",
...           "content": "", "toolRequests": [{"toolCallId": "toolu_1", "name": "bash"}]}}]
>>> calls, st = read([__import__("json").dumps(x).encode() for x in lines], {})
>>> calls[0]["message_id"], calls[0]["tool_use_ids"], calls[0]["usage"]["input_tokens"]
('msg_1', ['toolu_1'], 9)

Hot path: ``os`` and smllm's base and journal modules only; loaded by Copilot's hooks only.
"""

from __future__ import annotations

from smllm import harness
from smllm.base import jsonfast

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

    from smllm import journal

#: at most this much of the file is read by one hook (the rest by the next ones)
MAX_READ = 16 * 1024 * 1024
#: the tail :func:`call_id` reads first, and at most (a call's arguments may be large)
TAIL = 256 * 1024
TAIL_MAX = 4 * 1024 * 1024
#: how long a PreToolUse waits for the file to show its call, and how often it looks
WAIT_SECONDS = 2.0
POLL_SECONDS = 0.01
#: Copilot's usage keys -> the Messages API's, as Claude Code's model calls carry them
USAGE = (("inputTokens", "input_tokens"), ("outputTokens", "output_tokens"),
         ("cacheReadTokens", "cache_read_input_tokens"),
         ("cacheWriteTokens", "cache_creation_input_tokens"))


def _usage(raw: object) -> dict[str, Any]:
    if not isinstance(raw, dict):
        return {}
    return {ours: raw[theirs] for theirs, ours in USAGE if isinstance(raw.get(theirs), int)}


def read(lines: list[bytes], st: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The model calls ``lines`` complete (their fields), and the state after them (``st``:
    the model, and the usage of a call whose message is not written yet)."""
    st = dict(st)
    calls = []
    for kind, data, line in _lines(lines, b'"assistant.message"', b'"session.usage_record"',
                                   b'"session.start"', b'"user.message"'):
        if kind == "session.start" and isinstance(data.get("selectedModel"), str):
            st["model"] = data["selectedModel"]
        elif kind == "session.usage_record" and isinstance(data.get("usage"), dict):
            st["usage"] = data["usage"]
        elif kind == "user.message":
            st["ended"] = False
        elif kind == "assistant.message":
            usage = st.pop("usage", None) or {}
            requests = data.get("toolRequests")
            ids = [str(r["toolCallId"]) for r in requests if isinstance(r, dict)
                   and isinstance(r.get("toolCallId"), str)] if isinstance(requests, list) else []
            text = data.get("content")
            model = data.get("model") or usage.get("model") or st.get("model")
            st["ended"] = not ids
            calls.append({
                "message_id": str(data.get("apiCallId") or data.get("messageId")
                                  or f"events:{line.get('id')}"),
                "model": model if isinstance(model, str) else None,
                "stop_reason": "tool_use" if ids else "end_turn",
                "usage": _usage(usage),
                "tool_use_ids": ids,
                "text": text if isinstance(text, str) and text else None,
                "thinking": None,
                "at": line.get("timestamp"),
            })
    return calls, st


def ingest(txn: journal.Transaction, path: str) -> None:
    """Journal the model calls ``path`` gained since the last hook (under ``txn``)."""
    harness.ingest_model_calls(txn, path, "copilot_events", read, MAX_READ)


def _lines(data: bytes | list[bytes], *markers: bytes
           ) -> Iterator[tuple[object, dict[str, Any], dict[str, Any]]]:
    """``(type, data, line)`` of each whole line of ``data`` that holds one of ``markers``
    (a cheap test before the parse) and is an event object with a ``data`` object."""
    for raw in data.split(b"\n")[:-1] if isinstance(data, bytes) else data:
        if not any(m in raw for m in markers):
            continue
        try:
            line = jsonfast.loads(raw)
        except (ValueError, RecursionError, UnicodeDecodeError):
            continue
        if isinstance(line, dict) and isinstance(line.get("data"), dict):
            yield line.get("type"), line["data"], line


def _ends_turn(data: bytes) -> bool:
    """Does ``data`` hold a whole ``assistant.message`` that chose no tool (a turn's end)?"""
    return any(kind == "assistant.message" and not event.get("toolRequests")
               for kind, event, _ in _lines(data, b'"assistant.message"'))


def settle(path: str, st: dict[str, Any]) -> None:
    """Wait (at most :data:`WAIT_SECONDS`) until what the file gained since the journal read
    it (``st``: the sidecar's ``copilot_events``) holds the message that ended the turn: the
    agentStop hook runs before Copilot has written it, and the turn's last model call would
    otherwise miss the journal. No wait when nothing was written since a turn ended."""
    import time  # noqa: PLC0415 - loaded by every hook already (the clock)

    offset = int(st.get("offset") or 0) if st.get("path") == path else 0
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        data = harness.read_from(path, offset, MAX_READ)
        if data is None or _ends_turn(data) or (not data and st.get("ended")) \
                or time.monotonic() >= deadline:
            return
        time.sleep(POLL_SECONDS)


def _tail(path: str, size: int) -> tuple[bytes, bool] | None:
    """The whole lines of the last ``size`` bytes of ``path``, and whether that is the
    whole file."""
    from smllm.base import osfast as os  # noqa: PLC0415 - loaded by every hook already

    try:
        length = os.stat(path).st_size
    except OSError:
        return None
    start = max(0, length - size)
    data = harness.read_from(path, start, size)
    if data is None:
        return None
    return (data, True) if start == 0 else (data[data.find(b"\n") + 1:], False)


def _calls(data: bytes, tool: str, args: object) -> list[str]:
    """The ids of the calls of ``tool`` with ``args`` that started and did not complete."""
    started: list[str] = []
    done: set[str] = set()
    for kind, event, _ in _lines(data + b"\n", b'"tool.execution_'):
        cid = event.get("toolCallId")
        if not isinstance(cid, str):
            continue
        if kind == "tool.execution_complete":
            done.add(cid)
        elif kind == "tool.execution_start" and event.get("toolName") == tool \
                and event.get("arguments") == args:
            started.append(cid)
    return [c for c in started if c not in done]


def call_id(path: str, tool: str, args: object, *, pre: bool,
            claimed: Callable[[], set[str]]) -> str | None:
    """The ``toolCallId`` of the call a tool hook runs for (:func:`find_call`). Copilot
    writes the file a little after it starts the hook (about 0.1 s, measured), so a
    PreToolUse reads it again until the call shows, for at most :data:`WAIT_SECONDS`;
    its model call is then journaled before its intent. A PostToolUse finds it at once."""
    import time  # noqa: PLC0415 - loaded by every hook already (the clock)

    deadline = time.monotonic() + (WAIT_SECONDS if pre else 0.0)
    while True:
        found = find_call(path, tool, args, pre=pre, claimed=claimed)
        if found is not None or time.monotonic() >= deadline:
            return found
        time.sleep(POLL_SECONDS)


def find_call(path: str, tool: str, args: object, *, pre: bool,
              claimed: Callable[[], set[str]]) -> str | None:
    """The ``toolCallId`` of the call a tool hook runs for: the call of ``tool`` with
    ``args`` that started and has not completed. When several identical calls are under
    way (a parallel batch), a PreToolUse takes the first not journaled yet, a PostToolUse
    the first journaled (``claimed``: the ids of the intents still open). None when the
    file's tail does not show it."""
    for size in (TAIL, TAIL_MAX):
        tail = _tail(path, size)
        if tail is None:
            return None
        data, whole = tail
        found = _calls(data, tool, args)
        if found:
            if len(found) == 1:
                return found[0]
            taken = claimed()
            for candidate in found:
                if (candidate in taken) != pre:
                    return candidate
            return found[0]
        if whole:
            return None
    return None
