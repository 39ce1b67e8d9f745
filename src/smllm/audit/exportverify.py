"""``smllm verify --export FILE``: the hash chain of an export's envelopes, re-checked.

A raw export (:mod:`smllm.audit.export`) carries each log line's exact bytes as the
``envelope`` of its event, so every check :func:`smllm.journal.verify.check` makes on a
log can be made on the export, stream by stream, without the log: each record's hash,
each ``prev``, the sequence, the invariants, an orderly end. Two more checks tie the
events to the header the export wrote beside them: each stream has as many events as its
``sessions[].lines`` says, and when every line of a stream is a record (so its bytes are
exact) the events add up to the log's ``sha256``.

A redacted export rewrote its payloads, so its hashes cannot hold: it is refused with
what to verify instead. Events are read streaming (one stream at a time, twice only when
the first pass raised candidates), so memory does not grow with the export.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from smllm import journal
from smllm.audit import export
from smllm.base.errors import ExportError
from smllm.journal.verify import Report, check

_EVENTS = b'  "events": [\n'
_ENVELOPE = b',"envelope":'


@dataclass
class StreamReport:
    """One stream of the export: the journal checks, and how it matches the header."""

    stream: str
    report: Report
    declared_lines: int | None
    declared_sha256: str | None
    sha256: str | None = None  # of the events' bytes, when every line was a record
    exact: bool = True

    @property
    def header_problems(self) -> list[str]:
        out = []
        if self.declared_lines is not None and self.declared_lines != self.report.lines:
            out.append(f"the export's header says {self.declared_lines} line(s), its events "
                       f"hold {self.report.lines}: events were removed or added")
        if (self.exact and self.sha256 is not None and self.declared_sha256
                and self.sha256 != self.declared_sha256):
            out.append("the events' bytes do not add up to the log's sha256 in the export's "
                       "header: the export was edited")
        return out


@dataclass
class ExportReport:
    path: Path
    redaction: str | None
    streams: list[StreamReport] = field(default_factory=list)
    refused: str | None = None

    @property
    def ok(self) -> bool:
        return self.refused is None and all(
            s.report.ok and not s.header_problems for s in self.streams)

    @property
    def records(self) -> int:
        return sum(s.report.records for s in self.streams)


def verify_export(path: Path) -> ExportReport:
    """Re-check every stream of the export at ``path``."""
    doc = export.read(path)  # the header; refuses what is not an export
    meta = doc.meta
    close = getattr(doc.events, "close", None)
    if close is not None:
        close()
    out = ExportReport(path, meta.get("redaction"))
    if meta.get("redaction") != "raw":
        out.refused = (f"a {meta.get('redaction')} export rewrote its payloads, so its hashes "
                       "cannot be re-checked: verify the raw export (`smllm export` without "
                       "--redacted) or the journal itself (`smllm verify ID|PATH`)")
        return out
    listed = meta.get("sessions")
    sessions: list[Any] = listed if isinstance(listed, list) else []
    declared = {str(s.get("stream")): s for s in sessions if isinstance(s, dict)}
    for stream in _stream_names(path):
        head = declared.get(stream, {})
        lines = head.get("lines")
        sr = StreamReport(stream, Report(path), lines if isinstance(lines, int) else None,
                          head.get("sha256") if isinstance(head.get("sha256"), str) else None)
        check(sr.report, lambda s=stream: (line for line, _ in _lines(path, s)))  # type: ignore[misc]
        digest = hashlib.sha256()
        for line, exact in _lines(path, stream):
            sr.exact = sr.exact and exact
            digest.update(line.raw if line.status == "torn" else line.raw + b"\n")
        sr.sha256 = "sha256:" + digest.hexdigest()
        out.streams.append(sr)
    for name in declared:
        if name not in {s.stream for s in out.streams}:
            gone = StreamReport(name, Report(path), None, None)
            gone.report.problems.append(_missing(name))
            out.streams.append(gone)
    return out


def _missing(stream: str) -> Any:
    from smllm.journal.verify import Problem  # noqa: PLC0415 - only for a missing stream

    return Problem(1, f"the export's header names stream {stream}, and no event of it is there")


def _stream_names(path: Path) -> list[str]:
    names: list[str] = []
    for stream, _, _ in _events(path):
        if not names or names[-1] != stream:
            if stream in names:
                raise ExportError(f"{path}: the events of stream {stream} are not together",
                                  "export the session again with `smllm export`")
            names.append(stream)
    return names


def _lines(path: Path, stream: str) -> Iterator[tuple[journal.Line, bool]]:
    """The lines of one stream, rebuilt from its events, and whether each is exact (a
    record's envelope is the log line's bytes; an unparseable line's text may not be)."""
    for name, number, event in _events(path):
        if name != stream:
            continue
        element, raw = event
        if element == "record":
            rec = journal.parse_line(raw)
            yield journal.Line(number, 0, raw, "record" if rec else "unparseable", rec), True
        else:
            status = "torn" if element == "torn" else "unparseable"
            rec = journal.parse_line(raw) if status == "torn" else None
            yield journal.Line(number, 0, raw, status, rec), False  # type: ignore[arg-type]


def _events(path: Path) -> Iterator[tuple[str, int, tuple[str, bytes]]]:
    """(stream, line, (event kind, the line's bytes)) of every event, streaming when the
    export has the layout ``smllm export`` writes, else from the whole document."""
    with open(path, "rb") as fh:
        if fh.readline() == b"{\n":
            for text in fh:
                if text == _EVENTS:
                    yield from _streamed(fh)
                    return
                if not text.startswith(b"  \""):
                    break
    doc = export.read(path)
    for event in doc.events:
        yield _element(event)


def _streamed(fh: Any) -> Iterator[tuple[str, int, tuple[str, bytes]]]:
    for text in fh:
        item = text.strip()
        if item in (b"]", b"],", b"}", b""):
            continue
        item = item.removesuffix(b",")
        cut = item.find(_ENVELOPE)
        if item.startswith(b'{"kind":"record",') and cut > 0 and item.endswith(b"}"):
            head = json.loads(item[:cut] + b"}")
            yield str(head.get("stream")), int(head.get("line", 0)), (
                "record", item[cut + len(_ENVELOPE):-1])
        else:
            yield _element(json.loads(item))


def _element(event: Any) -> tuple[str, int, tuple[str, bytes]]:
    if not isinstance(event, dict):
        return "main", 0, ("unparseable", b"")
    stream, line = str(event.get("stream", "main")), event.get("line")
    number = line if isinstance(line, int) else 0
    if event.get("kind") == "record":
        envelope = event.get("envelope")
        return stream, number, ("record", export._dumps(envelope).encode())
    raw = event.get("raw")
    return stream, number, (str(event.get("kind")), str(raw or "").encode())
