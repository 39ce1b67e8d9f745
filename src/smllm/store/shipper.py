"""``smllm ship``: send journals to the team store, idempotently.

A record is identified by (host, session, stream, sequence) and carries its hash. Each
batch is one transaction: ``COPY`` into a temporary staging table, ``INSERT ... ON
CONFLICT DO NOTHING`` into ``smllm.records``, then the staged rows whose stored twin
has another hash are reported as conflicts (an edit or a fork): never overwritten.
After the commit, the local cursor of each journal (byte offset, sequence, hash, per
store) moves on, so the next ship reads only what was appended. A kill at any point
leaves either the whole batch or none of it; the rows a lost cursor makes us send
again are recognised as duplicates.

A backlog never shipped before is copied straight into ``smllm.records`` (one pass,
inside a savepoint); if a row is already there (a re-send after a lost cursor) or COPY
is refused (row-level security), the batch goes through the staging table instead.
Reading and encoding run in a thread beside the database work, so that Python and
the server each keep one core busy.

A batch the store refuses (a line it cannot hold: a timestamp out of its range, say) is
sent again one session at a time: the sessions it accepts ship, the one it refuses is
reported with the store's reason, its cursor stays (the next ship tries it again) and
its later rows are held back in this run.
"""

from __future__ import annotations

import os
import queue
import sqlite3
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from smllm.base import faults
from smllm.base.errors import StoreError
from smllm.index import database, origin, refresher
from smllm.index.facets import declared_hash, facets, lines_after
from smllm.store import redaction, schema
from smllm.store.address import shown
from smllm.store.connection import connect, first_line

if TYPE_CHECKING:
    from smllm.base.shapes import Record

BATCH_ROWS = 20_000
#: while shipping, the reader thread would keep the GIL for the interpreter's default 5 ms
#: each time the sending thread needs it back (once per socket write): measured 2x slower
SWITCH_INTERVAL = 0.00005
CHUNK = 4 * 1024 * 1024
CONFLICTS_KEPT = 100
COLUMNS = ("host", "session_id", "stream", "sequence", "hash", "recorded_at", "kind",
           "tool", "target", "decision", "rule", "outcome", "tool_use_id", "line", "line_bytes",
           "redacted", "chain")
_STAGE = ("CREATE TEMP TABLE IF NOT EXISTS ship_stage (host text, session_id text, stream text,"
          " sequence bigint, hash text, recorded_at timestamptz, kind text, tool text,"
          " target text, decision text, rule text, outcome text, tool_use_id text, line text,"
          " line_bytes bytea, redacted boolean, chain text) ON COMMIT DELETE ROWS")
_COLS = ", ".join(COLUMNS)


@dataclass(frozen=True)
class Conflict:
    host: str
    session_id: str
    stream: str
    sequence: int
    stored_hash: str
    local_hash: str

    def text(self) -> str:
        return (f"conflict: {self.session_id} {self.stream} #{self.sequence}: the store holds "
                f"{self.stored_hash[:19]}…, this journal {self.local_hash[:19]}… (edited or "
                "forked since it was shipped; the stored row is kept)")


@dataclass
class Report:
    journals: int = 0
    read: int = 0  # journals with something new
    sent: int = 0
    inserted: int = 0
    conflicts: list[Conflict] = field(default_factory=list)
    conflict_count: int = 0
    #: session id -> why the store refused it (not shipped; tried again next time)
    failed: dict[str, str] = field(default_factory=dict)
    #: how the store is shipped to: secrets masked (``redacted``) or in clear (``raw``)
    shipping: redaction.Shipping = "redacted"

    @property
    def duplicates(self) -> int:
        return self.sent - self.inserted - self.conflict_count

    def as_json(self) -> dict[str, Any]:
        return {"shipping": self.shipping, "journals": self.journals, "read": self.read,
                "sent": self.sent,
                "inserted": self.inserted, "duplicates": self.duplicates,
                "conflicts": self.conflict_count,
                "conflict_rows": [c.__dict__ for c in self.conflicts],
                "failed": [{"session_id": sid, "error": why}
                           for sid, why in self.failed.items()]}


