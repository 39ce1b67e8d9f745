"""Incremental ingestion of Claude Code's transcript into the journal.

Hooks never see model calls, so each hook reads the transcript from the offset the
previous one stopped at and records one ``model.call`` per assistant message: what the
model said (``text``), the tool uses it chose (``tool_use_ids``) and its thinking as an
``omitted_live_only`` marker (size and SHA-256, never the text); the messages Claude
Code writes itself (model ``<synthetic>``) are not model calls and are not recorded. It
also closes intents the host refused: a ``tool_result`` for an open intent that no PostToolUse
reported, once the model has answered after it (by then every PostToolUse of that
batch has run), becomes a ``tool_batch.effect.terminal`` observed via the transcript.

Causal order: a model call is journaled before the tool calls it chose.

* Claude Code 2.1.332 writes one transcript line per content block, sharing
  ``message.id``, all at once when the response has streamed (each with the final
  ``stop_reason``). What one read gathers of a message is recorded at the end of that
  read unless the message may still grow without having chosen a tool (no stop reason
  yet, no tool use): then it waits for the next line, the next hook or the end.
* Claude Code may start a tool before the response that chose it is in the transcript
  (it runs tools while the response streams, and it writes the transcript a little
  later). PreToolUse therefore waits, before taking the session lock and for at most
  :data:`WAIT_SECONDS` (``SMLLM_TRANSCRIPT_WAIT``), until a whole line of the transcript
  holds its ``tool_use_id`` (:func:`prefetch`; a line still being written does not
  count). Past the wait the call goes on, and its model call lands after its intent
  (``tool_use_ids`` still links them); after :data:`MISS_LIMIT` such waits in a row, the
  session's PreToolUse no longer waits. A transcript that is not there yet is waited for
  at most :data:`ABSENT_SECONDS` (Claude Code creates a new session's file with its first
  queued write, which can come after the first tool starts); one still absent then (no
  session persistence) ends the session's waits; a path that is no regular file is not
  waited for.
* Lines of a message that arrive after it was recorded (a response written in two
  reads) become one more ``model.call`` of the same ``message_id`` with ``part`` 2, 3,
  …, holding only what is new.
"""

from __future__ import annotations

import time

from smllm import journal
from smllm.base import jsonfast
from smllm.base import osfast as os
from smllm.base.digest import tagged
from smllm.journal import hostcall, records

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from smllm.base.shapes import OpenIntent

READ_LIMIT = 4 * 1024 * 1024
EMITTED_MEMORY = 64
#: assistant lines (by ``uuid``) and tool uses remembered, so none is recorded twice
LINE_MEMORY = 64
PREVIEW = 2000
#: how long PreToolUse waits for the transcript to show the tool use it gates
WAIT_SECONDS = 10.0
#: after this many waits in a row that ended without the tool use, a session's transcript
#: is taken not to show them in time, and PreToolUse stops waiting for it
MISS_LIMIT = 3
#: how long PreToolUse waits for a transcript that is not there at all: Claude Code creates
#: a new session's file with its first queued write, well within this; one that is still
#: absent is not being written (no session persistence), and the session stops waiting
ABSENT_SECONDS = 1.0
#: how often the wait looks at the transcript's size (a ``stat``; it reads only when the
#: size moved): Claude Code writes its transcript every 100 ms, and each poll interval
#: adds half of itself to the wait on average
_POLL_SECONDS = 0.002
_WAIT_MAX = 60.0
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


def _thinking(parts: list[str]) -> dict[str, Any] | None:
    """The model's thinking, as a marker: its size and digest pin it; it is never kept."""
    if not parts:
        return None
    data = "\n".join(parts).encode("utf-8", "surrogatepass")
    return {"omitted_live_only": {"bytes": len(data), "sha256": tagged(data)}}


