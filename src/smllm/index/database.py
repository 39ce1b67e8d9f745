"""The index's SQLite file: where it is, its schema, opening it safely.

The index is derived data. A file of another schema version, or one SQLite cannot
read, is deleted and rebuilt from the journals (the ship cursors kept in it are lost
with it: the next ship re-sends, which the store ignores as duplicates).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from smllm.base import paths

FILE_NAME = "index.sqlite3"
SCHEMA_VERSION = 1
BUSY_MS = 30_000

SCHEMA = """
CREATE TABLE journals (
  path TEXT PRIMARY KEY,
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
  first_prompt TEXT
);
CREATE INDEX sessions_started ON sessions (started_ms);
CREATE INDEX sessions_last ON sessions (last_ms);
CREATE INDEX sessions_folder ON sessions (folder);
CREATE TABLE records (
  session_id TEXT NOT NULL,
  stream TEXT NOT NULL,
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
  PRIMARY KEY (session_id, stream, sequence)
) WITHOUT ROWID;
CREATE INDEX records_time ON records (recorded_ms);
CREATE INDEX records_kind ON records (kind, recorded_ms);
CREATE INDEX records_stamp ON records (authorization) WHERE authorization IS NOT NULL;
CREATE INDEX records_intent ON records (session_id, stream, tool_use_id)
  WHERE kind = 'side_effect_intent';
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


@contextmanager
def connect() -> Iterator[sqlite3.Connection]:
    """An open connection to the index (created or rebuilt as needed)."""
    file = path()
    try:
        db = _open(file)
    except sqlite3.DatabaseError:
        _discard(file)  # not a database, or a broken one: it is only a cache
        db = _open(file)
    try:
        yield db
    finally:
        db.close()
