"""``smllm export``: one session's journal as one self-contained JSON document.

The document (``export_schema_version`` 1) is a pure function of the log bytes and
the flags: no wall clock, no absolute path, byte-identical for identical input. It is
produced in two streaming passes over each stream (the main log, then every
``subagent/<id>/session.jsonl`` in name order), so memory does not grow with the
size of the log:

1. a scan that computes the summaries and the diagnostics;
2. a copy that writes one ``events`` element per physical line.

Each stream is read only up to the size it had when the export began, so exporting a
live session is consistent. The file layout is fixed (one top-level key per line, one
event per line), which lets :func:`read` stream an export back; any other JSON
rendering of the same document is read too, whole.

Event elements::

    {"kind":"record","stream":"main","line":7,"envelope":{...the log line...}}
    {"kind":"unparseable","stream":"main","line":9,"raw":"garbage"}
    {"kind":"torn","stream":"main","line":12,"raw":"{\\"sequence\\":1"}

In a raw export the envelope is the log line's exact bytes, so its ``hash`` can be
re-verified from the export; ``--redacted`` rewrites payload strings (see
:mod:`smllm.base.secrets`) and keeps the envelope fields. Redacted, pass 1 also learns
every secret value the rules find in any stream, and pass 2 masks each wherever it
occurs (a copy in another record, a body line of a key, a fragment quoted in a reason).
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

from smllm import journal
from smllm.audit import outfile
from smllm.audit.outfile import Target
from smllm.base import build, jsonfast, secretscreen
from smllm.base import secrets as redact
from smllm.base.errors import ExportError
from smllm.base.shapes import Record
from smllm.journal import records

SCHEMA_VERSION = 1
Redaction = Literal["raw", "redacted"]

#: Record kinds (``payload.event.kind // payload_type``) smllm's writers produce.
KNOWN_KINDS = frozenset(records.KINDS)
_LIFECYCLE = frozenset({"session.start", "session.end", "session.resumed", "session.compacted"})
_OMITTED = b'{"omitted_live_only":{'
_CHUNK = 1 << 20


# --------------------------------------------------------------------- streams


@dataclass(frozen=True)
class Stream:
    """One log of a session, read up to ``size`` bytes."""

    name: str
    path: Path
    size: int


def subagent_logs(main: Path) -> Iterator[tuple[str, Path]]:
    """(stream name ``subagent/<id>``, its log) of every subagent log beside the main
    log ``main``, in name order."""
    sub = main.parent / "subagent"
    if sub.is_dir():
        for agent in sorted(os.listdir(sub)):
            log = sub / agent / journal.LOG_NAME
            if log.is_file():
                yield f"subagent/{agent}", log


def streams(main: Path) -> list[Stream]:
    """The main log and every subagent log beside it, in a fixed order."""
    return [Stream("main", main, main.stat().st_size),
            *(Stream(name, log, log.stat().st_size) for name, log in subagent_logs(main))]


@dataclass(frozen=True)
class RawLine:
    number: int
    raw: bytes
    complete: bool


def raw_lines(stream: Stream, digest: Any = None) -> Iterator[RawLine]:
    """The physical lines of ``stream`` (without newline), streaming, up to its size."""
    left = stream.size
    number = 0
    rest = b""
    with open(stream.path, "rb") as fh:
        while left > 0:
            chunk = fh.read(min(_CHUNK, left))
            if not chunk:
                break
            left -= len(chunk)
            if digest is not None:
                digest.update(chunk)
            parts = (rest + chunk).split(b"\n")
            rest = parts.pop()
            for raw in parts:
                number += 1
                yield RawLine(number, raw, True)
    if rest:
        yield RawLine(number + 1, rest, False)


# --------------------------------------------------------------------- pass 1: scan


class SequenceSet:
    """The sequences seen so far, as sorted disjoint runs ``[first, last]``.

    Memory grows with the number of runs (at most the number of records), never with
    the values: a record claiming ``sequence`` 10**18 costs one run, and a gapless log
    is one run however long.
    """

    __slots__ = ("firsts", "lasts")

    def __init__(self) -> None:
        self.firsts: list[int] = []
        self.lasts: list[int] = []

    def __len__(self) -> int:
        return len(self.firsts)

    def add(self, seq: int) -> bool:
        """Add ``seq``; True if it was already there."""
        firsts, lasts = self.firsts, self.lasts
        if lasts and seq == lasts[-1] + 1:  # the usual case: the next record
            lasts[-1] = seq
            return False
        i = bisect.bisect_right(firsts, seq) - 1  # the run starting at or before seq
        if i >= 0 and seq <= lasts[i]:
            return True
        joins_left = i >= 0 and lasts[i] == seq - 1
        joins_right = i + 1 < len(firsts) and firsts[i + 1] == seq + 1
        if joins_left and joins_right:
            lasts[i] = lasts[i + 1]
            del firsts[i + 1], lasts[i + 1]
        elif joins_left:
            lasts[i] = seq
        elif joins_right:
            firsts[i + 1] = seq
        else:
            firsts.insert(i + 1, seq)
            lasts.insert(i + 1, seq)
        return False


class Tally:
    """What one log's lines add up to: the facts of its summary and its diagnostics.

    The one place they are counted: :func:`scan` feeds it a whole stream, and the viewer
    (:mod:`smllm.serve.sessionscan`) keeps one per stream and feeds it each line as it is
    appended, so both count a log's problems the same way. The reader counts the lines
    that are not records (``unparseable_lines``; ``torn_lines``: 1 while the last line
    has no newline yet); :meth:`record` counts the rest.
    """

    __slots__ = ("agent_id", "build", "cwd", "duplicate_records", "first_recorded_at",
                 "harness", "last_recorded_at", "max_sequence", "model", "omitted_live_only",
                 "records", "seen", "sequence_gaps", "session_end", "session_id", "step_count",
                 "torn_lines", "turn_count", "unknown_payload_kinds", "unparseable_lines")

    def __init__(self) -> None:
        self.records = 0
        self.turn_count = 0
        self.step_count = 0
        self.first_recorded_at: str | None = None
        self.last_recorded_at: str | None = None
        self.session_id: str | None = None
        self.agent_id: str | None = None
        self.cwd: str | None = None
        self.model: str | None = None
        #: the agent CLI when not Claude Code (``session.start`` names it: ``codex``, …)
        self.harness: str | None = None
        self.build: Any = None
        self.session_end: dict[str, Any] | None = None
        self.max_sequence = 0
        self.seen = SequenceSet()
        self.unparseable_lines = 0  # whole lines that are not records
        self.torn_lines = 0
        self.unknown_payload_kinds = 0
        self.sequence_gaps = 0
        self.omitted_live_only = 0
        self.duplicate_records = 0

    def record(self, rec: Record, raw: bytes) -> str | None:
        """Count one record (``raw``: its line); return its kind, or None when there is
        nothing more to learn from it (no kind, or a sequence already counted: a
        duplicate)."""
        self.records += 1
        seq = rec["sequence"]
        at = rec.get("recorded_at")
        if isinstance(at, str):
            self.first_recorded_at = self.first_recorded_at or at
            self.last_recorded_at = at
        if seq >= 0 and self.seen.add(seq):
            self.duplicate_records += 1
            return None
        if seq > self.max_sequence + 1:
            self.sequence_gaps += 1
        self.max_sequence = max(self.max_sequence, seq)
        self.omitted_live_only += raw.count(_OMITTED)
        kind = journal.kind_of(rec)
        if kind not in KNOWN_KINDS:
            self.unknown_payload_kinds += 1
        if kind in _LIFECYCLE:
            self._lifecycle(kind, journal.body_of(rec))
        else:
            self.step_count += 1
            if kind == "accepted":
                self.turn_count += 1
        return kind

    def _lifecycle(self, kind: str, body: dict[str, Any]) -> None:
        if kind == "session.start":
            for key in ("session_id", "agent_id", "cwd", "model", "harness"):
                if getattr(self, key) is None and isinstance(body.get(key), str):
                    setattr(self, key, body[key])
            if self.build is None:
                self.build = body.get("build")
            self.session_end = None
        elif kind == "session.resumed":
            self.session_end = None
        elif kind == "session.end":
            self.session_end = {"exit_reason": body.get("exit_reason"),
                                "uptime_ms": body.get("uptime_ms")}

    def diagnostics(self) -> dict[str, int]:
        """The export's ``diagnostics`` counters of this log (a torn line counts as
        unparseable too)."""
        return {
            "unparseable_lines": self.unparseable_lines + self.torn_lines,
            "unknown_payload_kinds": self.unknown_payload_kinds,
            "gaps": self.sequence_gaps + self.omitted_live_only,
            "omitted_live_only": self.omitted_live_only,
            "duplicate_records": self.duplicate_records,
            "torn_lines": self.torn_lines,
            "sequence_gaps": self.sequence_gaps,
        }


def diagnostics(tallies: Iterable[Tally]) -> dict[str, int]:
    """A session's ``diagnostics``: the counters of its logs added up."""
    total: dict[str, int] = {}
    for tally in tallies:
        for key, n in tally.diagnostics().items():
            total[key] = total.get(key, 0) + n
    return total


