"""One pass over a session's logs, kept and extended as records land.

The viewer reads a journal once per change: a :class:`StreamScan` remembers how far it
read (whole lines only, so a line being written is never half-read) and reads only
what was appended since. From that pass it keeps what the pages need without keeping
the records: the offset of every line (a timeline page seeks straight to it), the
session's facts and diagnostics (an export :class:`~smllm.audit.export.Tally`: counted
by the code that counts them for ``smllm export``), its first prompt, the side effects
(intent joined with its start and its terminal record) and the approval chains (which
lines belong to which ``pending_action_id``).

Values are raw here; redaction happens when a page is rendered.
"""

from __future__ import annotations

import threading
import time
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from smllm import journal
from smllm.audit import export
from smllm.audit.ledger import is_edit, tool_of
from smllm.base import jsonfast
from smllm.index.facets import TARGET_KEYS

_CHUNK = 1 << 20
_EFFECT_STEPS = frozenset({"tool_batch.effect.started", "tool_batch.effect.terminal",
                           "effect.reconciled"})
#: the export's diagnostics the session page shows, in its order
SHOWN_DIAGNOSTICS = ("unparseable_lines", "torn_lines", "unknown_payload_kinds",
                     "sequence_gaps", "omitted_live_only", "duplicate_records")
#: records that belong to an approval chain by their own ``pending_action_id``
CHAIN_KINDS = frozenset({"approval.review", "approval_wait.effect.started",
                         "stage_requirement_resolved", "decision_applied",
                         "approval_wait.effect.terminal", "side_effect_intent"})


def what_ran(body: dict[str, Any]) -> str:
    """The command, path or URL an intent names (its whole input when none of those)."""
    inp = body.get("input")
    if isinstance(inp, dict):
        for key in TARGET_KEYS:
            value = inp.get(key)
            if isinstance(value, str):
                return value
        return journal_text(inp)
    return journal_text(inp) if inp is not None else ""


def journal_text(value: Any) -> str:
    """A JSON value as compact text (strings as they are)."""
    if isinstance(value, str):
        return value
    return jsonfast.dumps(value)


@dataclass(slots=True)
class Effect:
    """A side effect: its intent, and what was observed of it afterwards."""

    stream: str
    line: int
    sequence: int
    tool: str
    what: str
    decision: str
    rule: str | None
    reason: str | None
    pending_action_id: str | None
    tool_use_id: str | None
    started: int | None = None
    terminal_line: int | None = None
    outcome: str | None = None
    observed_via: str | None = None
    authorized_by: str | None = None
    reconciled_line: int | None = None

    @property
    def edit(self) -> bool:
        return is_edit(self.tool)

    @property
    def denied(self) -> bool:
        return self.decision.startswith("deny")


@dataclass(slots=True)
class ChainIndex:
    """Where one approval chain's records are (line numbers in one stream)."""

    pending_action_id: str
    stream: str
    lines: list[int] = field(default_factory=list)
    action: Any = None
    decision: str | None = None
    decided_by: str | None = None
    intent_sequence: int | None = None


