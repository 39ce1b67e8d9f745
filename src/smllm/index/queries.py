"""The index's queries: :class:`Filters` in, :class:`SessionRow` / :class:`Hit` out."""

from __future__ import annotations

import os
import sqlite3
from typing import Any

from smllm import journal
from smllm.base.errors import SessionNotFound
from smllm.index import origin
from smllm.index.facets import tool_name
from smllm.index.model import Filters, Hit, SessionRow, Where

_SESSION_COLUMNS = ("session_id, started_at, started_ms, last_at, folder, journal, records, "
                    "termination, first_prompt, harness")


def _local_match(f: Filters) -> bool:
    """The index holds this machine's sessions only: other users and hosts match none."""
    if f.user is not None and f.user != origin.user():
        return False
    return f.host is None or f.host == origin.host()


def _session_filters(w: Where, f: Filters, alias: str, time_column: str | None) -> None:
    if f.session is not None:
        w.add(f"({alias}session_id = ? OR substr({alias}session_id, 1, ?) = ?)",
              f.session, len(f.session), f.session)
    if f.project is not None:
        folder = os.path.abspath(os.path.expanduser(f.project)).rstrip("/") or "/"
        prefix = folder if folder.endswith("/") else folder + "/"
        w.add(f"({alias}folder = ? OR substr({alias}folder, 1, ?) = ?)",
              folder, len(prefix), prefix)
    if time_column is not None:
        if f.since_ms is not None:
            w.add(f"{time_column} >= ?", f.since_ms)
        if f.until_ms is not None:
            w.add(f"{time_column} < ?", f.until_ms)


def _row(r: tuple[Any, ...], host: str, user: str) -> SessionRow:
    return SessionRow(session_id=r[0], started_at=r[1], started_ms=r[2], last_at=r[3],
                      folder=r[4], journal=r[5], records=r[6], termination=r[7],
                      first_prompt=r[8], host=host, user=user, harness=r[9])


def sessions(db: sqlite3.Connection, f: Filters, *, by: str = "started") -> list[SessionRow]:
    """Sessions newest first: by start (``started``) or by last record (``active``)."""
    if not _local_match(f):
        return []
    w = Where()
    _session_filters(w, f, "", "started_ms")
    order = "last_ms" if by == "active" else "started_ms"
    sql = (f"SELECT {_SESSION_COLUMNS} FROM sessions{w.sql()} "  # noqa: S608 - fixed columns
           f"ORDER BY {order} DESC, session_id DESC")
    if f.limit is not None:
        sql += f" LIMIT {int(f.limit)}"
    host, user = origin.host(), origin.user()
    return [_row(r, host, user) for r in db.execute(sql, w.args)]


def latest(db: sqlite3.Connection, folder: str | None) -> SessionRow | None:
    """The most recently active session that ran exactly in ``folder`` (any when None)."""
    w = Where()
    if folder is not None:
        w.add("folder = ?", folder)
    r = db.execute(f"SELECT {_SESSION_COLUMNS} FROM sessions{w.sql()} "  # noqa: S608
                   "ORDER BY last_ms DESC, session_id DESC LIMIT 1", w.args).fetchone()
    return _row(r, origin.host(), origin.user()) if r else None


def session(db: sqlite3.Connection, spec: str) -> SessionRow | None:
    """The session ``spec`` names (its id, or a unique prefix of one)."""
    exact = sessions(db, Filters(session=spec, limit=6))
    for row in exact:
        if row.session_id == spec:
            return row
    if len(exact) > 1:
        ids = ", ".join(r.session_id for r in exact[:5])
        raise SessionNotFound(f"session id prefix {spec!r} is ambiguous", f"matches: {ids}")
    return exact[0] if exact else None


def record_filters(w: Where, f: Filters, alias: str) -> None:
    """The record facets of ``f`` as SQL (``?`` placeholders, SQLite)."""
    if f.kind is not None:
        w.add(f"{alias}kind = ?", f.kind)
    if f.tool is not None:
        w.add(f"{alias}tool = ?", tool_name(f.tool))
    stamps = f.stamps()
    stamp = f"coalesce({alias}authorization, {alias}decision)"
    if stamps is not None and f.authorizer is not None:
        w.add(f"{stamp} IN ({', '.join('?' * len(stamps))})", *stamps)
    elif stamps is not None:
        w.add(f"substr({stamp}, 1, ?) = ?", len(stamps[0]) + 1, stamps[0] + ":")
    if f.rule is not None:
        w.add(f"{alias}rule = ?", f.rule)
    if f.text is not None:
        w.add(f"instr({alias}text, ?) > 0", f.text)


def _journal_of(main: str | None, stream: str) -> str | None:
    if main is None or stream == "main":
        return main
    return os.path.join(os.path.dirname(main), stream, journal.LOG_NAME)


def search(db: sqlite3.Connection, f: Filters) -> list[Hit]:
    """Records matching ``f``, newest first."""
    if not _local_match(f):
        return []
    w = Where()
    _session_filters(w, f, "s.", None)
    if f.since_ms is not None:
        w.add("r.recorded_ms >= ?", f.since_ms)
    if f.until_ms is not None:
        w.add("r.recorded_ms < ?", f.until_ms)
    record_filters(w, f, "r.")
    sql = ("SELECT j.session_id, j.stream, r.sequence, r.recorded_at, r.recorded_ms, r.kind, "  # noqa: S608 - the values are parameters
           "r.tool, r.text, r.decision, r.authorization, r.rule, r.outcome, "
           "r.terminal_sequence, s.folder, s.journal FROM records r "
           "JOIN journals j ON j.jid = r.jid JOIN sessions s "
           f"ON s.session_id = j.session_id{w.sql()} "
           "ORDER BY r.recorded_ms DESC, j.session_id DESC, j.stream, r.sequence DESC")
    if f.limit is not None:
        sql += f" LIMIT {int(f.limit)}"
    host, user = origin.host(), origin.user()
    return [Hit(session_id=r[0], stream=r[1], sequence=r[2], recorded_at=r[3], recorded_ms=r[4],
                kind=r[5], tool=r[6], text=r[7], decision=r[8], authorization=r[9], rule=r[10],
                outcome=r[11], terminal_sequence=r[12], folder=r[13], host=host, user=user,
                journal=_journal_of(r[14], r[1]))
            for r in db.execute(sql, w.args)]