@dataclass
class Summary:
    """What the scan learns about one stream."""

    stream: str
    tally: Tally
    lines: int = 0
    sha256: str = ""
    bytes: int = 0
    #: redacted: the numbers of the record lines in which the rules found a secret
    flagged: set[int] = field(default_factory=set)

    def as_dict(self, rel: str) -> dict[str, Any]:
        t = self.tally
        return {
            "stream": self.stream,
            "log": rel,
            "session_id": t.session_id,
            "agent_id": t.agent_id,
            "lines": self.lines,
            "records": t.records,
            "turn_count": t.turn_count,
            "step_count": t.step_count,
            "first_recorded_at": t.first_recorded_at,
            "last_recorded_at": t.last_recorded_at,
            "session_end": t.session_end,
            "bytes": self.bytes,
            "sha256": self.sha256,
            # another host's session names its harness; Claude Code's stay as they were
            **({"harness": t.harness} if t.harness else {}),
        }


def scan(stream: Stream, secrets: redact.Masker | None = None) -> Summary:
    """Pass 1 over one stream: its summary and its diagnostics (in ``tally``); with
    ``secrets``, every secret the rules find in it is learnt there too, and the lines
    holding one are noted (``Summary.flagged``)."""
    t = Tally()
    s = Summary(stream.name, t)
    digest = hashlib.sha256()
    for line in raw_lines(stream, digest):
        s.lines += 1
        if not line.complete:
            t.torn_lines += 1
            if secrets is not None:
                redact.redact_text(_raw_text(line.raw), secrets)
            continue
        rec = journal.parse_line(line.raw)
        if rec is None:
            t.unparseable_lines += 1
            if secrets is not None:
                redact.redact_text(_raw_text(line.raw), secrets)
            continue
        t.record(rec, line.raw)
        if secrets is not None and "payload" in rec and redact.learn(rec["payload"], secrets):
            s.flagged.add(line.number)
    s.sha256 = "sha256:" + digest.hexdigest()
    s.bytes = stream.size
    t.seen = SequenceSet()  # the runs are not needed any more: free them
    if t.session_id is None:
        t.session_id = stream.path.parent.name if stream.name == "main" else None
    if t.agent_id is None and stream.name != "main":
        t.agent_id = stream.name.split("/", 1)[1]
    return s


