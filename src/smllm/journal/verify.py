"""``smllm verify``: recompute a journal's hash chain and check its invariants.

It names the first offending line. A torn last line (a crash mid-write) is counted,
not an error; an unparseable line in the middle is accepted only when the next
record declares it in ``skipped`` (the writer that repaired it saw it).

Records cut off the end of a log leave a valid chain, so the log alone cannot show
them: verify compares the log's last record with the heads recorded outside it (the
``head`` file beside the log, :data:`smllm.journal.HEAD_NAME`, and the caller's own, such
as the team store's copy: :func:`smllm.store.audit.head_anchor`) and says how many records
are missing. An anchor that could not be read is kept in the report as unavailable; it
never vouches for the log. A writer that found the log shorter than its head recorded
that in the log itself (``journal.tail_missing``), which verify reports too.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from smllm import journal
from smllm.base.errors import SmllmError
from smllm.base.shapes import Record
from smllm.journal import keyed

ENVELOPE_KEYS = ("sequence", "recorded_at", "record_type", "durability", "payload_type", "payload")


@dataclass(frozen=True)
class Problem:
    line: int
    what: str


@dataclass
class Report:
    """What verify found. ``ok``: the chain and the invariants hold. ``ended``: the log
    has an orderly end (see :attr:`unfinished`); a log that is not a journal is not ok."""

    path: Path
    records: int = 0
    lines: int = 0
    torn: int = 0
    repaired: int = 0
    missing: int = 0
    problems: list[Problem] = field(default_factory=list)
    anchors: list[Anchor] = field(default_factory=list)
    more: int = 0  # problems found beyond PROBLEM_LIMIT (counted, not kept)
    not_journal: str | None = None  # what the file is instead, when it is not a journal
    session: bool = False  # the log records a session (it has a session.start)
    session_end: bool = False  # its last session.start / resumed is followed by an end
    open_effects: list[OpenEffect] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def unfinished(self) -> list[str]:
        """Why the log has no orderly end (empty: it has one, or records no session):
        effects started and never finished, and a session that never ended."""
        why = []
        if self.open_effects:
            shown = ", ".join(f"{e.tool_use_id} (sequence {e.sequence}, line {e.line})"
                              for e in self.open_effects[:5])
            more = len(self.open_effects) - 5
            why.append(f"{len(self.open_effects)} effect(s) started and never finished: "
                       f"{shown}{f' and {more} more' if more > 0 else ''}")
        if self.session and not self.session_end:
            why.append("no session end after the last session start or resume")
        return why

    def fail(self, problem: Problem) -> None:
        if len(self.problems) < PROBLEM_LIMIT:
            self.problems.append(problem)
        else:
            self.more += 1

    def first(self) -> Problem | None:
        return min(self.problems, key=lambda p: p.line) if self.problems else None


#: problems kept in a report (the rest are counted): a log edited throughout stays readable
PROBLEM_LIMIT = 1000
#: durable intents remembered exactly (the most recent; older ones are in the filter)
RECENT_INTENTS = 65_536


class _Seen:
    """A fixed-size Bloom filter over strings: "maybe seen" or "certainly not".

    Verify's memory must not grow with the log, so it cannot keep every idempotency key
    (or every intent's ``tool_use_id``) to find one used twice. The filter answers for all
    of them in a fixed :data:`BITS` bits; a "maybe" is only a candidate, confirmed exactly
    by a second pass over the log (:func:`_confirm`), so no false finding is ever reported.
    The second pass reads the log again only when there is a candidate. False candidates
    are rare below half a million intents (one log in a thousand at 300,000 gets one),
    about ten at a million (the log is then read twice), and one key in fifty at four
    million: that costs time, never a wrong answer.
    """

    BITS = 1 << 25  # 4 MiB
    HASHES = 7

    __slots__ = ("bits",)

    def __init__(self) -> None:
        self.bits = bytearray(self.BITS >> 3)

    def _indexes(self, value: str) -> list[int]:
        digest = hashlib.blake2b(value.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        h1 = int.from_bytes(digest[:8], "little")
        h2 = int.from_bytes(digest[8:], "little") | 1
        mask = self.BITS - 1
        return [(h1 + i * h2) & mask for i in range(self.HASHES)]

    def add(self, value: str) -> bool:
        """Add ``value``; True when it may have been added before."""
        bits = self.bits
        seen = True
        for i in self._indexes(value):
            byte, bit = i >> 3, 1 << (i & 7)
            if not bits[byte] & bit:
                seen = False
                bits[byte] |= bit
        return seen

    def __contains__(self, value: str) -> bool:
        bits = self.bits
        return all(bits[i >> 3] & (1 << (i & 7)) for i in self._indexes(value))


@dataclass
class OpenEffect:
    """An effect started and not finished (no terminal record) when the log ends."""

    line: int
    sequence: int
    tool_use_id: str


class _Checker:
    """One pass over a log. Its state is per open effect, not per record: the effects
    started and not finished, a bounded window of recent intents, two fixed-size filters,
    and the candidates the filters raised (see :class:`_Seen`)."""

    def __init__(self, report: Report) -> None:
        self.report = report
        self.prev_hash = journal.GENESIS
        self.prev_seq = 0
        self.prev_line = 0
        self.unparsed_since: list[int] = []
        self.intents: dict[str, int] = {}  # tool_use_id -> line of its durable intent (recent)
        self.intent_filter = _Seen()  # every durable intent's tool_use_id
        self.key_filter = _Seen()  # every idempotency key
        self.key_candidates: dict[str, list[int]] = {}  # key -> lines that may repeat it
        self.start_candidates: dict[str, list[int]] = {}  # tool_use_id -> starts to confirm
        self.hashes: dict[int, str] = {}  # sequence -> hash, for the anchored heads only
        self.wanted: set[int] = set()
        self.valid = 0  # records with every envelope key
        self.lifecycle: str | None = None  # the last session.start / resumed / end seen
        self.open: dict[str, OpenEffect] = {}  # tool_use_id -> its started record
        self.keyed: KeyedCheck | None = None  # the MAC of each record, when the log is keyed

    def fail(self, line: int, what: str) -> None:
        self.report.fail(Problem(line, what))

    def record(self, line: journal.Line, rec: Record) -> None:
        n = line.number
        missing = [k for k in ENVELOPE_KEYS if k not in rec]
        if missing:
            self.fail(n, f"not a journal record (missing {', '.join(missing)})")
            return
        self.valid += 1
        before = len(self.report.problems) + self.report.more
        declared, actual = journal.line_hash(line.raw)
        if declared is None or declared != actual:
            self.fail(n, "record was edited: its hash does not match its content")
        skipped = rec.get("skipped", 0)
        if skipped != len(self.unparsed_since):
            where = self.unparsed_since[0] if self.unparsed_since else n
            self.fail(where, "unparseable or inserted line not declared by the next record")
        self.report.repaired += len(self.unparsed_since)
        self.unparsed_since = []
        if rec.get("prev") != self.prev_hash:
            after = f"line {self.prev_line}" if self.prev_line else "the start of the log"
            self.fail(
                n,
                f"record does not follow {after}: a record was removed, inserted "
                "or reordered here",
            )
        if rec["sequence"] != self.prev_seq + 1:
            self.fail(n, f"sequence {rec['sequence']} follows {self.prev_seq} (expected "
                         f"{self.prev_seq + 1})")
        self.prev_hash = declared or ""
        if self.keyed is not None and before == len(self.report.problems) + self.report.more:
            self.keyed.check(n, rec["sequence"], self.prev_hash, self.fail)
        if rec["sequence"] in self.wanted:
            self.hashes[rec["sequence"]] = self.prev_hash
        self.prev_seq = rec["sequence"]
        self.prev_line = n
        self.invariants(n, rec)

    def invariants(self, n: int, rec: Record) -> None:
        kind = journal.kind_of(rec)
        if kind in _LIFECYCLE:
            self.lifecycle = kind
        if kind not in _CHECKED:
            return
        body = journal.body_of(rec)
        tid = body.get("tool_use_id")
        if kind == journal.TAIL_MISSING:
            missing = body.get("missing")
            self.report.missing += missing if isinstance(missing, int) else 0
            self.fail(n, f"{missing} record(s) were cut from the end of the log after sequence "
                         f"{body.get('log_ended_at')} (its head was sequence "
                         f"{body.get('head_sequence')}, seen by the next writer)")
        elif kind == "side_effect_intent":
            self.intent(n, rec, body, tid)
        elif kind == "tool_batch.effect.started":
            if isinstance(tid, str):
                self.open[tid] = OpenEffect(n, int(rec["sequence"]), tid)
            if isinstance(tid, str) and tid in self.intents:
                return
            if isinstance(tid, str) and tid in self.intent_filter:
                self.start_candidates.setdefault(tid, []).append(n)  # confirmed in pass 2
                return
            self.fail(n, _no_intent(tid))
        elif isinstance(tid, str):  # a terminal record: the effect is finished
            self.open.pop(tid, None)
            self.intents.pop(tid, None)


    def intent(self, n: int, rec: Record, body: dict[str, Any], tid: object) -> None:
        key = body.get("idempotency_key")
        if isinstance(key, str) and self.key_filter.add(key):
            self.key_candidates.setdefault(key, []).append(n)  # confirmed in pass 2
        if isinstance(tid, str) and rec.get("durability") == "durable":
            self.intents[tid] = n
            self.intent_filter.add(tid)
            if len(self.intents) > RECENT_INTENTS:
                del self.intents[next(iter(self.intents))]


def _no_intent(tid: object) -> str:
    return f"effect {tid} started without a durable side_effect_intent before it"


_LIFECYCLE = frozenset({"session.start", "session.resumed", "session.end"})
_CHECKED = frozenset({journal.TAIL_MISSING, "side_effect_intent", "tool_batch.effect.started",
                      "tool_batch.effect.terminal"})


def _confirm(checker: _Checker, lines: Iterable[journal.Line]) -> None:
    """Pass 2, only when pass 1's filters raised candidates: which repeats are real."""
    keys, starts = checker.key_candidates, checker.start_candidates
    first_key: dict[str, int] = {}
    intent_at: dict[str, int] = {}
    for line in lines:
        rec = line.record
        if line.status != "record" or rec is None or any(k not in rec for k in ENVELOPE_KEYS):
            continue
        kind = journal.kind_of(rec)
        if kind not in ("side_effect_intent", "tool_batch.effect.started"):
            continue
        body = journal.body_of(rec)
        n = line.number
        if kind == "side_effect_intent":
            key = body.get("idempotency_key")
            if isinstance(key, str) and key in keys:
                if key in first_key and n in keys[key]:
                    checker.fail(n, f"idempotency key {key} already used on line "
                                    f"{first_key[key]}")
                first_key.setdefault(key, n)
            tid = body.get("tool_use_id")
            if isinstance(tid, str) and tid in starts and rec.get("durability") == "durable":
                intent_at.setdefault(tid, n)
        else:
            tid = body.get("tool_use_id")
            if isinstance(tid, str) and n in starts.get(tid, ()) and intent_at.get(tid, n) >= n:
                checker.fail(n, _no_intent(tid))


class KeyedCheck:
    """Each record's MAC under smllm's key (:mod:`smllm.journal.keyed`), for a log the
    key's register lists. A record whose chain is otherwise intact but whose MAC is
    missing or wrong was written by a process without the key."""

    def __init__(self, secret: bytes, macs: keyed.Slots) -> None:
        self.secret = secret
        self.macs = macs
        self.checked = 0

    def check(self, n: int, sequence: object, digest: str,
              fail: Callable[[int, str], None]) -> None:
        if not isinstance(sequence, int):
            return
        found = self.macs.get(sequence)
        self.checked += 1
        if found is None:
            fail(n, f"record has no MAC in {keyed.MAC_NAME}: it was not written by smllm "
                    "with this user's key (forged, or its MAC file was cut)")
        elif not hmac.compare_digest(found, keyed.mac(self.secret, digest)):
            fail(n, "record's MAC does not match its hash: the chain was rewritten by a "
                    "process without smllm's key (forged)")


def key_anchor(path: Path) -> tuple[Anchor, KeyedCheck | None]:
    """The keyed check of ``path``: its anchor (for the report) and the check, or None
    when there is no key, or the log was not created with it."""
    where = f"smllm's journal key ({keyed.key_file()})"
    try:
        secret = keyed.key(create=False)
    except SmllmError as exc:
        return Anchor("key", where, None, None, exc.what), None
    if secret is None:
        return Anchor("key", where, None, None, "no key on this machine: the chain is "
                                                "checked unkeyed"), None
    if not keyed.registered(str(path)):
        return Anchor("key", where, None, None, "the log is not in the key's register "
                                                "(written before the key existed, or moved "
                                                "here): the chain is checked unkeyed"), None
    return Anchor("key", where, 0, None), KeyedCheck(secret, keyed.Slots(str(path)))


class Anchor:
    """A head of the log recorded outside it: which (``head``, ``store``), where, and the
    last record it saw (sequence 0: it holds none yet), or why it could not be read."""

    __slots__ = ("error", "hash", "kind", "sequence", "where")

    def __init__(self, kind: str, where: str, sequence: int | None, digest: str | None,
                 error: str | None = None) -> None:
        self.kind = kind
        self.where = where
        self.sequence = sequence
        self.hash = digest
        self.error = error

    @property
    def available(self) -> bool:
        return self.error is None and self.sequence is not None

    def as_json(self) -> dict[str, object]:
        return {"kind": self.kind, "where": self.where, "available": self.available,
                "sequence": self.sequence, "error": self.error}


def anchors(path: Path) -> list[Anchor]:
    """The heads of ``path`` recorded beside it: the ``head`` file."""
    where = f"the head recorded beside it ({journal.HEAD_NAME})"
    try:
        head = journal.read_head(path)
    except OSError as exc:
        return [Anchor("head", where, None, None, f"unreadable: {exc.strerror or exc}")]
    if head is None:
        return [Anchor("head", where, None, None, "no head file beside the log")]
    return [Anchor("head", where, head[0], head[1])]


EXPORT_HINT = "verify an export's hash chain with `smllm verify --export PATH`"
_SNIFF = 4096


def sniff(path: Path) -> str | None:
    """What ``path`` is when it is plainly not a journal (empty, an smllm export); None
    when it may be one (the pass over its lines decides)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(_SNIFF)
    except OSError:
        return None  # the pass reports it as the journal readers do
    if not head:
        return "the file is empty (a journal holds at least its first record)"
    if head.startswith(b"{\n") or b'"export_schema_version"' in head:
        return (f"it is an smllm export (one JSON document), not a journal; {EXPORT_HINT}")
    return None


def _not_journal(report: Report, lines: int, first: bytes | None) -> str:
    if not lines:
        return "the file is empty (a journal holds at least its first record)"
    start = (first or b"")[:60].decode("utf-8", "backslashreplace")
    return (f"none of its {lines} line(s) is a journal record (it starts with {start!r}); "
            f"a journal is the session.jsonl the hooks write; {EXPORT_HINT} instead")


def verify(path: Path, more: Iterable[Anchor] = ()) -> Report:
    """Check ``path`` against its own head and the anchors in ``more``; the report lists
    problems in line order. A file that is not a journal (empty, an export, text with no
    journal record) gets one problem saying what it is, on line 1."""
    report = Report(path)
    found = sniff(path)
    if found is not None:
        return _refused(report, found)
    key, checker = key_anchor(path)
    report.anchors = [*anchors(path), *more, key]
    try:
        return check(report, lambda: journal.iter_lines(path), checker)
    finally:
        if checker is not None:
            checker.macs.close()
            key.sequence = checker.checked


def check(report: Report, lines: Callable[[], Iterable[journal.Line]],
          macs: KeyedCheck | None = None) -> Report:
    """Check the lines of one log (``lines()`` gives them from the start, each time it is
    called: a second pass runs only when the first raised candidates, see :class:`_Seen`)
    against ``report.anchors``; fill ``report`` in and return it."""
    checker = _Checker(report)
    checker.keyed = macs
    heads = [a for a in report.anchors if a.available and a.sequence and a.kind != "key"]
    checker.wanted = {a.sequence for a in heads if a.sequence is not None}
    first: bytes | None = None
    for line in lines():
        report.lines += 1
        if first is None:
            first = line.raw
        if line.status == "torn":
            report.torn += 1
            continue
        if line.status == "unparseable" or line.record is None:
            checker.unparsed_since.append(line.number)
            continue
        report.records += 1
        checker.record(line, line.record)
    if not checker.valid:
        return _refused(report, _not_journal(report, report.lines, first))
    if checker.key_candidates or checker.start_candidates:
        _confirm(checker, lines())
    # complete unparseable lines after the last record: a torn write whose newline landed
    report.torn += len(checker.unparsed_since)
    report.session = checker.lifecycle is not None
    report.session_end = checker.lifecycle == "session.end"
    report.open_effects = sorted(checker.open.values(), key=lambda e: e.line)
    _check_heads(checker, heads, report.lines + 1)
    report.problems.sort(key=lambda p: p.line)
    return report


def _refused(report: Report, found: str) -> Report:
    report.not_journal = found
    report.problems = [Problem(1, f"not a journal: {found}")]
    return report


def _check_heads(checker: _Checker, heads: list[Anchor], end: int) -> None:
    cut = 0  # the anchors each count the same records cut from the end: the most of them
    for anchor in heads:
        if anchor.sequence is None:
            continue
        if anchor.sequence > checker.prev_seq:
            gone = anchor.sequence - checker.prev_seq
            cut = max(cut, gone)
            checker.fail(end, f"{gone} record(s) missing at the end of the log: it ends at "
                              f"sequence {checker.prev_seq}, {anchor.where} says sequence "
                              f"{anchor.sequence}")
        elif anchor.hash is not None and checker.hashes.get(anchor.sequence) != anchor.hash:
            checker.fail(end, f"record {anchor.sequence} differs from the head in "
                              f"{anchor.where}: the log was rewritten")
    checker.report.missing += cut
