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

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from smllm import journal
from smllm.base.shapes import Record

ENVELOPE_KEYS = ("sequence", "recorded_at", "record_type", "durability", "payload_type", "payload")


@dataclass(frozen=True)
class Problem:
    line: int
    what: str


@dataclass
class Report:
    path: Path
    records: int = 0
    lines: int = 0
    torn: int = 0
    repaired: int = 0
    missing: int = 0
    problems: list[Problem] = field(default_factory=list)
    anchors: list[Anchor] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def first(self) -> Problem | None:
        return min(self.problems, key=lambda p: p.line) if self.problems else None


class _Checker:
    def __init__(self, report: Report) -> None:
        self.report = report
        self.prev_hash = journal.GENESIS
        self.prev_seq = 0
        self.prev_line = 0
        self.unparsed_since: list[int] = []
        self.intents: dict[str, int] = {}  # tool_use_id -> line of its durable intent
        self.keys: dict[str, int] = {}
        self.hashes: dict[int, str] = {}  # sequence -> hash, for the anchored heads only
        self.wanted: set[int] = set()

    def fail(self, line: int, what: str) -> None:
        self.report.problems.append(Problem(line, what))

    def record(self, line: journal.Line, rec: Record) -> None:
        n = line.number
        missing = [k for k in ENVELOPE_KEYS if k not in rec]
        if missing:
            self.fail(n, f"not a journal record (missing {', '.join(missing)})")
            return
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
        if rec["sequence"] in self.wanted:
            self.hashes[rec["sequence"]] = self.prev_hash
        self.prev_seq = rec["sequence"]
        self.prev_line = n
        self.invariants(n, rec)

    def invariants(self, n: int, rec: Record) -> None:
        kind = journal.kind_of(rec)
        body = journal.body_of(rec)
        if kind == journal.TAIL_MISSING:
            missing = body.get("missing")
            self.report.missing += missing if isinstance(missing, int) else 0
            self.fail(n, f"{missing} record(s) were cut from the end of the log after sequence "
                         f"{body.get('log_ended_at')} (its head was sequence "
                         f"{body.get('head_sequence')}, seen by the next writer)")
        elif kind == "side_effect_intent":
            key = body.get("idempotency_key")
            if isinstance(key, str):
                if key in self.keys:
                    self.fail(n, f"idempotency key {key} already used on line {self.keys[key]}")
                self.keys[key] = n
            tid = body.get("tool_use_id")
            if isinstance(tid, str) and rec.get("durability") == "durable":
                self.intents[tid] = n
        elif kind == "tool_batch.effect.started":
            tid = body.get("tool_use_id")
            if not isinstance(tid, str) or tid not in self.intents:
                self.fail(n, f"effect {tid} started without a durable side_effect_intent "
                             "before it")


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


def verify(path: Path, more: Iterable[Anchor] = ()) -> Report:
    """Check ``path`` against its own head and the anchors in ``more``; the report lists
    problems in line order."""
    report = Report(path)
    checker = _Checker(report)
    report.anchors = [*anchors(path), *more]
    heads = [a for a in report.anchors if a.available and a.sequence]
    checker.wanted = {a.sequence for a in heads if a.sequence is not None}
    for line in journal.iter_lines(path):
        report.lines += 1
        if line.status == "torn":
            report.torn += 1
            continue
        if line.status == "unparseable" or line.record is None:
            checker.unparsed_since.append(line.number)
            continue
        report.records += 1
        checker.record(line, line.record)
    # complete unparseable lines after the last record: a torn write whose newline landed
    report.torn += len(checker.unparsed_since)
    end = report.lines + 1
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
    report.missing += cut
    report.problems.sort(key=lambda p: p.line)
    return report