# --------------------------------------------------------------------- pass 2: events


def _dumps(obj: Any) -> str:
    text = jsonfast.dumps(obj)  # json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from the log: escape them
        text = json.dumps(obj, ensure_ascii=True, separators=(",", ":"))
    return text


def _utf8(raw: bytes) -> str | None:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _raw_text(raw: bytes) -> str:
    return raw.decode("utf-8", "backslashreplace")


def event_element(stream: str, line: RawLine, redaction: Redaction,  # noqa: PLR0917
                  stream_json: str | None = None, known: redact.Masker | None = None,
                  clean: bool | None = None, unmasked: secretscreen.Screen | None = None
                  ) -> str:
    """The JSON text of the ``events`` element for one physical line (redacted: every
    secret of ``known``, the whole document's, masked by value too). ``clean``: the first
    pass found no secret in this record (None: not known), so no rule needs to run on it:
    it is written raw when ``known`` is empty too, else only masked by value, and not even
    walked for that when ``unmasked`` (a screen judging strings by ``known``) passes it."""
    sj = stream_json if stream_json is not None else _dumps(stream)
    head = f'{{"kind":"record","stream":{sj},"line":{line.number},"envelope":'
    if line.complete:
        # a line the screen passes holds nothing to mask: written as the raw export would
        as_is = clean and (not known or (unmasked is not None and unmasked.passes(line.raw)))
        if redaction == "raw" or as_is:
            declared, actual = journal.line_hash(line.raw)
            if declared is not None and declared == actual:
                text = _utf8(line.raw)
                if text is not None:
                    return head + text + "}"
        rec = journal.parse_line(line.raw)
        if rec is not None:
            if redaction == "raw" or as_is:
                return head + _dumps(rec) + "}"
            if "payload" in rec and clean and known:
                rec["payload"] = known.mask_value(rec["payload"])
            elif "payload" in rec:
                rec["payload"] = redact.redact_value(rec["payload"], known=known)
            return head + _dumps(rec) + "}"
    text = _raw_text(line.raw)
    if redaction == "redacted":
        text = redact.redact_text(text)
        if known:
            text = known.mask_text(text)
    kind = "unparseable" if line.complete else "torn"
    return _dumps({"kind": kind, "stream": stream, "line": line.number, "raw": text})


