"""Gemini CLI's chat file (its transcript) -> ``model.call`` records, read incrementally.

Gemini CLI 0.61 writes ``~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl`` (the
``transcript_path`` of its hooks): a header ``{sessionId, projectHash, startTime, …}``,
``{"$set": {…}}`` patches (the first sets ``messages``), and one line per message,
``{id, timestamp, type: "user" | "gemini" | …, content, thoughts, tokens, model}``. A
``gemini`` line is one model call, written as soon as its response has streamed; once its
tools have run, the same message is written again with ``toolCalls`` (measured: the first
line is there when BeforeTool fires, the second after AfterTool).

Each model call is journaled once, at the first hook that finds its line (under the
journal lock, from the offset kept in the sidecar under ``gemini_chat``): its id, model,
``tokens`` as usage, its text, and its thoughts as an ``omitted_live_only`` marker. Gemini's
hooks name no tool call, so which calls a model call chose is known from the BeforeTool
that follows it: that hook reads the chat file with the id smllm gave the call
(``choosing``), and the model call it finds last is journaled with that id, before the
call's intent (causal order); a second call of the same response adds a ``part`` holding
that call's id only (as Claude Code's reader does with late lines of a message):

>>> lines = [{"id": "m1", "type": "gemini", "content": "", "model": "gemini-3.8-flash",
...           "tokens": {"input": 9, "total": 12}, "timestamp": "T1"}]
>>> calls, st = read([__import__("json").dumps(x).encode() for x in lines], {}, "g-1")
>>> calls[0]["message_id"], calls[0]["tool_use_ids"], calls[0]["stop_reason"]
('m1', ['g-1'], 'tool_use')
>>> read([], st, "g-2")[0][0]["part"], read([], st, "g-2")[0][0]["tool_use_ids"]
(2, ['g-2'])

A response without a tool call is journaled with ``stop_reason`` ``end_turn``. Nothing
waits for the chat file: a model call Gemini has not written yet lands at a later hook.

Hot path: ``os`` and smllm's base and journal modules only; loaded by Gemini's hooks only.
"""

from __future__ import annotations

from smllm import harness
from smllm.base import jsonfast
from smllm.base.digest import tagged
from smllm.journal import hostcall, records

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from smllm import journal

#: at most this much of the chat file is read by one hook (the rest by the next ones)
MAX_READ = 16 * 1024 * 1024
#: model calls remembered (so none is journaled twice when Gemini writes it again)
MEMORY = 64


def _text(content: object) -> str | None:
    if isinstance(content, str):
        return content or None
    parts = [str(p["text"]) for p in content if isinstance(p, dict)
             and isinstance(p.get("text"), str)] if isinstance(content, list) else []
    return "\n".join(parts) or None


def _thinking(thoughts: object) -> dict[str, Any] | None:
    if not thoughts:
        return None
    data = jsonfast.dumps(thoughts).encode("utf-8", "surrogatepass")
    return {"omitted_live_only": {"bytes": len(data), "sha256": tagged(data)}}


def _messages(line: object) -> list[dict[str, Any]]:
    """The messages one line of the chat file holds (a message, or a ``$set`` of them)."""
    if not isinstance(line, dict):
        return []
    patch = line.get("$set")
    if isinstance(patch, dict):
        found = patch.get("messages")
        return [m for m in found if isinstance(m, dict)] if isinstance(found, list) else []
    return [line] if isinstance(line.get("type"), str) and isinstance(line.get("id"), str) \
        else []


def _call(msg: dict[str, Any], ids: list[str], part: int) -> dict[str, Any]:
    tokens = msg.get("tokens")
    chose = bool(ids) or bool(msg.get("toolCalls"))
    out: dict[str, Any] = {
        "message_id": msg["id"],
        "model": msg.get("model") if isinstance(msg.get("model"), str) else None,
        "stop_reason": "tool_use" if chose else "end_turn",
        "usage": tokens if isinstance(tokens, dict) else {},
        "tool_use_ids": ids,
        "text": _text(msg.get("content")) if part == 1 else None,
        "thinking": _thinking(msg.get("thoughts")) if part == 1 else None,
        "at": msg.get("timestamp"),
    }
    if part > 1:
        out["part"] = part
    return out


