"""The index's SQLite file: where it is, its schema, opening it safely.

The index is derived data. A file of another schema version, or one SQLite cannot
read, is deleted and rebuilt from the journals (the ship cursors kept in it are lost
with it: the next ship re-sends, which the store ignores as duplicates).
"""

from __future__ import annotations

import os
import sqlite3
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from smllm.base import paths

FILE_NAME = "index.sqlite3"
SCHEMA_VERSION = 4  # 2: model.call text searchable; 3: sessions.harness; 4: records by jid
BUSY_MS = 30_000

SCHEMA = """
CREATE TABLE journals (
  jid INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  session_id TEXT NOT NULL,
  stream TEXT NOT NULL,
  inode INTEGER NOT NULL DEFAULT 0,
  offset INTEGER NOT NULL DEFAULT 0,
  last_sequence INTEGER NOT NULL DEFAULT 0,
  last_hash TEXT
);
CREATE INDEX journals_session ON journals (session_id);
CREATE TABLE sessions (
  session_id TEXT PRIMARY KEY,
  journal TEXT NOT NULL,
  folder TEXT,
  started_at TEXT,
  started_ms INTEGER,
  last_at TEXT,
  last_ms INTEGER,
  records INTEGER NOT NULL DEFAULT 0,
  termination TEXT NOT NULL DEFAULT 'open',
  first_prompt TEXT,
  harness TEXT
);
CREATE INDEX sessions_started ON sessions (started_ms);
CREATE INDEX sessions_last ON sessions (last_ms);
CREATE INDEX sessions_folder ON sessions (folder);
CREATE TABLE records (
  jid INTEGER NOT NULL,
  sequence INTEGER NOT NULL,
  recorded_at TEXT,
  recorded_ms INTEGER,
  kind TEXT,
  tool TEXT,
  text TEXT,
  decision TEXT,
  rule TEXT,
  outcome TEXT,
  tool_use_id TEXT,
  authorization TEXT,
  terminal_sequence INTEGER,
  PRIMARY KEY (jid, sequence)
) WITHOUT ROWID;
CREATE INDEX records_time ON records (recorded_ms);
CREATE INDEX records_kind ON records (kind, recorded_ms);
CREATE INDEX records_intent ON records (jid, tool_use_id) WHERE kind = 'side_effect_intent';
CREATE TABLE ship_cursors (
  store TEXT NOT NULL,
  path TEXT NOT NULL,
  offset INTEGER NOT NULL,
  sequence INTEGER NOT NULL,
  hash TEXT NOT NULL,
  PRIMARY KEY (store, path)
);
"""


#: the secondary indexes of ``records``: (name, statement)
RECORD_INDEXES = [(st.split()[2], st.strip()) for st in SCHEMA.split(";")
                  if st.strip().startswith("CREATE INDEX records_")]


def drop_record_indexes(db: sqlite3.Connection) -> None:
    """Drop the secondary indexes of ``records`` (a cold build recreates them at its end)."""
    for name, _ in RECORD_INDEXES:
        db.execute(f"DROP INDEX IF EXISTS {name}")


def create_record_indexes(db: sqlite3.Connection) -> None:
    """Create the secondary indexes of ``records`` that are missing."""
    for _, statement in RECORD_INDEXES:
        db.execute(statement.replace("CREATE INDEX", "CREATE INDEX IF NOT EXISTS", 1))


def path() -> Path:
    return Path(paths.data_root()) / FILE_NAME


def _open(file: Path) -> sqlite3.Connection:
    paths.ensure_private_tree(file.parent, paths.data_root())
    if not file.exists():
        fd = os.open(file, os.O_WRONLY | os.O_CREAT, paths.FILE_MODE)
        os.close(fd)
    db = sqlite3.connect(file, timeout=BUSY_MS / 1000, isolation_level=None,
                         check_same_thread=False)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute(f"PRAGMA busy_timeout={BUSY_MS}")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA_VERSION:
            _create(db)
    except BaseException:
        db.close()
        raise
    return db


def _create(db: sqlite3.Connection) -> None:
    db.execute("BEGIN IMMEDIATE")
    try:
        if db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
            db.execute("COMMIT")  # another process created it meanwhile
            return
        names = [r[0] for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
        for name in names:
            db.execute(f'DROP TABLE "{name}"')
        for statement in SCHEMA.split(";"):
            if statement.strip():
                db.execute(statement)
        db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def _discard(file: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        with suppress(FileNotFoundError):
            os.unlink(f"{file}{suffix}")


def _connect(file: Path) -> sqlite3.Connection:
    try:
        return _open(file)
    except sqlite3.DatabaseError as exc:
        if _unwritable(exc):
            raise
        _discard(file)  # not a database, or a broken one: it is only a cache
        return _open(file)


@contextmanager
def connect() -> Iterator[sqlite3.Connection]:
    """An open connection to the index (created or rebuilt as needed)."""
    db = _connect(path())
    try:
        yield db
    finally:
        db.close()


#: SQLite's primary result codes that say the file cannot be written (or opened) here
_UNWRITABLE_CODES = frozenset({3, 5, 6, 8, 10, 14})  # PERM BUSY LOCKED READONLY IOERR CANTOPEN
_UNWRITABLE_WORDS = ("readonly", "read-only", "unable to open", "disk i/o error", "locked",
                     "attempt to write")
_noted = [False]


def _unwritable(exc: BaseException) -> bool:
    """Does ``exc`` say the index cannot be written or opened here (a read-only data
    folder, as in Claude Code's sandbox), rather than that it is broken?"""
    if isinstance(exc, OSError):
        return True
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in _UNWRITABLE_CODES
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and any(w in text for w in _UNWRITABLE_WORDS)


@contextmanager
def reading(refresh: Callable[[sqlite3.Connection], object],
            fresh: bool = True) -> Iterator[sqlite3.Connection]:
    """A connection to the index, brought up to date by ``refresh(db)`` first (unless
    ``fresh`` is False). Where the index cannot be written or opened (smllm's data folder
    read-only, as inside Claude Code's sandbox; a stale index nobody may update), the
    queries run on an index in memory built by a scan of the journals, with a note on
    stderr: a read-only command never fails on the index, which is only a cache."""
    file = path()
    try:
        db = _connect(file)
    except (OSError, sqlite3.Error) as exc:
        if not _unwritable(exc):
            raise
        db = _scan(file, exc, refresh)
    else:
        if fresh:
            try:
                refresh(db)
            except (OSError, sqlite3.Error) as exc:
                db.close()
                if not _unwritable(exc):
                    raise
                db = _scan(file, exc, refresh)
    try:
        yield db
    finally:
        db.close()


def _scan(file: Path, exc: BaseException, refresh: Callable[[sqlite3.Connection], object]
          ) -> sqlite3.Connection:
    """An index in memory, built from the journals."""
    if not _noted[0]:
        _noted[0] = True
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        sys.stderr.write(f"smllm: note: the index {file} cannot be updated here ({reason}); "
                         "reading the journals directly instead\n")
    db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    try:
        _create(db)
        refresh(db)
    except BaseException:
        db.close()
        raise
    return db
