"""The embedded index: one SQLite database beside the journals, for listing and search.

The journals stay the source of truth. The index is derived from them, rebuilt from
scratch when it is missing, corrupt or of an older schema, and brought up to date
**on read**: every query first looks at the journals (one ``stat`` each, plus the
``by-id`` folder for new sessions) and reads only the bytes appended since the last
look. No hook writes to it: a gating hook never waits on it.

The query API (used by the CLI, the picker, ``--last`` and ``smllm serve``)::
    from smllm import index
    from smllm.index import Filters

    index.refresh()                                   # optional: queries refresh first
    rows = index.sessions(Filters(project="/src/app", limit=20))   # list[SessionRow]
    hits = index.search(Filters(kind="side_effect_intent", authorizer="llm_judge",
                                text="rm -rf"))       # list[Hit]
    row = index.session("c7dfaecc")                   # by id or unique prefix

The same :class:`Filters` works against the team store (:mod:`smllm.store`), whose
query functions return the same :class:`SessionRow` and :class:`Hit`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from smllm.index.model import DECISIONS, Filters, Hit, RefreshStats, SessionRow

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "DECISIONS",
    "Filters",
    "Hit",
    "RefreshStats",
    "SessionRow",
    "database_path",
    "latest",
    "refresh",
    "search",
    "session",
    "sessions",
]


def database_path() -> Path:
    """Where the index lives: ``<data dir>/index.sqlite3`` (0600)."""
    from smllm.index import database  # noqa: PLC0415 - sqlite3: only when the index is queried

    return database.path()


def refresh(*, rebuild: bool = False) -> RefreshStats:
    """Bring the index up to date with the journals; ``rebuild`` starts from empty."""
    from smllm.index import database, refresher  # noqa: PLC0415 - sqlite3: only when the index is queried

    with database.connect() as db:
        return refresher.refresh(db, rebuild=rebuild)


def sessions(filters: Filters | None = None, *, by: Literal["started", "active"] = "started",
             fresh: bool = True) -> list[SessionRow]:
    """Host sessions matching ``filters``, newest first: by start, or by last record
    (``by="active"``). Refreshes the index first unless ``fresh`` is False; where the
    index cannot be written (a read-only data folder), reads a scan of the journals."""
    from smllm.index import database, queries, refresher  # noqa: PLC0415 - sqlite3: only when the index is queried

    with database.reading(refresher.refresh, fresh) as db:
        return queries.sessions(db, filters or Filters(), by=by)


def latest(folder: str | None = None, *, fresh: bool = True) -> SessionRow | None:
    """The most recently active session that ran exactly in ``folder`` (any if None)."""
    from smllm.index import database, queries, refresher  # noqa: PLC0415 - sqlite3: only when the index is queried

    with database.reading(refresher.refresh, fresh) as db:
        return queries.latest(db, folder)


def search(filters: Filters | None = None, *, fresh: bool = True) -> list[Hit]:
    """Records matching ``filters``, newest first (intents with their effect joined)."""
    from smllm.index import database, queries, refresher  # noqa: PLC0415 - sqlite3: only when the index is queried

    with database.reading(refresher.refresh, fresh) as db:
        return queries.search(db, filters or Filters())


def session(spec: str, *, fresh: bool = True) -> SessionRow | None:
    """The session with id ``spec``, else the one whose id starts with it; None if none.

    Raises :class:`smllm.base.errors.SessionNotFound` when the prefix is ambiguous.
    """
    from smllm.index import database, queries, refresher  # noqa: PLC0415 - sqlite3: only when the index is queried

    with database.reading(refresher.refresh, fresh) as db:
        return queries.session(db, spec)
