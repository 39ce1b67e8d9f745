"""Incremental ingestion of Claude Code's transcript into the journal.

Hooks never see model calls, so each hook reads the transcript from the offset the
previous one stopped at and records one ``model.call`` per assistant message (one
response may span several transcript lines sharing ``message.id``); the messages Claude
Code writes itself (model ``<synthetic>``) are not model calls and are not recorded. It also closes
intents the host refused: a ``tool_result`` for an open intent that no PostToolUse
reported, once the model has answered after it (by then every PostToolUse of that
batch has run), becomes a ``tool_batch.effect.terminal`` observed via the transcript.
"""

from __future__ import annotations

import os

from smllm import journal
from smllm.base import jsonfast
from smllm.journal import records

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from smllm.base.shapes import OpenIntent

READ_LIMIT = 4 * 1024 * 1024
EMITTED_MEMORY = 64
PREVIEW = 2000
#: the model of an assistant message Claude Code writes itself, with no model call behind
#: it (an API error, "No response requested." after an interrupt or a crash)
SYNTHETIC = "<synthetic>"


def _preview(content: Any) -> str:
    if isinstance(content, list):
        parts = [str(b.get("text", "")) for b in content
                 if isinstance(b, dict) and b.get("type") == "text"]
        content = "\n".join(parts)
    text = content if isinstance(content, str) else jsonfast.dumps(content)
    return text[:PREVIEW]


def _model_call(msg: dict[str, Any]) -> journal.Entry:
    return records.new(
        "model.call",
        message_id=msg["id"],
        model=msg.get("model"),
        stop_reason=msg.get("stop_reason"),
        usage=msg.get("usage") or {},
        tool_use_ids=msg.get("tool_use_ids", []),
        transcript_uuid=msg.get("uuid"),
        at=msg.get("timestamp"),
    )


#: what Claude Code's tool_result says when a person answered its prompt with "no"; any
#: other refusal (``claude -p``, where nobody can answer, or a rule) is the host's own
USER_REFUSALS = ("The user doesn't want to proceed with this tool use",
                 "The user doesn't want to take this action")


def refused_by_person(detail: str) -> bool:
    """Does a refusal's tool_result show a person refusing (not the host on its own)?"""
    return any(text in detail for text in USER_REFUSALS)


def waits_on_user(intent: OpenIntent) -> str | None:
    """The review of Claude Code's prompt this open intent waits on (its pending action id):
    the host showed its prompt (PermissionRequest) or smllm escalated with ``ask``."""
    pending = intent.get("pending")
    if pending and (intent.get("prompted") or intent.get("decision") == "ask:user"):
        return str(pending)
    return None


def authorized_by(intent: OpenIntent, outcome: str = "succeeded",
                  detail: str = "") -> str | None:
    """Who let the call run, or who stopped it (a terminal's ``authorized_by``), as
    observed: by PostToolUse (the call ran) or in the transcript.

    smllm's own allow when it answered ``allow``; ``allow:user`` if Claude Code's prompt
    was shown; else ``allow:host``. ``deny:user`` only where the transcript shows a person
    refusing; a prompt shown where no person answered (``claude -p``) and refused by
    Claude Code is ``deny:host``. None when the intent's decision is unknown.
    """
    decision = intent.get("decision")
    if not isinstance(decision, str):
        return None
    prompted = bool(intent.get("prompted")) or decision == "ask:user"
    if outcome == "refused_by_host":
        return "deny:user" if prompted and refused_by_person(detail) else "deny:host"
    if prompted:
        return "allow:user"
    return decision if decision.startswith("allow:") and decision != "allow:yolo" else \
        "allow:host"