@dataclass
class StreamScan:
    """What one pass learned about one log; :meth:`update` reads what was appended."""

    name: str
    path: Path
    consumed: int = 0
    torn_bytes: int = 0
    offsets: array = field(default_factory=lambda: array("q"))  # type: ignore[type-arg]
    tally: export.Tally = field(default_factory=export.Tally)
    first_prompt: str | None = None
    model_calls: int = 0
    crashes: int = 0  # session.end crash_inferred: a resume found no orderly end
    resumes: int = 0  # session.resumed
    effects: list[Effect] = field(default_factory=list)
    chains: dict[str, ChainIndex] = field(default_factory=dict)
    _by_tool_use: dict[str, Effect] = field(default_factory=dict)
    _by_intent_seq: dict[int, Effect] = field(default_factory=dict)
    _size: int = 0

    @property
    def lines(self) -> int:
        return len(self.offsets)

    @property
    def running(self) -> bool:
        """No ``session.end`` after the last start: running, or it crashed."""
        return self.tally.session_end is None

    # ------------------------------------------------------------------ reading

    def size(self) -> int:
        try:
            return self.path.stat().st_size
        except OSError:
            return self.consumed

    @property
    def complete(self) -> bool:
        """Has every complete line the log had at the last update been read?"""
        return self._size <= self.consumed + self.torn_bytes

    def update(self, deadline: float | None = None, until_lines: int = 0) -> bool:
        """Read the lines appended since the last call; True when there were any.

        With a ``deadline`` (``time.monotonic()``), stop reading once it passes, but not
        before ``until_lines`` lines are known; the next call goes on from there.
        """
        size = self.size()
        if size < self.consumed:  # truncated or replaced: start again
            self.__dict__.update(StreamScan(self.name, self.path).__dict__)
        self._size = size
        if size == self.consumed + self.torn_bytes:
            return False
        before = self.lines
        with open(self.path, "rb") as fh:
            fh.seek(self.consumed)
            left = size - self.consumed
            start = self.consumed
            rest = b""
            while left > 0:
                chunk = fh.read(min(_CHUNK, left))
                if not chunk:
                    break
                left -= len(chunk)
                data = rest + chunk
                cut = data.rfind(b"\n")
                if cut < 0:
                    rest = data
                    continue
                start = self._lines(start, data[:cut])
                rest = data[cut + 1:]
                if (deadline is not None and self.lines >= until_lines
                        and time.monotonic() > deadline):
                    rest = b""
                    break
            self.consumed = start
            self.torn_bytes = len(rest)
        self.tally.torn_lines = 1 if rest else 0
        return self.lines != before

    def _lines(self, start: int, block: bytes) -> int:
        for raw in block.split(b"\n"):
            self._line(start, raw)
            start += len(raw) + 1
        return start

    def _line(self, offset: int, raw: bytes) -> None:
        self.offsets.append(offset)
        rec = journal.parse_line(raw)
        if rec is None:
            self.tally.unparseable_lines += 1
            return
        kind = self.tally.record(rec, raw)
        if kind == "model.call":
            self.model_calls += 1
        elif kind == "proposed":
            prompt = journal.body_of(rec).get("prompt")
            if self.first_prompt is None and isinstance(prompt, str):
                self.first_prompt = prompt
        elif kind == "session.resumed":
            self.resumes += 1
        elif kind == "session.end":
            self.crashes += journal.body_of(rec).get("exit_reason") == "crash_inferred"
        elif kind in _EFFECT_STEPS:
            self._effect_step(self.lines, rec["sequence"], kind, journal.body_of(rec))
        elif kind in CHAIN_KINDS:
            self._chain_step(self.lines, rec["sequence"], kind, journal.body_of(rec))

    def _intent(self, line: int, seq: int, body: dict[str, Any]) -> None:
        pid = body.get("pending_action_id")
        tid = body.get("tool_use_id")
        effect = Effect(
            stream=self.name, line=line, sequence=seq, tool=tool_of(body),
            what=what_ran(body), decision=str(body.get("policy_decision") or "?"),
            rule=body.get("rule") if isinstance(body.get("rule"), str) else None,
            reason=body.get("reason") if isinstance(body.get("reason"), str) else None,
            pending_action_id=pid if isinstance(pid, str) and pid else None,
            tool_use_id=tid if isinstance(tid, str) else None)
        self.effects.append(effect)
        self._by_intent_seq[seq] = effect
        if effect.tool_use_id is not None:
            self._by_tool_use[effect.tool_use_id] = effect

    def _effect_step(self, line: int, seq: int, kind: str, body: dict[str, Any]) -> None:
        effect = self._find(body)
        if effect is None:
            return
        if kind == "tool_batch.effect.started":
            effect.started = seq if effect.started is None else effect.started
        elif kind == "tool_batch.effect.terminal":
            if effect.terminal_line is None:
                effect.terminal_line = line
                effect.outcome = str(body.get("outcome") or "?")
                via = body.get("observed_via")
                effect.observed_via = via if isinstance(via, str) else None
                who = body.get("authorized_by")
                effect.authorized_by = who if isinstance(who, str) else None
        else:
            effect.reconciled_line = line
        chain = self.chains.get(effect.pending_action_id or "")
        if chain is not None and kind != "effect.reconciled":
            chain.lines.append(line)

    def _find(self, body: dict[str, Any]) -> Effect | None:
        seq = body.get("intent_sequence")
        if isinstance(seq, int) and seq in self._by_intent_seq:
            return self._by_intent_seq[seq]
        tid = body.get("tool_use_id")
        return self._by_tool_use.get(tid) if isinstance(tid, str) else None

    def _chain_step(self, line: int, seq: int, kind: str, body: dict[str, Any]) -> None:
        if kind == "side_effect_intent":
            self._intent(line, seq, body)
        pid = body.get("pending_action_id")
        if not isinstance(pid, str) or not pid:
            return
        chain = self.chains.get(pid)
        if chain is None:
            chain = self.chains[pid] = ChainIndex(pid, self.name)
        chain.lines.append(line)
        if kind == "approval.review" and chain.action is None:
            chain.action = body
        elif kind == "decision_applied":
            chain.decision = str(body.get("decision") or "?")
            src = body.get("decision_source")
            who = src.get("kind") if isinstance(src, dict) else src
            chain.decided_by = str(who) if who else None
        elif kind == "side_effect_intent":
            chain.intent_sequence = seq

    # ------------------------------------------------------------------ lines back

    def read_lines(self, first: int, count: int) -> Iterator[tuple[int, bytes]]:
        """Lines ``first`` .. ``first + count - 1`` (1-based) as (number, bytes)."""
        first = max(first, 1)
        last = min(first + count - 1, self.lines)
        if last < first:
            return
        start = self.offsets[first - 1]
        end = self.offsets[last] if last < self.lines else self.consumed
        with open(self.path, "rb") as fh:
            fh.seek(start)
            data = fh.read(end - start)
        number = first
        for raw in data.split(b"\n")[: last - first + 1]:
            yield number, raw
            number += 1

    def read_line(self, number: int) -> bytes | None:
        for _, raw in self.read_lines(number, 1):
            return raw
        return None