class Source:
    """One journal to ship and where its cursor stands."""

    __slots__ = ("chain", "folder", "offset", "path", "prev", "secrets", "session_id",
                 "started_at", "stored", "stream")

    def __init__(self, path: str, session_id: str, stream: str, *, folder: str | None,
                 started_at: str | None) -> None:
        self.path = path
        self.session_id = session_id
        self.stream = stream
        self.folder = folder
        self.started_at = started_at
        self.offset = 0  # the cursor: just after the line hashed ``prev``
        self.prev: str | None = None
        #: the store's last row of this journal: (sequence, chain link), if any
        self.stored: tuple[int, str] | None = None
        #: the stored-row chain's link of the line before the next one read
        self.chain = redaction.GENESIS
        #: redacted shipping: what pass 1 learnt of the session (None: raw shipping)
        self.secrets: redaction.SessionSecrets | None = None


def _escape(value: str) -> str:
    return (value.replace("\x00", "").replace("\\", "\\\\").replace("\t", "\\t")
            .replace("\n", "\\n").replace("\r", "\\r"))


def _field(value: object) -> str:
    if value is None:
        return "\\N"
    return _escape(value) if isinstance(value, str) else str(value)


_SEP, _NULL = "\x1e", "\x1f"  # stand-ins for the tab and \N while escaping in one pass


def copy_fields(values: tuple[object, ...]) -> str:
    """``values`` as one COPY text-format row (without its newline): tab-separated, each
    escaped, None as ``\\N``, NUL characters dropped (PostgreSQL text cannot hold them)."""
    nones = 0
    parts = []
    for v in values:
        if v is None:
            nones += 1
            parts.append(_NULL)
        else:
            parts.append(v if isinstance(v, str) else str(v))
    joined = _SEP.join(parts)
    if (joined.count(_SEP) != len(parts) - 1 or joined.count(_NULL) != nones
            or "\x00" in joined):
        return "\t".join(_field(v) for v in values)  # a value holds a stand-in: the slow way
    return (joined.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
            .replace("\r", "\\r").replace(_SEP, "\t").replace(_NULL, "\\N"))


def line_hash(raw: bytes, rec: Record) -> str:
    """The hash a line declares: read from its end when written as smllm writes it, else
    (other JSON whitespace, say) from the parsed record."""
    declared = declared_hash(raw)
    if not declared:
        value = rec.get("hash")
        declared = value if isinstance(value, str) else ""
    return declared


def encode_row(host: str, src: Source, raw: bytes, rec: Record) -> bytes:
    """One ``COPY ... FROM STDIN`` text-format row for a journal line (redacted when
    ``src.secrets`` is set); moves ``src.chain`` on to this row's link."""
    digest = line_hash(raw, rec)
    found = src.secrets
    redacted = False
    if found is not None:
        raw, rec, redacted = redaction.redact_line(src.path, raw, rec, found)
    f = facets(rec)
    at = rec.get("recorded_at")
    sequence = int(rec["sequence"])
    chain = redaction.link(src.chain, digest, redacted, raw)
    if src.stored is not None and sequence == src.stored[0]:
        chain = src.stored[1]  # already stored: the rows after it chain onto its link
    src.chain = chain
    head = copy_fields((
        host, src.session_id, src.stream, sequence, digest,
        at if isinstance(at, str) else None,
        f.kind, f.tool, redaction.mask_text(f.text, found), f.decision,
        redaction.mask_text(f.rule, found), redaction.mask_text(f.outcome, found),
        f.tool_use_id)).encode()
    # a parsed record line is valid UTF-8 without a newline; JSON escapes control
    # characters inside strings, but a tab or carriage return between tokens is valid JSON
    # whitespace and must be escaped for COPY like the backslashes
    line = raw.replace(b"\\", b"\\\\")
    if b"\t" in line or b"\r" in line:
        line = line.replace(b"\t", b"\\t").replace(b"\r", b"\\r")
    tail = b"\tt\t" if redacted else b"\tf\t"
    return head + b"\t" + line + b"\t\\N" + tail + chain.encode() + b"\n"