def read(lines: list[bytes], st: dict[str, Any], choosing: str | None = None
         ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The model calls ``lines`` add (their fields), and the state after them. With
    ``choosing`` (a BeforeTool's call id), the last model call found, or else the last one
    journaled if no message came after it, is the one that chose that call."""
    st = dict(st)
    emitted: dict[str, int] = dict(st.get("emitted") or {})
    newest = str(st.get("newest") or "")
    last = st.get("last") if isinstance(st.get("last"), dict) else None
    fresh: list[dict[str, Any]] = []
    for raw in lines:
        try:
            line = jsonfast.loads(raw)
        except (ValueError, RecursionError, UnicodeDecodeError):
            continue
        for msg in _messages(line):
            if msg.get("type") != "gemini":
                last = None  # a tool result or a prompt: the last model call is over
                continue
            mid, at = str(msg["id"]), str(msg.get("timestamp") or "")
            if mid in emitted or any(m["id"] == mid for m in fresh) or (at and at < newest):
                continue  # written again (with its toolCalls), or an old one replayed
            fresh.append(msg)
    calls = [_call(msg, [], 1) for msg in fresh]
    for msg in fresh:
        emitted[str(msg["id"])] = 1
        newest = max(newest, str(msg.get("timestamp") or ""))
    if fresh:
        last = {"id": fresh[-1]["id"], "at": fresh[-1].get("timestamp"),
                "model": fresh[-1].get("model")}
    chosen: list[str] = list(st.get("chosen") or [])
    if choosing in chosen:
        choosing = None  # named already (a review chain reads the file before the intent)
    if choosing is not None and calls:
        calls[-1]["tool_use_ids"] = [choosing]
        calls[-1]["stop_reason"] = "tool_use"
    elif choosing is not None and last is not None and str(last["id"]) in emitted:
        part = emitted[str(last["id"])] + 1
        emitted[str(last["id"])] = part
        calls.append(_call({**last, "tokens": {}}, [choosing], part))
    else:
        choosing = None
    if choosing is not None:
        chosen = [*chosen[-(MEMORY - 1):], choosing]
    st["chosen"] = chosen
    st["emitted"] = dict(list(emitted.items())[-MEMORY:])
    st["newest"] = newest
    st["last"] = last
    return calls, st


#: what Gemini CLI answers for a call a BeforeTool hook blocked (no AfterTool follows)
BLOCKED = "Tool execution blocked:"


def blocked(lines: list[bytes]) -> list[tuple[str, Any, str]]:
    """The calls a hook blocked, as the chat file records them once their response is
    written again with its ``toolCalls``: ``(tool name, args, Gemini's error text)``."""
    out = []
    for raw in lines:
        if BLOCKED.encode() not in raw:
            continue
        try:
            line = jsonfast.loads(raw)
        except (ValueError, RecursionError, UnicodeDecodeError):
            continue
        for msg in _messages(line):
            for tc in msg.get("toolCalls") or []:
                text = jsonfast.dumps(tc.get("result")) if isinstance(tc, dict) else ""
                if isinstance(tc, dict) and tc.get("status") != "success" and BLOCKED in text:
                    out.append((str(tc.get("name")), tc.get("args"), text[:2000]))
    return out


def close_blocked(txn: journal.Transaction, calls: list[tuple[str, Any, str]]) -> None:
    """Close each call smllm left to Gemini that another hook then blocked: no AfterTool
    will come, so the chat file's record of it is its end (``refused_by_host``, read from
    the transcript; the oldest open call of the same tool and input)."""
    if not calls:
        return
    from smllm.harness import gemini  # noqa: PLC0415 - a blocked call only

    open_intents = dict(txn.state.get("open_intents") or {})
    closed = []
    for name, args, detail in calls:
        tid = gemini.open_call(open_intents, {"tool_name": name, "tool_input": args})
        intent = open_intents.get(tid)
        if intent is None or not hostcall.host_decides(intent) or intent.get("ran"):
            continue
        del open_intents[tid]
        closed.append(hostcall.close(txn, intent, tid, intent.get("key"),
                                     {"is_error": True, "preview": detail},
                                     observed_via="transcript"))
    if closed:
        txn.set_state("open_intents", open_intents)
        hostcall.remember_closed(txn, closed)


def ingest(txn: journal.Transaction, chat: str, choosing: str | None = None) -> None:
    """Journal the model calls ``chat`` gained since the last hook (under ``txn``), and
    the end of a call another hook blocked (:func:`close_blocked`)."""
    saved = txn.state.get("gemini_chat")
    st: dict[str, Any] = dict(saved) if isinstance(saved, dict) else {}
    if st.get("path") != chat:  # a new chat file (a resume may start one): from its start
        st = {**st, "path": chat, "offset": 0}
    offset = int(st.get("offset") or 0)
    data = harness.read_from(chat, offset, MAX_READ) or b""
    end = data.rfind(b"\n") + 1
    lines = data[:end].splitlines()
    calls, st = read(lines, st, choosing)
    for call in calls:
        txn.append(records.new("model.call", **call))
    close_blocked(txn, blocked(lines))
    st["offset"] = offset + end
    txn.set_state("gemini_chat", st)


def ingesting_for(choosing: str | None) -> Callable[[journal.Transaction, str], None]:
    """What :class:`smllm.harness.ingesting` runs for a Gemini hook: :func:`ingest`, for a
    BeforeTool with the id its call gets (``choosing``, made unique among the open calls
    under the lock, as the PreToolUse hook makes it)."""
    def run(txn: journal.Transaction, chat: str) -> None:
        if choosing is None:
            ingest(txn, chat)
            return
        from smllm.harness import gemini  # noqa: PLC0415 - loaded by BeforeTool already

        ingest(txn, chat, gemini.unique(choosing, txn.state.get("open_intents") or {}))

    return run
