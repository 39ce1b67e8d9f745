"""Where the viewer's data comes from: the one module that reads sessions for it.

* :class:`IndexSource` (the default): the embedded index (:mod:`smllm.index`) lists and
  searches this machine's sessions; one session is read from its journal.
* :class:`StoreSource` (``--store URL``): the team store (:mod:`smllm.store`) lists and
  searches every shipped session; one session's stored rows are copied, as they are, into
  a private temporary folder and read from there (new rows are fetched as they arrive).

Both answer with the index's :class:`~smllm.index.SessionRow` and
:class:`~smllm.index.Hit`, and one session as a
:class:`~smllm.serve.sessionscan.SessionScan`, kept and extended as records land.
Pages ask only this module's :class:`Source` methods, with :class:`SessionFilter` and
:class:`SearchFilter` (which become the index's :class:`~smllm.index.Filters`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar

from smllm import index, journal
from smllm.base import clock, paths
from smllm.base.errors import SessionNotFound, SmllmError
from smllm.index import Filters, Hit, SessionRow
from smllm.index.model import parse_time as index_time
from smllm.serve.sessionscan import SessionScan, StreamScan

if TYPE_CHECKING:
    import psycopg

#: how a session ended, as the index and the store say it (``open``: no end recorded)
TERMINATIONS = ("clean", "crash_inferred", "subagent_stop", "open")


class FilterError(SmllmError):
    """A filter value the viewer cannot use (shown on the page, status 400)."""


def parse_time(value: str | None, name: str) -> int | None:
    """Unix ms of ``2026-08-02``, ``2026-08-02T10:15`` or an age (``12h``, ``7d``)."""
    if not value:
        return None
    try:
        return index_time(value, clock.now_ms())
    except ValueError:
        raise FilterError(f"{name} {value!r} is not a UTC date, time or age",
                          "write 2026-08-02, 2026-08-02T10:15 or 7d") from None


_FormT = TypeVar("_FormT", bound="_Form")


@dataclass(frozen=True)
class _Form:
    """A page's filters: each field an optional string, named as in the query."""

    @classmethod
    def _from(cls: type[_FormT], query: dict[str, str]) -> _FormT:
        return cls(**{f.name: query.get(f.name) or None for f in fields(cls)})

    def active(self) -> bool:
        return any(getattr(self, f.name) for f in fields(self))

    def as_dict(self) -> dict[str, str | None]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class SessionFilter(_Form):
    """The filters of the sessions page (all optional)."""

    project: str | None = None
    user: str | None = None
    host: str | None = None
    since: str | None = None
    until: str | None = None
    termination: str | None = None

    @classmethod
    def parse(cls, query: dict[str, str]) -> SessionFilter:
        flt = cls._from(query)
        if flt.termination and flt.termination not in TERMINATIONS:
            raise FilterError(f"termination {flt.termination!r} is not one of "
                              f"{', '.join(TERMINATIONS)}", "pick one from the list")
        flt.filters()  # refuse bad times now
        return flt

    def filters(self) -> Filters:
        return Filters(project=self.project, user=self.user, host=self.host,
                       since_ms=parse_time(self.since, "since"),
                       until_ms=parse_time(self.until, "until"))


@dataclass(frozen=True)
class SearchFilter(_Form):
    """The filters of the search page: record kind, tool, authorizer, decision, rule,
    a text the command or path acted on contains, a time range, one session."""

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
        flt = cls._from(query)
        if flt.session is not None and not paths.is_safe_id(flt.session):
            raise FilterError(f"session {flt.session!r} is not a session id",
                              "copy it from the sessions page")
        flt.filters()  # refuse bad times now
        return flt

    def filters(self) -> Filters:
        return Filters(kind=self.kind, tool=self.tool, authorizer=self.authorizer,
                       decision=self.decision, rule=self.rule, text=self.text,
                       since_ms=parse_time(self.since, "since"),
                       until_ms=parse_time(self.until, "until"), session=self.session)


@dataclass(frozen=True)
class Page:
    """Some rows of a longer list."""

    rows: list[Any]
    total: int
    offset: int
    limit: int


class History(NamedTuple):
    """What a session went through before it ended as its termination says: how often
    it crashed (a ``session.end`` ``crash_inferred``) and was resumed (``session.resumed``)."""

    crashes: int = 0
    resumes: int = 0


#: (session id, host) -> its history; sessions with neither a crash nor a resume are absent
Histories = dict[tuple[str, "str | None"], History]


