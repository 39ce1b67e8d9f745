"""Where the viewer's data comes from: the one module that reads sessions for it.

:class:`JournalSource` reads the journal folder directly (``smllm.journal``): the
session list from the ``by-id`` index and each log's head and tail, a session from an
incremental :class:`~smllm.serve.sessionscan.SessionScan`, and search by reading the
logs. Everything is cached by file size and modification time, so a page over ten
thousand sessions reads each of them once, and a running session only its new lines.

Pages ask only this module's :class:`Source` methods, with :class:`SessionFilter` and
:class:`SearchFilter`, so another source (the embedded index, a team store) plugs in
here without touching a page.
"""

from __future__ import annotations

import os
import pwd
import re
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Protocol

from smllm import journal
from smllm.audit.ledger import action_text, tool_of
from smllm.base import paths
from smllm.base.errors import SessionNotFound, SmllmError
from smllm.serve.sessionscan import SessionScan, StreamScan, what_ran

_HEAD = 64 * 1024
_TAIL = 64 * 1024
_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}(?:T\d{2}(?::\d{2}(?::\d{2}(?:\.\d{1,3})?)?)?Z?)?$")
TERMINATIONS = ("clean", "crash_inferred", "subagent_stop", "none")


class FilterError(SmllmError):
    """A filter value the viewer cannot use (shown on the page, status 400)."""


def check_time(value: str | None, name: str) -> str | None:
    """``YYYY-MM-DD[THH[:MM[:SS[.mmm]]]][Z]`` or nothing."""
    if not value:
        return None
    if not _TIME.match(value):
        raise FilterError(f"{name} {value!r} is not a UTC date or time",
                          "write 2026-08-02 or 2026-08-02T10:15")
    return value.rstrip("Z")


def _in_range(first: str | None, last: str | None, since: str | None,
              until: str | None) -> bool:
    """Was a session (or record) active between ``since`` and ``until`` (inclusive)?"""
    if since and (last or first or "") < since:
        return False
    return not (until and (first or last or "9999")[: len(until)] > until)


@dataclass(frozen=True)
class SessionFilter:
    """The filters of the sessions page (all optional)."""

    project: str | None = None
    user: str | None = None
    host: str | None = None
    since: str | None = None
    until: str | None = None
    termination: str | None = None

    @classmethod
    def parse(cls, query: dict[str, str]) -> SessionFilter:
        termination = query.get("termination") or None
        if termination and termination not in TERMINATIONS:
            raise FilterError(f"termination {termination!r} is not one of "
                              f"{', '.join(TERMINATIONS)}", "pick one from the list")
        return cls(project=query.get("project") or None, user=query.get("user") or None,
                   host=query.get("host") or None,
                   since=check_time(query.get("since"), "since"),
                   until=check_time(query.get("until"), "until"), termination=termination)

    def active(self) -> bool:
        return any(getattr(self, f.name) for f in fields(self))

    def as_dict(self) -> dict[str, str | None]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class SearchFilter:
    """The filters of the search page: record kind, tool, authorizer, decision, rule,
    a text the command, path or record contains, a time range, one session."""

    kind: str | None = None
    tool: str | None = None
    authorizer: str | None = None
    decision: str | None = None
    rule: str | None = None
    text: str | None = None
    since: str | None = None
    until: str | None = None
    session: str | None = None

    @classmethod
    def parse(cls, query: dict[str, str]) -> SearchFilter:
        session = query.get("session") or None
        if session is not None and not paths.is_safe_id(session):
            raise FilterError(f"session {session!r} is not a session id",
                              "copy it from the sessions page")
        return cls(kind=query.get("kind") or None, tool=query.get("tool") or None,
                   authorizer=query.get("authorizer") or None,
                   decision=query.get("decision") or None, rule=query.get("rule") or None,
                   text=query.get("text") or None,
                   since=check_time(query.get("since"), "since"),
                   until=check_time(query.get("until"), "until"), session=session)

    def active(self) -> bool:
        return any(getattr(self, f.name) for f in fields(self))

    def as_dict(self) -> dict[str, str | None]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class SessionRow:
    """One line of the sessions page."""

    session_id: str
    path: Path
    started_at: str | None
    last_at: str | None
    project: str | None
    host: str | None
    user: str | None
    records: int
    termination: str
    first_prompt: str | None