def _model_call(msg: dict[str, Any]) -> journal.Entry:
    texts = msg.get("texts") or []
    part = msg.get("part", 1)
    return records.new(
        "model.call",
        message_id=msg["id"],
        model=msg.get("model"),
        stop_reason=msg.get("stop_reason"),
        usage=msg.get("usage") or {},
        tool_use_ids=msg.get("tool_use_ids", []),
        text="\n".join(texts) if texts else None,
        thinking=_thinking(msg.get("thinking") or []),
        transcript_uuid=msg.get("uuid"),
        at=msg.get("timestamp"),
        **({"part": part} if isinstance(part, int) and part > 1 else {}),
    )


def _remember(memory: list[str], item: str) -> list[str]:
    return [*memory[-(LINE_MEMORY - 1):], item]


#: re-exported: the refusal texts and the open prompt live with the host-decided calls
USER_REFUSALS = hostcall.USER_REFUSALS
refused_by_person = hostcall.refused_by_person
waits_on_user = hostcall.waits_on_user


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
        #: message id -> how many model.call records it has (sidecars before parts: a list)
        emitted = st.get("emitted") or {}
        self.emitted: dict[str, int] = (
            dict(emitted) if isinstance(emitted, dict) else dict.fromkeys(emitted, 1))
        self.lines: list[str] = list(st.get("lines") or [])
        self.tools: list[str] = list(st.get("tools") or [])
        #: host-decided calls this read closed (a late PermissionRequest's match)
        self.closed: list[dict[str, Any]] = []

    def emit_pending(self, keep: str | None = None) -> None:
        for mid in [m for m in self.pending if m != keep]:
            self.emit(mid)

    def settle(self, *, flush: bool) -> None:
        """At the end of a read: record each message read so far, but one that may still
        grow without having chosen a tool (no stop reason, no tool use) unless ``flush``."""
        for mid, cur in list(self.pending.items()):
            if flush or cur.get("stop_reason") or cur.get("tool_use_ids"):
                self.emit(mid)

    def emit(self, mid: str) -> None:
        cur = self.pending.pop(mid)
        self.txn.append(_model_call(cur))
        self.emitted.pop(mid, None)
        self.emitted[mid] = int(cur.get("part", 1))
        while len(self.emitted) > EMITTED_MEMORY:
            del self.emitted[next(iter(self.emitted))]

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

    def close_host(self, tid: str) -> bool:
        """Close a host-decided call once its outcome and its authorization are both known:
        the tool_result line (Claude Code's ``permissionDecision``) and, if it ran,
        PostToolUse's observation (:mod:`smllm.journal.hostcall`)."""
        intent = self.open.get(tid)
        res = self.results.get(tid)
        if intent is None or res is None or not hostcall.host_decides(intent):
            return False
        permission = res.get("permission")
        refused = isinstance(permission, dict) and permission.get("decision") == "reject"
        if intent.get("ran") is None and not refused:
            return False  # it ran (or no decision is shown): PostToolUse tells the outcome
        del self.open[tid]
        del self.results[tid]
        self.closed.append(hostcall.close(self.txn, intent, tid, intent.get("key"), res,
                                          observed_via="transcript"))
        return True

    def close_results(self) -> None:
        for tid, res in list(self.results.items()):
            intent = self.open.pop(tid, None)
            if intent is None:
                continue
            if hostcall.host_decides(intent):  # no PostToolUse came: read from the line
                self.closed.append(hostcall.close(self.txn, intent, tid, intent.get("key"),
                                                  res, observed_via="transcript"))
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
        uuid = line.get("uuid")
        if isinstance(uuid, str):
            if uuid in self.lines:  # a line already recorded (the transcript rewritten)
                return
            self.lines = _remember(self.lines, uuid)
        cur = self.pending.get(mid)
        if cur is None:  # a new message, or a late line of one already recorded
            cur = self.pending[mid] = {
                "id": mid, "uuid": uuid, "timestamp": line.get("timestamp"),
                "tool_use_ids": [], "texts": [], "thinking": [],
                "part": self.emitted.get(mid, 0) + 1}
        cur["model"] = msg.get("model") or cur.get("model")
        cur["stop_reason"] = msg.get("stop_reason") or cur.get("stop_reason")
        if isinstance(msg.get("usage"), dict):
            cur["usage"] = msg["usage"]
        self.content(cur, msg.get("content"))

    def content(self, cur: dict[str, Any], content: Any) -> None:
        """What a line adds to its message: text, thinking, tool uses, in order (a message
        left pending by an older smllm has no ``texts`` yet)."""
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for block in content if isinstance(content, list) else []:
            btype = block.get("type") if isinstance(block, dict) else None
            if btype == "text" and isinstance(block.get("text"), str):
                cur.setdefault("texts", []).append(block["text"])
            elif btype == "thinking" and isinstance(block.get("thinking"), str):
                cur.setdefault("thinking", []).append(block["thinking"])
            elif btype == "tool_use":
                tid = block.get("id")
                ids = cur.setdefault("tool_use_ids", [])
                if isinstance(tid, str) and tid not in ids:
                    ids.append(tid)
                    self.tools = _remember(self.tools, tid)

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
                        "permission": line.get("permissionDecision"),
                    }
                    self.close_host(tid)
        self.emit_pending()