def histories(search: Callable[[Filters], list[Hit]], flt: SessionFilter) -> Histories:
    """The crashes and resumes of the sessions ``flt`` selects, from two searches (their
    ``session.end`` and ``session.resumed`` records: a few per session)."""
    where = Filters(project=flt.project, user=flt.user, host=flt.host)
    counts: dict[tuple[str, str | None], list[int]] = {}
    for hit in search(where.with_(kind="session.end")):
        if hit.stream == "main" and hit.outcome == "crash_inferred":
            counts.setdefault((hit.session_id, hit.host), [0, 0])[0] += 1
    for hit in search(where.with_(kind="session.resumed")):
        if hit.stream == "main":
            counts.setdefault((hit.session_id, hit.host), [0, 0])[1] += 1
    return {key: History(*n) for key, n in counts.items()}


class Source(Protocol):
    """What the pages ask of a data source."""

    name: str
    #: the session columns this source fills beyond the common ones
    columns: tuple[str, ...]

    def sessions(self, flt: SessionFilter, offset: int, limit: int) -> Page: ...

    def histories(self, flt: SessionFilter) -> Histories: ...

    def session(self, session_id: str, *, budget: float | None = None,
                until_lines: int = 0) -> SessionScan: ...

    def search(self, flt: SearchFilter, offset: int, limit: int,
               redactor: Any) -> Page: ...

    def close(self) -> None: ...


def _page(rows: list[Any], offset: int, limit: int) -> Page:
    return Page(rows[offset: offset + limit], len(rows), offset, limit)


def _ended(rows: list[SessionRow], flt: SessionFilter) -> list[SessionRow]:
    return rows if not flt.termination else [r for r in rows if r.termination == flt.termination]


def _shown(hits: list[Hit], flt: SearchFilter, redactor: Any) -> list[Hit]:
    """Hits whose text still contains the searched text once redacted: a search must not
    confirm a secret the page would hide."""
    if not flt.text or redactor.raw:
        return hits
    return [h for h in hits if flt.text in redactor.text(h.text or "")]


class _Scans:
    """The sessions read lately (a few, least recently used dropped)."""

    def __init__(self, kept: int = 8) -> None:
        self.kept = kept
        self.scans: OrderedDict[str, SessionScan] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: str, log: Callable[[], Path]) -> SessionScan:
        with self.lock:
            scan = self.scans.get(key)
            if scan is None:
                scan = self.scans[key] = SessionScan(StreamScan("main", log()))
                while len(self.scans) > self.kept:
                    self.scans.popitem(last=False)
            self.scans.move_to_end(key)
        return scan


def _update(scan: SessionScan, budget: float | None, until_lines: int) -> SessionScan:
    scan.update(None if budget is None else time.monotonic() + budget, until_lines)
    return scan


class IndexSource:
    """This machine's journals, listed and searched through the embedded index."""

    name = "index"
    columns: tuple[str, ...] = ()

    def __init__(self) -> None:
        self._scans = _Scans()

    def sessions(self, flt: SessionFilter, offset: int, limit: int) -> Page:
        return _page(_ended(index.sessions(flt.filters(), by="active"), flt), offset, limit)

    def histories(self, flt: SessionFilter) -> Histories:
        return histories(lambda f: index.search(f, fresh=False), flt)

    def session(self, session_id: str, *, budget: float | None = None,
                until_lines: int = 0) -> SessionScan:
        """The session's scan, brought up to date (within ``budget`` seconds when given:
        a long log is then read over several calls, see ``SessionScan.complete``)."""
        paths.check_id(session_id)
        return _update(self._scans.get(session_id, lambda: _journal(session_id)), budget,
                       until_lines)

    def search(self, flt: SearchFilter, offset: int, limit: int, redactor: Any) -> Page:
        return _page(_shown(index.search(flt.filters()), flt, redactor), offset, limit)

    def close(self) -> None:
        return None


def _journal(session_id: str) -> Path:
    try:
        log = Path(journal.locate(session_id))
    except FileNotFoundError:
        row = index.session(session_id)
        if row is None or row.journal is None:
            raise SessionNotFound(f"no session {session_id!r} in this journal folder",
                                  "pick one on the sessions page") from None
        log = Path(row.journal)
    if not log.is_file():
        raise SessionNotFound(f"session {session_id!r} has no journal",
                              "pick one on the sessions page")
    return log