# --------------------------------------------------------------------- the document


@dataclass(frozen=True)
class Header:
    """Everything of the document except ``events``."""

    redaction: Redaction
    session_build: Any
    terminated_abnormally: bool
    sessions: list[dict[str, Any]]
    diagnostics: dict[str, int]
    last_recorded_at: str | None
    #: redacted: every secret value found in any stream, masked everywhere in pass 2
    secrets: redact.Masker | None = None
    #: redacted: per stream, the lines in which pass 1 found a secret
    flagged: dict[str, set[int]] | None = None

    def items(self) -> list[tuple[str, Any]]:
        return [
            ("export_schema_version", SCHEMA_VERSION),
            ("redaction", self.redaction),
            ("exporter_version", build.info()),
            ("session_build", self.session_build),
            ("session_terminated_abnormally", self.terminated_abnormally),
            ("sessions", self.sessions),
            ("diagnostics", self.diagnostics),
        ]


def header(all_streams: list[Stream], redaction: Redaction) -> Header:
    """Pass 1 over every stream."""
    secrets = redact.Masker() if redaction == "redacted" else None
    summaries = [scan(s, secrets) for s in all_streams]
    main = summaries[0].tally
    end = main.session_end
    rels = [journal.LOG_NAME if s.name == "main" else f"{s.name}/{journal.LOG_NAME}"
            for s in all_streams]
    return Header(
        redaction=redaction,
        session_build=main.build,
        terminated_abnormally=not (end is not None and end.get("exit_reason") == "clean"),
        sessions=[s.as_dict(rel) for s, rel in zip(summaries, rels, strict=True)],
        diagnostics=diagnostics(s.tally for s in summaries),
        last_recorded_at=main.last_recorded_at,
        secrets=secrets,
        flagged={s.stream: s.flagged for s in summaries} if secrets is not None else None,
    )


def masking_screen(known: redact.Masker) -> secretscreen.Screen:
    """A screen passing the lines in which ``known`` masks nothing (``known`` must not
    learn more while it is used)."""
    return secretscreen.Screen(lambda text: known.mask_text(text) == text)


def write_document(out: IO[str], all_streams: list[Stream], head: Header) -> int:
    """Write the document; return the number of events."""
    out.write("{\n")
    for key, value in head.items():
        out.write(f"  {_dumps(key)}: {_dumps(value)},\n")
    out.write('  "events": [')
    n = 0
    known = head.secrets
    unmasked = masking_screen(known) if known else None
    learnt = len(known.values) if known else 0
    for stream in all_streams:
        stream_json = _dumps(stream.name)
        flagged = head.flagged.get(stream.name, set()) if head.flagged is not None else None
        for line in raw_lines(stream):
            out.write(",\n    " if n else "\n    ")
            # no rule to run again on a record pass 1 found no secret in
            clean = flagged is not None and line.number not in flagged
            out.write(event_element(stream.name, line, head.redaction, stream_json, known,
                                    clean, unmasked=unmasked))
            n += 1
            if known and len(known.values) != learnt:  # redacting learnt more: judge anew
                unmasked, learnt = masking_screen(known), len(known.values)
    out.write("\n  ]\n}\n" if n else "]\n}\n")
    return n