@dataclass(frozen=True)
class Page:
    """Some rows of a longer list."""

    rows: list[Any]
    total: int
    offset: int
    limit: int


@dataclass(frozen=True)
class Hit:
    """One record found by a search."""

    session_id: str
    stream: str
    line: int
    sequence: int
    recorded_at: str | None
    kind: str
    tool: str | None
    what: str
    decision: str | None
    authorizer: str | None
    rule: str | None
    outcome: str | None
    pending_action_id: str | None


class Source(Protocol):
    """What the pages ask of a data source."""

    name: str

    def sessions(self, flt: SessionFilter, offset: int, limit: int) -> Page: ...

    def session(self, session_id: str, *, budget: float | None = None,
                until_lines: int = 0) -> SessionScan: ...

    def search(self, flt: SearchFilter, offset: int, limit: int,
               redactor: Any) -> Page: ...


# --------------------------------------------------------------------- the sessions list


def _owner(st: os.stat_result) -> str:
    try:
        return pwd.getpwuid(st.st_uid).pw_name
    except KeyError:
        return str(st.st_uid)


def _head_facts(path: Path) -> dict[str, Any]:
    """session.start and the first prompt, from the log's first lines."""
    facts: dict[str, Any] = {}
    with open(path, "rb") as fh:
        data = fh.read(_HEAD)
    for raw in data.split(b"\n")[:-1] if len(data) == _HEAD else data.split(b"\n"):
        rec = journal.parse_line(raw)
        if rec is None:
            continue
        kind = journal.kind_of(rec)
        body = journal.body_of(rec)
        facts.setdefault("started_at", rec.get("recorded_at"))
        if kind == "session.start" and "cwd" not in facts:
            facts["cwd"] = body.get("cwd")
            facts["session_id"] = body.get("session_id")
        elif kind == "proposed" and isinstance(body.get("prompt"), str):
            facts["first_prompt"] = body["prompt"]
            break
    return facts


def _tail_facts(path: Path, size: int) -> dict[str, Any]:
    """The last record (count, time) and how the session ended, from the log's tail."""
    facts: dict[str, Any] = {"records": 0, "last_at": None, "termination": None}
    with open(path, "rb") as fh:
        fh.seek(max(0, size - _TAIL))
        data = fh.read(_TAIL)
    lines = data.split(b"\n")
    if size > _TAIL:
        lines = lines[1:]
    for raw in reversed(lines):
        rec = journal.parse_line(raw)
        if rec is None:
            continue
        if facts["last_at"] is None:
            facts["records"] = int(rec["sequence"])
            facts["last_at"] = rec.get("recorded_at")
        kind = journal.kind_of(rec)
        if kind == "session.end":
            reason = journal.body_of(rec).get("exit_reason")
            facts["termination"] = str(reason) if reason else "none"
            break
        if kind in ("session.start", "session.resumed"):
            break
    return facts


class _Entry:
    __slots__ = ("mtime", "path", "row", "session_id", "size")

    def __init__(self, session_id: str, path: str, size: int, mtime: int) -> None:
        self.session_id = session_id
        self.path = path
        self.size = size
        self.mtime = mtime
        self.row: SessionRow | None = None