class _Batch:
    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.owners: list[str] = []  # the session of each part
        self.rows = 0
        self.sessions: dict[str, Source] = {}
        self.cursors: dict[str, tuple[int, int, str]] = {}
        self.cursor_owners: dict[str, str] = {}  # journal path -> its session
        #: (session, stream) -> (sequence, chain link) of its last row in the batch
        self.heads: dict[tuple[str, str], tuple[int, str]] = {}

    def only(self, keep: set[str]) -> _Batch:
        """The rows and cursors of the sessions in ``keep``."""
        out = _Batch()
        for part, owner in zip(self.parts, self.owners, strict=True):
            if owner in keep:
                out.parts.append(part)
                out.owners.append(owner)
        out.rows = len(out.parts)
        out.sessions = {sid: src for sid, src in self.sessions.items() if sid in keep}
        out.cursor_owners = {p: sid for p, sid in self.cursor_owners.items() if sid in keep}
        out.cursors = {p: c for p, c in self.cursors.items() if p in out.cursor_owners}
        out.heads = {k: v for k, v in self.heads.items() if k[0] in keep}
        return out


def _lines(src: Source) -> Iterator[tuple[int, bytes, Record] | None]:
    """(offset after the line, line, record) from the cursor on; a None first means the
    journal does not continue the cursor's chain (read it again from the start)."""
    with open(src.path, "rb") as fh:
        for line in lines_after(fh, src.offset, src.prev, CHUNK):
            if line is None:
                yield None
                return
            pos, raw, rec = line
            if rec is not None:
                yield pos, raw, rec


def _produce(sources: list[Source], host: str, out: queue.Queue[Any], report: Report,
             logs: dict[str, list[str]] | None) -> None:
    """Read and encode every source's new lines into batches (``logs``: redacted
    shipping, each session's journals, all read first to learn its secrets)."""
    batch = _Batch()
    learnt: tuple[str, redaction.SessionSecrets] | None = None
    try:
        for src in sources:
            if logs is not None:
                if learnt is None or learnt[0] != src.session_id:
                    learnt = (src.session_id,
                              redaction.learn(logs.get(src.session_id, [src.path])))
                src.secrets = learnt[1]
            fresh = True
            while True:
                restarted = False
                for item in _lines(src):
                    if item is None:
                        src.offset, src.prev, src.chain = 0, None, redaction.GENESIS
                        restarted = True
                        break
                    pos, raw, rec = item
                    if fresh:
                        report.read += 1
                        fresh = False
                    batch.parts.append(encode_row(host, src, raw, rec))
                    batch.owners.append(src.session_id)
                    batch.rows += 1
                    batch.sessions[src.session_id] = src
                    batch.cursors[src.path] = (pos, int(rec["sequence"]), line_hash(raw, rec))
                    batch.cursor_owners[src.path] = src.session_id
                    batch.heads[(src.session_id, src.stream)] = (
                        int(rec["sequence"]), src.chain)
                    if batch.rows >= BATCH_ROWS:
                        out.put(batch)
                        batch = _Batch()
                if not restarted:
                    break
        if batch.rows:
            out.put(batch)
        out.put(None)
    except BaseException as exc:  # handed to the consumer, which raises it
        out.put(exc)


def _logs(db: sqlite3.Connection, sources: list[Source]) -> dict[str, list[str]]:
    """Every journal of each session in ``sources`` (those with nothing new too: a
    subagent's log can hold a secret the main log repeats)."""
    wanted = {src.session_id for src in sources}
    out: dict[str, list[str]] = {}
    for path, sid in db.execute("SELECT path, session_id FROM journals ORDER BY path"):
        if sid in wanted:
            out.setdefault(sid, []).append(path)
    return out


def _stored_heads(conn: Any, host: str, sources: list[Source]) -> None:
    """Each source's last stored row (sequence, chain link): a resumed ship chains on."""
    with conn.cursor() as cur:
        cur.execute("SELECT DISTINCT ON (session_id, stream) session_id, stream, sequence, "
                    "coalesce(chain, '') FROM smllm.records WHERE host = %s AND "
                    "session_id = ANY(%s) ORDER BY session_id, stream, sequence DESC",
                    (host, sorted({src.session_id for src in sources})))
        found = {(sid, stream): (int(seq), chain) for sid, stream, seq, chain in cur}
    for src in sources:
        src.stored = found.get((src.session_id, src.stream))
        if src.stored is not None and src.offset:
            src.chain = src.stored[1]


