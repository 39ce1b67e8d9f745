"""Bringing the index up to date with the journals, incrementally.

A look costs one ``listdir`` of ``sessions/by-id`` (new sessions) and one ``stat`` per
known journal. Only a journal that grew is read, from the byte after the last complete
line indexed; one that shrank, was replaced (another inode) or whose next record does
not chain onto the last one indexed is re-read from the start. A torn last line is
left for the next look. Several processes may refresh at once: the writes happen in
one ``BEGIN IMMEDIATE`` transaction, in which each journal's position is read again.
"""

from __future__ import annotations

import gc
import os
import sqlite3
import time
from typing import TYPE_CHECKING, Any

from smllm import journal
from smllm.base import paths
from smllm.base.clock import parse_iso_ms
from smllm.index import database
from smllm.index.facets import (
    INTENT,
    TERMINAL,
    Summary,
    declared_hash,
    effective,
    facet_values,
    lines_after,
)
from smllm.index.model import RefreshStats

if TYPE_CHECKING:
    from smllm.base.shapes import Record

CHUNK = 1 << 20  # bytes read at a time: more costs memory (16 MiB peaked at 100 MiB), not time
FLUSH_ROWS = 20_000  # rows held before they are written (the transaction spans the refresh)
MAIN = "main"


class _Journal:
    __slots__ = ("inode", "jid", "last_hash", "last_sequence", "offset", "path", "session_id",
                 "stream")

    def __init__(self, path: str, session_id: str, stream: str, *, inode: int = 0,
                 offset: int = 0, last_sequence: int = 0, last_hash: str | None = None,
                 jid: int | None = None) -> None:
        self.path = path
        self.session_id = session_id
        self.stream = stream
        self.inode = inode
        self.offset = offset
        self.last_sequence = last_sequence
        self.last_hash = last_hash
        self.jid = jid  # its row in ``journals`` (the key of its records); None: none yet


def _positions(db: sqlite3.Connection) -> list[tuple[str, str, str, int, int]]:
    """(path, session id, stream, inode, offset) of every indexed journal: the cheap view
    the look for changes needs."""
    return db.execute("SELECT path, session_id, stream, inode, offset FROM journals").fetchall()


def _known(db: sqlite3.Connection) -> dict[str, _Journal]:
    return {r[0]: _Journal(r[0], r[1], r[2], inode=r[3], offset=r[4], last_sequence=r[5],
                           last_hash=r[6], jid=r[7]) for r in db.execute(
        "SELECT path, session_id, stream, inode, offset, last_sequence, last_hash, jid "
        "FROM journals")}


def _new_sessions(ids: set[str]) -> list[_Journal]:
    try:
        names = os.listdir(os.path.join(paths.data_root(), "sessions", "by-id"))
    except FileNotFoundError:
        return []
    out = []
    for sid in names:
        if sid in ids or not paths.is_safe_id(sid):
            continue
        try:
            log = journal.locate(sid)
        except (OSError, ValueError):
            continue
        if os.path.isfile(log):
            out.append(_Journal(log, sid, MAIN))
    return out


def _changed(j: _Journal) -> bool | None:
    """True: grew; False: unchanged; None: gone. A cut or replaced file counts as grown."""
    try:
        st = os.stat(j.path)
    except FileNotFoundError:
        return None
    return st.st_ino != j.inode or st.st_size != j.offset


def refresh(db: sqlite3.Connection, *, rebuild: bool = False) -> RefreshStats:
    """Index what the journals gained since the last refresh."""
    t0 = time.perf_counter()
    if rebuild:
        db.execute("BEGIN IMMEDIATE")
        for table in ("journals", "sessions", "records"):
            db.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed names
        db.execute("COMMIT")
    known = _positions(db)
    work = _new_sessions({sid for _, sid, stream, _, _ in known if stream == MAIN})
    stats = _Stats(len(known) + len(work))
    gone = []
    stat = os.stat
    for path, sid, stream, inode, offset in known:
        try:
            st = stat(path)
        except FileNotFoundError:
            gone.append(_Journal(path, sid, stream))
            continue
        if st.st_ino != inode or st.st_size != offset:
            work.append(_Journal(path, sid, stream))
    if not work and not gone:
        return stats.done(t0)
    db.execute("BEGIN IMMEDIATE")
    collecting = gc.isenabled()
    gc.disable()  # the records read make no cycles: the collector would only rescan rows
    try:
        _update(db, work, gone, stats)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    finally:
        if collecting:
            gc.enable()
    return stats.done(t0)