class JournalSource:
    """The journal folder of this machine (``smllm.journal``)."""

    name = "journals"

    def __init__(self, *, scans_kept: int = 8) -> None:
        self.host = socket.gethostname()
        self._entries: dict[str, _Entry] = {}
        self._scans: OrderedDict[str, SessionScan] = OrderedDict()
        self._scans_kept = scans_kept
        self._lock = threading.Lock()

    # ---- the list

    def _listing(self) -> list[_Entry]:
        """Every session with a log, most recently written first.

        Sessions live in ``sessions/YYYY/MM/DD/<id>/``; walking those folders costs one
        directory listing a day instead of one read of ``by-id/<id>`` a session.
        """
        root = os.path.join(paths.data_root(), "sessions")
        out: list[_Entry] = []
        for day in _day_folders(root):
            try:
                names = os.listdir(day)
            except OSError:
                continue
            for sid in names:
                entry = self._entries.get(sid)
                if entry is None and not paths.is_safe_id(sid):
                    continue
                log = f"{day}/{sid}/{journal.LOG_NAME}"
                try:
                    st = os.stat(log)
                except OSError:
                    continue
                if entry is None or entry.size != st.st_size or entry.mtime != st.st_mtime_ns:
                    entry = _Entry(sid, log, st.st_size, st.st_mtime_ns)
                    self._entries[sid] = entry
                out.append(entry)
        out.sort(key=lambda e: (e.mtime, e.session_id), reverse=True)
        return out

    def _row(self, entry: _Entry) -> SessionRow:
        if entry.row is None:
            path = Path(entry.path)
            head = _head_facts(path)
            tail = _tail_facts(path, entry.size)
            st = path.stat()
            entry.row = SessionRow(
                session_id=entry.session_id, path=path,
                started_at=head.get("started_at"), last_at=tail["last_at"],
                project=head.get("cwd") if isinstance(head.get("cwd"), str) else None,
                host=self.host, user=_owner(st), records=tail["records"],
                termination=tail["termination"] or "none",
                first_prompt=head.get("first_prompt"))
        return entry.row

    def sessions(self, flt: SessionFilter, offset: int, limit: int) -> Page:
        with self._lock:
            listing = self._listing()
            if not flt.active():
                rows = [self._row(e) for e in listing[offset: offset + limit]]
                return Page(rows, len(listing), offset, limit)
            matched = [r for r in map(self._row, listing) if _matches_session(r, flt)]
            return Page(matched[offset: offset + limit], len(matched), offset, limit)

    # ---- one session

    def session(self, session_id: str, *, budget: float | None = None,
                until_lines: int = 0) -> SessionScan:
        """The session's scan, brought up to date (within ``budget`` seconds when given:
        a long log is then read over several calls, see ``SessionScan.complete``)."""
        paths.check_id(session_id)
        with self._lock:
            scan = self._scans.get(session_id)
            if scan is None:
                try:
                    log = Path(journal.locate(session_id))
                except FileNotFoundError:
                    raise SessionNotFound(f"no session {session_id!r} in this journal folder",
                                          "pick one on the sessions page") from None
                if not log.is_file():
                    raise SessionNotFound(f"session {session_id!r} has no journal",
                                          "pick one on the sessions page")
                scan = SessionScan(StreamScan("main", log))
                self._scans[session_id] = scan
                while len(self._scans) > self._scans_kept:
                    self._scans.popitem(last=False)
            self._scans.move_to_end(session_id)
        deadline = None if budget is None else time.monotonic() + budget
        scan.update(deadline, until_lines)
        return scan

    # ---- search

    def search(self, flt: SearchFilter, offset: int, limit: int, redactor: Any) -> Page:
        if flt.session:
            ids = [flt.session]
        else:
            with self._lock:
                ids = [e.session_id for e in self._listing()]
        hits: list[Hit] = []
        total = 0
        for sid in ids:
            try:
                scan = self.session(sid)
            except SmllmError:
                continue
            for hit in _search_session(sid, scan, flt, redactor):
                if offset <= total < offset + limit:
                    hits.append(hit)
                total += 1
        return Page(hits, total, offset, limit)


def _day_folders(root: str) -> list[str]:
    """``sessions/YYYY/MM/DD`` folders (the journal's layout), any order."""
    out = []
    for year in _numbered(root, 4):
        for month in _numbered(year, 2):
            out += _numbered(month, 2)
    return out


def _numbered(folder: str, width: int) -> list[str]:
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names if len(n) == width and n.isdigit()]


def _matches_session(row: SessionRow, flt: SessionFilter) -> bool:
    if flt.project and flt.project not in (row.project or ""):
        return False
    if flt.user and flt.user != row.user:
        return False
    if flt.host and flt.host != row.host:
        return False
    if flt.termination and flt.termination != row.termination:
        return False
    return _in_range(row.started_at, row.last_at, flt.since, flt.until)


# --------------------------------------------------------------------- search


def _marker_part(text: str) -> bool:
    """Could ``text`` match inside (or across) a redaction marker?"""
    from smllm.audit import redact  # noqa: PLC0415

    if any(c in text for c in "[]:"):
        return True
    return any(text in redact.MARK.format(kind) for kind, _, _ in redact._RULES)