@dataclass
class SessionScan:
    """A session: its main log and the logs of its subagents."""

    main: StreamScan
    subagents: dict[str, StreamScan] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def streams(self) -> list[StreamScan]:
        return [self.main, *(self.subagents[k] for k in sorted(self.subagents))]

    def stream(self, name: str) -> StreamScan | None:
        return self.main if name == "main" else self.subagents.get(name)

    @property
    def complete(self) -> bool:
        return all(s.complete for s in self.streams)

    def progress(self) -> float:
        """The share of the logs' bytes read so far."""
        total = sum(s._size for s in self.streams) or 1
        return min(1.0, sum(s.consumed + s.torn_bytes for s in self.streams) / total)

    def update(self, deadline: float | None = None, until_lines: int = 0) -> bool:
        """Bring every stream up to date (new subagent logs included); see
        :meth:`StreamScan.update` for ``deadline`` and ``until_lines``."""
        with self.lock:
            changed = False
            for name, log in export.subagent_logs(self.main.path):
                if name not in self.subagents:
                    self.subagents[name] = StreamScan(name, log)
            for stream in self.streams:
                want = until_lines if stream is self.main else 0
                changed = stream.update(deadline, want) or changed
            return changed

    def effects(self) -> list[Effect]:
        return [e for s in self.streams for e in s.effects]

    def chains(self) -> list[ChainIndex]:
        return [c for s in self.streams for c in s.chains.values()]

    def chain(self, pending_action_id: str) -> ChainIndex | None:
        for s in self.streams:
            if pending_action_id in s.chains:
                return s.chains[pending_action_id]
        return None

    def diagnostics(self) -> dict[str, int]:
        """The session's diagnostics as ``smllm export`` counts them (those the page
        shows)."""
        total = export.diagnostics(s.tally for s in self.streams)
        return {k: total[k] for k in SHOWN_DIAGNOSTICS}