def _update(db: sqlite3.Connection, work: list[_Journal], gone: list[_Journal],
            stats: _Stats) -> None:
    """Inside the refresh's transaction: forget the journals gone, index the ones grown."""
    fresh = _known(db)  # another process may have indexed some of them meanwhile
    for j in gone:
        _forget(db, j)
    queue = [fresh.get(j.path, j) for j in work]
    # a cold build writes the rows first and sorts them into the secondary indexes once
    # at the end: kept up row by row, they make the build grow faster than the log
    cold = (db.execute("SELECT 1 FROM records LIMIT 1").fetchone() is None
            and not any(j.offset for j in queue))
    if cold:
        database.drop_record_indexes(db)
    while queue:
        j = queue.pop()
        if _changed(j):
            queue += _index(db, j, fresh, stats)
    if cold:
        database.create_record_indexes(db)


class _Stats:
    def __init__(self, journals: int) -> None:
        self.journals = journals
        self.read = 0
        self.records = 0
        self.rebuilt = 0

    def done(self, t0: float) -> RefreshStats:
        return RefreshStats(self.journals, self.read, self.records, self.rebuilt,
                            time.perf_counter() - t0)


def _forget(db: sqlite3.Connection, j: _Journal) -> None:
    row = db.execute("SELECT jid FROM journals WHERE path = ?", (j.path,)).fetchone()
    if row is not None:
        db.execute("DELETE FROM records WHERE jid = ?", (row[0],))
        db.execute("DELETE FROM journals WHERE jid = ?", (row[0],))
    j.jid = None
    if j.stream == MAIN:
        db.execute("DELETE FROM sessions WHERE session_id = ?", (j.session_id,))


def _register(db: sqlite3.Connection, j: _Journal) -> int:
    """The journal's row in ``journals`` (made now if it has none): its ``jid``."""
    if j.jid is None:
        cur = db.execute("INSERT INTO journals (path, session_id, stream) VALUES (?, ?, ?)",
                         (j.path, j.session_id, j.stream))
        j.jid = int(cur.lastrowid or 0)
    return j.jid


def _reset(db: sqlite3.Connection, j: _Journal) -> None:
    _forget(db, j)
    j.offset, j.last_sequence, j.last_hash, j.inode = 0, 0, None, 0


def _summary(db: sqlite3.Connection, j: _Journal) -> Summary | None:
    if j.stream != MAIN:
        return None
    row = db.execute(
        "SELECT started_at, started_ms, last_at, last_ms, folder, records, termination, "
        "first_prompt, harness FROM sessions WHERE session_id = ?", (j.session_id,)).fetchone()
    if not row:
        return Summary()
    return Summary(started_at=row[0], started_ms=row[1], last_at=row[2], last_ms=row[3],
                   folder=row[4], records=row[5], termination=row[6], first_prompt=row[7],
                   harness=row[8])