#: transcript -> (offset, bytes, size) read before the session lock was taken
_PREFETCHED: dict[str, tuple[int, bytes, int]] = {}
#: tool uses this process already waited for (:func:`prefetch`)
_WAITED: set[str] = set()
#: transcript -> how the wait ended, "found", "missed" or "absent" (:func:`ingest` counts
#: the misses)
_WAIT_FOUND: dict[str, str] = {}


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


def _wait_seconds() -> float:
    raw = os.environ.get("SMLLM_TRANSCRIPT_WAIT", "")
    try:
        value = float(raw) if raw else WAIT_SECONDS
    except ValueError:
        return WAIT_SECONDS
    return value if 0 <= value <= _WAIT_MAX else WAIT_SECONDS


def _knows(st: Mapping[str, Any], tool_use_id: str) -> bool:
    """Has an earlier read already met this tool use (recorded or still pending)?"""
    if tool_use_id in (st.get("tools") or ()):
        return True
    pending = st.get("pending")
    return isinstance(pending, dict) and any(
        isinstance(m, dict) and tool_use_id in (m.get("tool_use_ids") or ())
        for m in pending.values())


def _shows(data: bytes, needle: bytes) -> bool:
    """Does a whole line of ``data`` hold ``needle``? A line the host is still writing
    (no newline yet) is not read until it ends, so it does not count."""
    at = data.find(needle)
    return at >= 0 and data.find(b"\n", at) >= 0


def _wait_for(transcript: str, offset: int, tool_use_id: str,
              got: tuple[int, bytes, int] | None) -> tuple[int, bytes, int] | None:
    """Read again until a whole new line holds ``tool_use_id`` or the wait is over.

    A transcript that is not there yet is waited for too, for at most
    :data:`ABSENT_SECONDS`: Claude Code creates a new session's file when it first writes
    it, which may be after the first tool starts.
    """
    needle = tool_use_id.encode("utf-8", "replace")
    start = time.monotonic()
    deadline = start + _wait_seconds()
    absent = start + min(ABSENT_SECONDS, _wait_seconds())
    while got is None or (not _shows(got[1], needle) and len(got[1]) < READ_LIMIT):
        now = time.monotonic()
        if now >= deadline:
            break
        if got is None and (now >= absent or os.path.lexists(transcript)):
            # a last look: the file is there now, or the path will not become one (past
            # the bound, or a FIFO, folder or device)
            got = _read_from(transcript, offset)
            if got is None:
                break
            continue
        time.sleep(_POLL_SECONDS)
        if got is None or _changed(transcript, got[2]):
            got = _read_from(transcript, offset)
    return got


def _changed(transcript: str, size: int) -> bool:
    """Is the transcript no longer the regular file of ``size`` bytes the wait read (or can
    it not be asked)? One ``stat``: the wait reads again only when the host wrote, or when
    the path became something :func:`_read_from` refuses (a FIFO or a device swapped in
    has the size of an empty file)."""
    try:
        st = os.stat(transcript)
    except OSError:
        return True
    return st.st_size != size or st.st_mode & 0o170000 != 0o100000  # not stat.S_ISREG