class StoreSource:
    """The team store (PostgreSQL): every shipped session, from whichever host."""

    name = "team store"
    columns: tuple[str, ...] = ("git_remote", "smllm_version")

    def __init__(self, url: str) -> None:
        from smllm.store.connection import connect  # noqa: PLC0415 - the team store only

        self.conn: psycopg.Connection[Any] = connect(url, autocommit=True)
        self.lock = threading.Lock()
        self.folder = tempfile.mkdtemp(prefix="smllm-serve-")  # 0700, removed by close()
        self._scans = _Scans()
        self._hosts: dict[str, str] = {}

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
        self.conn.close()

    def sessions(self, flt: SessionFilter, offset: int, limit: int) -> Page:
        from smllm.store import reader  # noqa: PLC0415 - the team store only

        with self.lock:
            rows = reader.sessions(self.conn, flt.filters())
        return _page(_ended(rows, flt), offset, limit)

    def search(self, flt: SearchFilter, offset: int, limit: int, redactor: Any) -> Page:
        from smllm.store import reader  # noqa: PLC0415 - the team store only

        with self.lock:
            hits = reader.search(self.conn, flt.filters())
        return _page(_shown(hits, flt, redactor), offset, limit)

    def histories(self, flt: SessionFilter) -> Histories:
        from smllm.store import reader  # noqa: PLC0415 - the team store only

        def search(f: Filters) -> list[Hit]:
            with self.lock:
                return reader.search(self.conn, f)

        return histories(search, flt)

    def _host(self, session_id: str) -> str:
        host = self._hosts.get(session_id)
        if host is not None:
            return host
        with self.lock, self.conn.cursor() as cur:
            cur.execute("SELECT host FROM smllm.sessions WHERE session_id = %s LIMIT 2",
                        (session_id,))
            found = [str(r[0]) for r in cur.fetchall()]
        if not found:
            raise SessionNotFound(f"no session {session_id!r} in the team store",
                                  "pick one on the sessions page")
        if len(found) > 1:
            raise SessionNotFound(f"session id {session_id!r} was shipped by more than one "
                                  "host", "query the store for it with psql")
        self._hosts[session_id] = found[0]
        return found[0]

    def _log(self, session_id: str, stream: str) -> Path | None:
        """The private copy of one stored stream (``main`` or ``subagent/<agent id>``);
        None for a stream name that is neither (any writer can store one)."""
        folder = Path(self.folder) / session_id
        try:
            agent = journal.stream_agent(stream)
        except ValueError:
            return None
        return (folder if agent is None else folder / "subagent" / agent) / journal.LOG_NAME

    def _fetch(self, session_id: str, host: str) -> None:
        """Append the rows shipped since the last fetch to the private copies."""
        ends: dict[str, int] = {}
        root = Path(self.folder) / session_id
        for log in root.rglob(journal.LOG_NAME) if root.is_dir() else []:
            stream = "main" if log.parent == root else str(log.parent.relative_to(root))
            ends[stream] = _last_sequence(log)
        known = " AND ".join(["stream <> %s"] * len(ends)) or "true"
        newer = " OR ".join(["(stream = %s AND sequence > %s)"] * len(ends))
        where = f"({known})" + (f" OR {newer}" if newer else "")
        args: list[Any] = [host, session_id, *ends]
        for stream, last in ends.items():
            args += [stream, last]
        with self.lock, self.conn.cursor() as cur:
            cur.execute(("SELECT stream, sequence, line, line_bytes FROM smllm.records "  # noqa: S608 - placeholders only
                         f"WHERE host = %s AND session_id = %s AND ({where}) "
                         "ORDER BY stream, sequence").encode(), args)
            rows = cur.fetchall()
        out: dict[str, list[bytes]] = {}
        for stream, _, line, raw in rows:
            data = line.encode("utf-8") if line is not None else bytes(raw)
            out.setdefault(str(stream), []).append(data + b"\n")
        for stream, lines in out.items():
            copy = self._log(session_id, stream)
            if copy is None:
                continue
            copy.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(copy, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            with open(fd, "ab") as fh:
                fh.write(b"".join(lines))

    def session(self, session_id: str, *, budget: float | None = None,
                until_lines: int = 0) -> SessionScan:
        paths.check_id(session_id)
        host = self._host(session_id)
        self._fetch(session_id, host)
        main = Path(self.folder) / session_id / journal.LOG_NAME
        return _update(self._scans.get(session_id, lambda: main), budget, until_lines)


def _last_sequence(log: Path) -> int:
    """The sequence of the last record of a private copy (0 when empty)."""
    fd = os.open(log, os.O_RDONLY)
    try:
        return journal.read_tail(fd, os.fstat(fd).st_size).sequence
    finally:
        os.close(fd)