def _sources(db: sqlite3.Connection, store: str, sessions: set[str] | None,
             recheck: bool) -> list[Source]:
    rows = db.execute(
        "SELECT j.path, j.session_id, j.stream, s.folder, s.started_at, c.offset, c.hash "
        "FROM journals j LEFT JOIN sessions s ON s.session_id = j.session_id "
        "LEFT JOIN ship_cursors c ON c.store = ? AND c.path = j.path "
        "ORDER BY s.started_ms, j.session_id, j.stream = 'main' DESC, j.stream", (store,))
    out = []
    for path, sid, stream, folder, started, offset, digest in rows:
        if sessions is not None and sid not in sessions:
            continue
        src = Source(path, sid, stream, folder=folder, started_at=started)
        if offset is not None and not recheck:
            try:
                size = os.stat(path).st_size
            except FileNotFoundError:
                continue
            if size == offset:
                continue  # nothing new since the last ship
            if size > offset:
                src.offset, src.prev = offset, digest
        out.append(src)
    return out


def _copy(cur: Any, table: str, batch: _Batch) -> None:
    with cur.copy(f"COPY {table} ({_COLS}) FROM STDIN") as cp:
        for start in range(0, len(batch.parts), 5000):
            cp.write(b"".join(batch.parts[start:start + 5000]))


def _send_direct(cur: Any, batch: _Batch, report: Report) -> bool:
    """COPY the batch straight into ``smllm.records`` (a backlog never shipped: one pass).
    False when a row is already stored, or COPY is not allowed (row-level security)."""
    psycopg = __import__("psycopg")
    try:
        with cur.connection.transaction():  # a savepoint: a refusal undoes only this
            _copy(cur, "smllm.records", batch)
            faults.point("ship-copied")
    except (psycopg.errors.UniqueViolation, psycopg.errors.FeatureNotSupported):
        return False
    report.sent += batch.rows
    report.inserted += batch.rows
    return True


def _send(cur: Any, batch: _Batch, host: str, report: Report, direct: bool) -> bool:
    """Store one batch; ``direct``: try copying it straight into ``smllm.records`` first.
    Returns whether the next batch may try that too."""
    user, version = origin.user(), origin.version()
    cur.executemany(
        "INSERT INTO smllm.sessions (host, session_id, os_user, project, git_remote, "
        "smllm_version, started_at) VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
        [(host, sid, user, redaction.mask_text(src.folder, src.secrets),
          redaction.mask_text(origin.git_remote(src.folder), src.secrets), version,
          src.started_at)
         for sid, src in batch.sessions.items()])
    cur.executemany(
        "INSERT INTO smllm.heads (host, session_id, stream, sequence, chain) "
        "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
        [(host, sid, stream, seq, chain)
         for (sid, stream), (seq, chain) in sorted(batch.heads.items())])
    if direct and _send_direct(cur, batch, report):
        return True
    # duplicates (a re-send) or RLS: staging from now on
    _copy(cur, "ship_stage", batch)
    faults.point("ship-copied")
    cur.execute(f"INSERT INTO smllm.records ({_COLS}) SELECT {_COLS} FROM ship_stage "  # noqa: S608
                "ON CONFLICT DO NOTHING")
    inserted = max(cur.rowcount, 0)
    report.sent += batch.rows
    report.inserted += inserted
    if inserted < batch.rows:
        cur.execute("SELECT s.host, s.session_id, s.stream, s.sequence, r.hash, s.hash "
                    "FROM ship_stage s JOIN smllm.records r ON r.host = s.host AND "
                    "r.session_id = s.session_id AND r.stream = s.stream AND "
                    "r.sequence = s.sequence WHERE r.hash <> s.hash "
                    "ORDER BY s.session_id, s.stream, s.sequence")
        found = cur.fetchall()
        report.conflict_count += len(found)
        room = CONFLICTS_KEPT - len(report.conflicts)
        report.conflicts += [Conflict(*row) for row in found[:max(room, 0)]]
    return False