def prefetch(log: str, transcript: str | None, *, tool_use_id: str | None = None) -> None:
    """Read what the transcript gained, before taking the session lock on ``log``.

    :func:`ingest`, under the lock, then uses these bytes: the lock is never held while
    reading the transcript. The offset comes from the sidecar as it is now; if another
    hook moves it meanwhile, :func:`ingest` uses the part that is still new.

    With ``tool_use_id`` (PreToolUse), a transcript that does not show that tool use yet
    is read again until it does, for at most :data:`WAIT_SECONDS`, so that the model
    call that chose the tool is journaled before the tool's intent.
    """
    if transcript is None:
        return
    try:
        st = journal.read_state(log).get("transcript")
    except OSError:
        st = None
    st = st if isinstance(st, dict) else {}
    offset = _offset(st, transcript)
    got = _read_from(transcript, offset)
    if tool_use_id is not None and tool_use_id not in _WAITED and (
            st.get("path") != transcript or not _knows(st, tool_use_id)):
        _WAITED.add(tool_use_id)  # once per hook, however many transactions it takes
        if not isinstance(st.get("missed"), int) or st["missed"] < MISS_LIMIT:
            got = _wait_for(transcript, offset, tool_use_id, got)
            _WAIT_FOUND[transcript] = "absent" if got is None else "found" if _shows(
                got[1], tool_use_id.encode("utf-8", "replace")) else "missed"
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


def settle_call(txn: journal.Transaction, tid: str) -> bool:
    """Close the host-decided call ``tid`` if its tool_result line was read already (the
    line came before its PostToolUse): :func:`ingest` keeps such a result until then."""
    st: dict[str, Any] = dict(txn.state.get("transcript") or {})
    results = dict(st.get("results") or {})
    open_intents = dict(txn.state.get("open_intents") or {})
    intent, res = open_intents.get(tid), results.get(tid)
    if intent is None or res is None or not hostcall.host_decides(intent):
        return False
    del open_intents[tid], results[tid]
    closed = hostcall.close(txn, intent, tid, intent.get("key"), res,
                            observed_via="transcript")
    hostcall.remember_closed(txn, [closed])
    st["results"] = results
    txn.set_state("transcript", st)
    txn.set_state("open_intents", open_intents)
    return True


def _count_miss(st: dict[str, Any], ended: str) -> dict[str, Any]:
    """``st`` after a wait that ``ended`` so: a found tool use resets the misses in a row, a
    miss adds one, a transcript still absent ends the waits of the session."""
    missed = st.get("missed")
    count = (missed if isinstance(missed, int) else 0) + 1
    return {**st, "missed": {"found": 0, "absent": MISS_LIMIT}.get(ended, count)}


def ingest(txn: journal.Transaction, transcript: str | None, *, flush: bool = False) -> None:
    """Record what the transcript gained since the last call (under ``txn``'s lock)."""
    if transcript is None:
        return
    st: dict[str, Any] = dict(txn.state.get("transcript") or {})
    if st.get("path") != str(transcript):
        st = {"path": str(transcript), "offset": 0}
    got = _new_bytes(transcript, _offset(st, transcript))
    if got is None:
        found = _WAIT_FOUND.pop(transcript, None)
        if found is not None:  # a wait on a transcript the host has not written
            txn.set_state("transcript", _count_miss(st, found))
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
    work.settle(flush=flush)
    hostcall.remember_closed(txn, work.closed)
    st.update(offset=offset + end, pending=work.pending, results=work.results,
              emitted=work.emitted, lines=work.lines, tools=work.tools)
    found = _WAIT_FOUND.pop(transcript, None)
    txn.set_state("transcript", st if found is None else _count_miss(st, found))
    txn.set_state("open_intents", work.open)