class _Ingest:
    def __init__(self, txn: journal.Transaction, st: dict[str, Any]) -> None:
        self.txn = txn
        self.pending: dict[str, dict[str, Any]] = st.get("pending", {})
        self.results: dict[str, dict[str, Any]] = st.get("results", {})
        self.open: dict[str, OpenIntent] = dict(txn.state.get("open_intents", {}))
        self.emitted: list[str] = list(st.get("emitted", []))

    def emit_pending(self, keep: str | None = None) -> None:
        for mid in [m for m in self.pending if m != keep]:
            self.emit(mid)

    def emit(self, mid: str) -> None:
        self.txn.append(_model_call(self.pending.pop(mid)))
        self.emitted = [*self.emitted[-(EMITTED_MEMORY - 1):], mid]

    def _close_user_wait(self, intent: OpenIntent, tid: str, outcome: str,
                         detail: str) -> None:
        """A host prompt the gate is waiting on: its answer, as observed (approval gate)."""
        pending = waits_on_user(intent)
        if pending is None:
            return
        approved = outcome != "refused_by_host"
        person = approved or refused_by_person(detail)
        self.txn.extend(records.prompt_answer(pending, tid, approved=approved,
                                              by_person=person, observed_via="transcript",
                                              host_said=None if person else detail[:500]))

    def close_results(self) -> None:
        for tid, res in self.results.items():
            intent = self.open.pop(tid, None)
            if intent is None:
                continue
            outcome = "refused_by_host" if res.get("is_error") else "succeeded"
            detail = str(res.get("preview", ""))
            self._close_user_wait(intent, tid, outcome, detail)
            self.txn.append(
                records.new(
                    "tool_batch.effect.terminal",
                    tool_use_id=tid,
                    idempotency_key=intent.get("key"),
                    intent_sequence=intent.get("seq"),
                    operation=intent.get("operation"),
                    outcome=outcome,
                    observed_via="transcript",
                    authorized_by=authorized_by(intent, outcome, detail),
                    detail=res.get("preview", ""),
                )
            )
        self.results = {}

    def assistant(self, line: dict[str, Any]) -> None:
        msg = line.get("message")
        if not isinstance(msg, dict) or not isinstance(msg.get("id"), str):
            return
        mid = msg["id"]
        self.close_results()
        self.emit_pending(keep=mid)
        if msg.get("model") == SYNTHETIC:  # Claude Code's own words, not a model call
            return
        if mid in self.emitted:  # a late line of a message already recorded
            return
        cur = self.pending.setdefault(
            mid, {"id": mid, "uuid": line.get("uuid"), "timestamp": line.get("timestamp"),
                  "tool_use_ids": []}
        )
        cur["model"] = msg.get("model") or cur.get("model")
        cur["stop_reason"] = msg.get("stop_reason") or cur.get("stop_reason")
        if isinstance(msg.get("usage"), dict):
            cur["usage"] = msg["usage"]
        for block in msg.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                tid = block.get("id")
                if isinstance(tid, str) and tid not in cur["tool_use_ids"]:
                    cur["tool_use_ids"].append(tid)
        if msg.get("stop_reason"):  # the final line of the response
            self.emit(mid)

    def user(self, line: dict[str, Any]) -> None:
        msg = line.get("message")
        content = msg.get("content") if isinstance(msg, dict) else None
        if not isinstance(content, list):
            if self.pending:
                self.emit_pending()
            return
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                tid = block.get("tool_use_id")
                if isinstance(tid, str):
                    self.results[tid] = {
                        "is_error": bool(block.get("is_error")),
                        "preview": _preview(block.get("content")),
                    }
        self.emit_pending()


#: transcript -> (offset, bytes, size) read before the session lock was taken
_PREFETCHED: dict[str, tuple[int, bytes, int]] = {}


def _read_from(transcript: str, offset: int) -> tuple[int, bytes, int] | None:
    """Up to :data:`READ_LIMIT` bytes from ``offset`` (0 if the file shrank): never waits.

    Only a regular file is read: a FIFO or device planted as the transcript is opened
    non-blocking and left alone.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(transcript, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if st.st_mode & 0o170000 != 0o100000:  # not a regular file (stat.S_ISREG)
            return None
        size = st.st_size
        if size < offset:  # rewritten: start over
            offset = 0
        data = os.pread(fd, min(READ_LIMIT, size - offset), offset) if size > offset else b""
    except OSError:
        return None
    finally:
        os.close(fd)
    return offset, data, size


def _offset(st: Mapping[str, Any], transcript: str) -> int:
    offset = st.get("offset") if st.get("path") == transcript else 0
    return offset if isinstance(offset, int) and offset >= 0 else 0


def prefetch(log: str, transcript: str | None) -> None:
    """Read what the transcript gained, before taking the session lock on ``log``.

    :func:`ingest`, under the lock, then uses these bytes: the lock is never held while
    reading the transcript. The offset comes from the sidecar as it is now; if another
    hook moves it meanwhile, :func:`ingest` uses the part that is still new.
    """
    if transcript is None:
        return
    try:
        st = journal.read_state(log).get("transcript")
    except OSError:
        st = None
    got = _read_from(transcript, _offset(st if isinstance(st, dict) else {}, transcript))
    if got is not None:
        _PREFETCHED[transcript] = got


def _new_bytes(transcript: str, offset: int) -> tuple[int, bytes] | None:
    got = _PREFETCHED.pop(transcript, None) or _read_from(transcript, offset)
    if got is None:
        return None
    start, data, size = got
    if start == offset:
        return offset, data
    if start < offset <= start + len(data):
        return offset, data[offset - start:]
    if start == 0 and size < offset:
        return 0, data
    return None  # another hook read further meanwhile: the next one catches up


def ingest(txn: journal.Transaction, transcript: str | None, *, flush: bool = False) -> None:
    """Record what the transcript gained since the last call (under ``txn``'s lock)."""
    if transcript is None:
        return
    st: dict[str, Any] = dict(txn.state.get("transcript") or {})
    if st.get("path") != str(transcript):
        st = {"path": str(transcript), "offset": 0}
    got = _new_bytes(transcript, _offset(st, transcript))
    if got is None:
        return
    offset, data = got
    end = data.rfind(b"\n") + 1
    work = _Ingest(txn, st)
    for raw in data[:end].splitlines():
        try:
            line = jsonfast.loads(raw)
        except (ValueError, RecursionError, UnicodeDecodeError):
            continue
        if not isinstance(line, dict):
            continue
        if line.get("type") == "assistant":
            work.assistant(line)
        elif line.get("type") == "user":
            work.user(line)
    if flush:
        work.emit_pending()
    st.update(offset=offset + end, pending=work.pending, results=work.results,
              emitted=work.emitted)
    txn.set_state("transcript", st)
    txn.set_state("open_intents", work.open)