def _index(db: sqlite3.Connection, j: _Journal, known: dict[str, _Journal],
           stats: _Stats) -> list[_Journal]:
    """Read what ``j`` gained; return subagent journals it revealed."""
    try:
        fh = open(j.path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        _forget(db, j)
        return []
    with fh:
        st = os.fstat(fh.fileno())
        if (st.st_ino != j.inode and j.inode) or st.st_size < j.offset:
            _reset(db, j)
            stats.rebuilt += 1
        reader = _Reader(db, j)
        if not reader.read(fh):  # the next record does not chain on: re-read it all
            _reset(db, j)
            stats.rebuilt += 1
            reader = _Reader(db, j)
            reader.read(fh)
    j.inode = st.st_ino
    stats.read += 1
    stats.records += reader.added
    db.execute(
        "UPDATE journals SET inode = ?, offset = ?, last_sequence = ?, last_hash = ? "
        "WHERE jid = ?", (j.inode, j.offset, j.last_sequence, j.last_hash, _register(db, j)))
    known[j.path] = j
    reader.save_summary()
    return [c for c in reader.children if c.path not in known]


class _Reader:
    """Reads a journal from ``j.offset`` and writes its records to the index."""

    def __init__(self, db: sqlite3.Connection, j: _Journal) -> None:
        self.db = db
        self.j = j
        self.jid = _register(db, j)
        self.summary = _summary(db, j)
        self.added = 0
        self.children: list[_Journal] = []
        # tool_use_id -> the row of its intent while its effect is open (state per open
        # effect: closed ones are dropped); a row already written is updated by its key
        self.intents: dict[str, list[Any]] = {}
        self.written: set[str] = set()  # the open intents whose rows a flush wrote
        self.seconds: dict[str, int | None] = {}  # "YYYY-MM-DDTHH:MM:SS" -> its ms
        self.add = self.summary.add if self.summary is not None else None
        self.spawns = j.stream == MAIN  # subagent.started names a subagent's journal
        self.from_start = j.offset == 0  # nothing of this journal is indexed before it
        self.last_raw: bytes | None = None  # the last record read

    def read(self, fh: Any) -> bool:
        """Index the lines after ``j.offset``; False when they do not continue the chain
        indexed so far."""
        j = self.j
        rows: list[list[Any]] = []
        record = self.record
        last_raw: bytes | None = None
        last: Record | None = None
        offset = j.offset
        for line in lines_after(fh, j.offset, j.last_hash, CHUNK):
            if line is None:
                return False
            offset, raw, rec = line
            if rec is not None:
                record(rec, rows)
                last_raw, last = raw, rec
                if len(rows) >= FLUSH_ROWS:
                    self.flush(rows)
        j.offset = offset
        self.flush(rows)
        if last_raw is not None and last is not None:  # the cursor: the hash it declares
            self.last_raw = last_raw
            j.last_sequence = int(last["sequence"])
            j.last_hash = declared_hash(last_raw)
        return True

    def record(self, rec: Record, rows: list[list[Any]]) -> None:
        kind, tool, text, decision, rule, outcome, tid = facet_values(rec)
        at = rec.get("recorded_at")
        at = at if isinstance(at, str) else None
        ms = self.ms(at)
        sequence = rec["sequence"]
        row = [self.jid, sequence, at, ms, kind, tool, text, decision, rule, outcome, tid,
               decision if kind == INTENT else None, None]
        if tid and kind == TERMINAL:
            self.close_effect(rows, tid, decision, outcome, sequence)
        rows.append(row)
        if tid and kind == INTENT:
            self.intents[tid] = row
            self.written.discard(tid)  # a new intent of the same id: not written yet
        if self.add is not None:
            self.add(rec, kind, at, ms)
        if kind == "subagent.started" and self.spawns:
            self.child(rec)

    def ms(self, at: str | None) -> int | None:
        """``parse_iso_ms(at)``, each second's part computed once (the records of a log
        share it)."""
        if at is None or len(at) < 23 or at[19] != "." or not at.endswith("Z"):
            return parse_iso_ms(at)
        second = at[:19]
        base = self.seconds.get(second, -1)  # -1: not seen (a second's ms divide by 1000)
        if base == -1:
            day = parse_iso_ms(at[:11] + "00:00:00.000Z")
            try:
                base = None if day is None else (
                    day + int(at[11:13]) * 3_600_000 + int(at[14:16]) * 60_000
                    + int(at[17:19]) * 1000)
            except ValueError:
                base = None
            if len(self.seconds) >= 4096:
                self.seconds.clear()
            self.seconds[second] = base
        if base is None:
            return None
        try:
            return base + int(at[20:23])
        except ValueError:
            return None

    def close_effect(self, rows: list[list[Any]], tid: str, observed: str | None,
                     outcome: str | None, sequence: int) -> None:
        row = self.intents.pop(tid, None)
        if row is not None:
            row[11] = effective(row[7], observed)
            row[9], row[12] = outcome, sequence
            if tid not in self.written:
                return
            self.written.discard(tid)
            # written by an earlier flush of this read: update it by its primary key
            self.db.execute(
                "UPDATE records SET authorization = ?, outcome = ?, terminal_sequence = ? "
                "WHERE jid = ? AND sequence = ?", (row[11], outcome, sequence, row[0], row[1]))
            return
        if self.from_start:
            return  # its intent is not in the log before it (or was closed already)
        self.flush(rows)  # the intent was indexed by an earlier refresh: update it in place
        self.db.execute(
            "UPDATE records INDEXED BY records_intent SET authorization = CASE WHEN decision "
            "LIKE 'defer:%' OR decision LIKE 'ask:%' THEN coalesce(?, decision) ELSE decision "
            "END, outcome = ?, terminal_sequence = ? WHERE jid = ? AND tool_use_id = ? "
            "AND kind = 'side_effect_intent'",  # a literal: see the index
            (observed, outcome, sequence, self.jid, tid))

    def flush(self, rows: list[list[Any]]) -> None:
        if rows:
            self.db.executemany(
                "INSERT OR REPLACE INTO records VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows)
            self.added += len(rows)
            rows.clear()
            self.written.update(self.intents)  # still open: written now

    def child(self, rec: Record) -> None:
        body = journal.body_of(rec)
        agent = body.get("agent_id")
        if not paths.is_safe_id(agent):
            return
        log = os.path.join(os.path.dirname(self.j.path), "subagent", str(agent), journal.LOG_NAME)
        self.children.append(_Journal(log, self.j.session_id, f"subagent/{agent}"))

    def save_summary(self) -> None:
        s = self.summary
        if s is None:
            return
        self.db.execute(
            "INSERT OR REPLACE INTO sessions (session_id, journal, folder, started_at, started_ms,"
            " last_at, last_ms, records, termination, first_prompt, harness) VALUES "
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (self.j.session_id, self.j.path, s.folder, s.started_at, s.started_ms, s.last_at,
             s.last_ms, s.records, s.termination, s.first_prompt, s.harness))