def default_name(head: Header) -> str:
    """``trajectory-<timestamp>.json``, the timestamp of the log's last record."""
    at = head.last_recorded_at or "1970-01-01T00:00:00.000Z"
    stamp = at.replace("-", "").replace(":", "").replace(".", "")
    return f"trajectory-{stamp}.json"


def export(log: Path, out: Path | None, *, redacted: bool = False,
           cwd: Path | None = None) -> Target:
    """Export the session whose main log is ``log``; return where it was written (a file
    replaced atomically, or a FIFO, device or standard stream written into:
    :mod:`smllm.audit.outfile`)."""
    all_streams = streams(log)
    head = header(all_streams, "redacted" if redacted else "raw")
    target = out if out is not None else (cwd or Path.cwd()) / default_name(head)
    target = target if target.is_absolute() else (cwd or Path.cwd()) / target
    try:
        # private like the journal it copies (a raw export holds the same secrets)
        with outfile.open_text(target) as (fh, written):
            write_document(fh, all_streams, head)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ExportError(
            f"export failed: could not write {target}: {reason}",
            "write inside a folder you can write to, e.g. --out ./trajectory.json, or drop "
            "--out to get trajectory-<timestamp>.json in the current folder",
        ) from None
    return written


# --------------------------------------------------------------------- reading back


@dataclass
class Document:
    """An export read back: the header keys, then the events, streaming."""

    meta: dict[str, Any]
    events: Iterator[dict[str, Any]]


def read(path: Path) -> Document:
    """Open an export; events are streamed when the file has this module's layout."""
    try:
        fh = open(path, encoding="utf-8")  # noqa: SIM115 - closed by the generator
    except OSError as exc:
        raise ExportError(f"cannot read export {path}: {exc.strerror}",
                          "give the path of a file written by `smllm export`") from None
    meta: dict[str, Any] = {}
    first = fh.readline()
    if first == "{\n":
        for text in fh:
            if text == '  "events": [\n':
                return Document(_check(meta, path), _stream_events(fh, path))
            if text == '  "events": []\n':
                break
            key, sep, value = text.strip().rstrip(",").partition(": ")
            if not sep:
                break
            try:
                meta[json.loads(key)] = json.loads(value)
            except ValueError:
                break
    fh.seek(0)
    try:
        whole = json.load(fh)
    except ValueError as exc:
        raise ExportError(f"{path} is not an smllm export: {exc}",
                          "give the path of a file written by `smllm export`") from None
    finally:
        fh.close()
    if not isinstance(whole, dict):
        raise ExportError(f"{path} is not an smllm export: not a JSON object",
                          "give the path of a file written by `smllm export`")
    events = whole.pop("events", [])
    return Document(_check(whole, path), iter(events if isinstance(events, list) else []))


def _check(meta: dict[str, Any], path: Path) -> dict[str, Any]:
    if meta.get("export_schema_version") != SCHEMA_VERSION:
        raise ExportError(
            f"{path} is not an smllm export (export_schema_version "
            f"{meta.get('export_schema_version')!r}, expected {SCHEMA_VERSION})",
            "export the session again with `smllm export`",
        )
    return meta


def _stream_events(fh: IO[str], path: Path) -> Iterator[dict[str, Any]]:
    try:
        for number, text in enumerate(fh, start=1):
            stripped = text.strip()
            if stripped in ("]", "],", "}"):
                continue
            try:
                yield json.loads(stripped.rstrip(","))
            except ValueError as exc:
                raise ExportError(f"{path}: event {number} is not JSON: {exc}",
                                  "export the session again") from None
    finally:
        fh.close()