def _needles(flt: SearchFilter) -> list[bytes]:
    """Byte strings every matching line must contain (a cheap first filter).

    Redaction only replaces spans with markers, so a text found in a redacted record is
    in the raw line too (as JSON writes it), unless it lies in a marker.
    """
    from smllm.base import jsonfast  # noqa: PLC0415

    out = []
    if flt.kind:
        out.append(flt.kind.encode())
    if flt.rule:
        out.append(flt.rule.encode())
    if flt.text and not _marker_part(flt.text):
        out.append(str(jsonfast.dumps(flt.text))[1:-1].encode())
    return out


def hit_of(session_id: str, stream: str, line: int, rec: dict[str, Any]) -> Hit:
    """A record as a search result: its kind, tool, what, and who decided."""
    kind = journal.kind_of(rec) or "?"
    body = journal.body_of(rec)
    tool: str | None = None
    what = ""
    decision: str | None = None
    authorizer: str | None = None
    if kind == "side_effect_intent":
        tool, what = tool_of(body), what_ran(body)
        decision = str(body.get("policy_decision") or "") or None
        authorizer = decision.split(":", 1)[1] if decision and ":" in decision else None
    elif kind == "approval.review":
        tool, what = tool_of(body), action_text(body)
    elif kind == "decision_applied":
        decision = str(body.get("decision") or "") or None
        src = body.get("decision_source")
        who = src.get("kind") if isinstance(src, dict) else src
        authorizer = str(who) if who else None
        what = str(body.get("reason") or "")
    elif kind in ("tool_batch.effect.started", "tool_batch.effect.terminal"):
        tool = tool_of(body)
        who = body.get("authorized_by")
        authorizer = who.split(":", 1)[-1] if isinstance(who, str) else None
        decision = who.split(":", 1)[0] if isinstance(who, str) and ":" in who else None
    elif kind == "proposed":
        what = str(body.get("prompt") or "")
    elif kind == "model.call":
        what = str(body.get("model") or "")
    rule = body.get("rule")
    pid = body.get("pending_action_id")
    outcome = body.get("outcome")
    return Hit(session_id=session_id, stream=stream, line=line,
               sequence=int(rec.get("sequence", 0)),
               recorded_at=rec.get("recorded_at") if isinstance(rec.get("recorded_at"), str)
               else None, kind=kind, tool=tool, what=what, decision=decision,
               authorizer=authorizer, rule=rule if isinstance(rule, str) else None,
               outcome=outcome if isinstance(outcome, str) else None,
               pending_action_id=pid if isinstance(pid, str) else None)


def _rule_matches(rule: str | None, wanted: str) -> bool:
    return rule is not None and (rule == wanted or rule.startswith(wanted + "."))


def _hit_matches(hit: Hit, flt: SearchFilter) -> bool:
    checks = (
        (flt.kind, lambda v: hit.kind == v),
        (flt.tool, lambda v: hit.tool == v),
        (flt.decision, lambda v: hit.decision is not None
         and v in (hit.decision, hit.decision.split(":", 1)[0])),
        (flt.authorizer, lambda v: hit.authorizer == v),
        (flt.rule, lambda v: _rule_matches(hit.rule, v)),
    )
    if not all(value is None or test(value) for value, test in checks):
        return False
    return _in_range(hit.recorded_at, hit.recorded_at, flt.since, flt.until)


def _search_session(session_id: str, scan: SessionScan, flt: SearchFilter,
                    redactor: Any) -> Iterator[Hit]:
    needles = _needles(flt)
    text = flt.text
    for stream in scan.streams:
        if flt.since and stream.last_at and stream.last_at < flt.since:
            continue
        for number, raw in stream.read_lines(1, stream.lines):
            if any(n not in raw for n in needles):
                continue
            rec = journal.parse_line(raw)
            if rec is None:
                continue
            hit = hit_of(session_id, stream.name, number, rec)
            if not _hit_matches(hit, flt):
                continue
            if text and text not in redactor.text(journal_payload_text(rec)):
                continue
            yield hit


def journal_payload_text(rec: dict[str, Any]) -> str:
    """A record's payload as one string, for a text search."""
    from smllm.base import jsonfast  # noqa: PLC0415

    return str(jsonfast.dumps(rec.get("payload")))