def _save_cursors(db: sqlite3.Connection, store: str, cursors: dict[str, tuple[int, int, str]]
                  ) -> None:
    db.execute("BEGIN IMMEDIATE")
    db.executemany("INSERT OR REPLACE INTO ship_cursors (store, path, offset, sequence, hash) "
                   "VALUES (?, ?, ?, ?, ?)",
                   [(store, path, *pos) for path, pos in cursors.items()])
    db.execute("COMMIT")


def _pump(conn: Any, db: sqlite3.Connection, store: str, sources: list[Source], *, host: str,
          report: Report, logs: dict[str, list[str]] | None) -> None:
    """Read and encode in a thread; send each batch in its own transaction, then move the
    cursors it covers."""
    with conn.cursor() as cur:
        cur.execute("SET temp_buffers = '256MB'")
        cur.execute(_STAGE)
    conn.commit()
    direct = True
    pipe: queue.Queue[Any] = queue.Queue(maxsize=2)
    worker = threading.Thread(target=_produce, args=(sources, host, pipe, report, logs),
                              daemon=True)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)
    try:
        worker.start()
        while True:
            batch = pipe.get()
            if batch is None:
                break
            if isinstance(batch, BaseException):
                raise batch
            if report.failed:  # a refused session's later rows wait for its next ship
                batch = batch.only(set(batch.sessions) - set(report.failed))
            try:
                with conn.transaction(), conn.cursor() as cur:
                    direct = _send(cur, batch, host, report, direct)
            except _refused() as exc:
                if len(batch.sessions) == 1:
                    report.failed[next(iter(batch.sessions))] = first_line(exc)
                    continue
                direct = _send_each(conn, db, store, batch, host=host, report=report,
                                    direct=direct)
                continue
            faults.point("ship-committed")
            _save_cursors(db, store, batch.cursors)
        worker.join()
    finally:
        sys.setswitchinterval(interval)


def _refused() -> tuple[type[Exception], ...]:
    """The errors with which the store refuses a row (not the connection or the schema)."""
    psycopg = __import__("psycopg")
    return (psycopg.errors.DataError, psycopg.errors.IntegrityError)


def _send_each(conn: Any, db: sqlite3.Connection, store: str, batch: _Batch, *, host: str,
               report: Report, direct: bool) -> bool:
    """Send a refused batch again one session at a time: a session the store refuses is
    reported and keeps its cursor; the others ship."""
    for sid in list(batch.sessions):
        part = batch.only({sid})
        try:
            with conn.transaction(), conn.cursor() as cur:
                direct = _send(cur, part, host, report, direct)
        except _refused() as exc:
            report.failed[sid] = first_line(exc)
            continue
        faults.point("ship-committed")
        _save_cursors(db, store, part.cursors)
    return direct


def ship(url: str, *, sessions: set[str] | None = None, recheck: bool = False) -> Report:
    """Ship the journals of ``sessions`` (None: every session) to the store at ``url``."""
    conn = connect(url)
    report = Report()
    try:
        schema.check(conn)
        store = schema.store_id(conn)
        report.shipping = schema.shipping(conn)
        host = origin.host()
        with database.connect() as db:
            refresher.refresh(db)
            sources = _sources(db, store, sessions, recheck)
            report.journals = len(sources)
            if not sources:
                conn.commit()
                return report
            _stored_heads(conn, host, sources)
            conn.commit()
            logs = _logs(db, sources) if report.shipping == "redacted" else None
            _pump(conn, db, store, sources, host=host, report=report, logs=logs)
    except StoreError:
        raise
    except Exception as exc:
        psycopg = __import__("psycopg")
        if isinstance(exc, psycopg.Error):
            raise StoreError(f"shipping to {shown(url)} failed: {first_line(exc)}",
                             "nothing was lost: the journals are the outbox; ship again "
                             "once the store is reachable") from None
        raise
    finally:
        conn.close()
    return report
