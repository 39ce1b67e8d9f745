"""Finding journals: by host session id (or a unique prefix), by path, or the latest.

Backed by the embedded index (:mod:`smllm.index`), which is brought up to date on each
call: no folder scan, however many sessions the store holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from smllm import index, journal
from smllm.base import osfast as os
from smllm.base import paths
from smllm.base.clock import parse_iso_ms
from smllm.base.errors import SessionNotFound

LIST_HINT = "list them with `smllm sessions --all`, or give a path to session.jsonl"


@dataclass(frozen=True)
class StoredSession:
    session_id: str
    path: Path
    mtime: float
    cwd: str | None = None
    first_prompt: str | None = None
    started_at: str | None = None


def _stored(row: index.SessionRow) -> StoredSession:
    return StoredSession(row.session_id, Path(row.journal or ""),
                         (row.started_ms or 0) / 1000 if row.last_at is None else
                         _ms(row.last_at) / 1000, row.folder, row.first_prompt, row.started_at)


def _ms(at: str) -> int:
    return parse_iso_ms(at) or 0


def sessions(limit: int | None = None) -> list[StoredSession]:
    """Host sessions on this machine, most recently active first."""
    return [_stored(r) for r in index.sessions(index.Filters(limit=limit), by="active")]


def latest(cwd: str | None = None) -> StoredSession:
    """The most recently active session (that ran in ``cwd`` when given)."""
    row = index.latest(cwd)
    if row is not None:
        return _stored(row)
    where = f" for {cwd}" if cwd else ""
    raise SessionNotFound(
        f"no smllm journal found{where} in {paths.sessions_dir()}",
        "run a Claude Code session with smllm installed first (see `smllm doctor`)",
    )


def resolve(spec: str) -> Path:
    """A journal from a host session id (or a unique prefix of one) or a file path."""
    p = Path(spec).expanduser()
    if p.is_file():
        return p.absolute()
    if p.is_dir() and (p / journal.LOG_NAME).is_file():
        return (p / journal.LOG_NAME).absolute()
    if os.sep in spec or spec.endswith(".jsonl"):
        raise SessionNotFound(f"no journal at {spec}", "give a session id or an existing file")
    paths.check_id(spec)
    try:
        return journal.log_path(spec)
    except FileNotFoundError:
        pass
    row = index.session(spec)
    if row is not None and row.journal:
        return Path(row.journal)
    raise SessionNotFound(f"no session {spec!r} in {paths.sessions_dir()}", LIST_HINT)


def identity(path: Path) -> tuple[str, str] | None:
    """(session id, stream) of a journal in this machine's store, as the index and the team
    store name it (``main``, or ``subagent/<agent id>``); None for a file elsewhere."""
    root = os.path.realpath(paths.sessions_dir())
    parts = os.path.relpath(os.path.realpath(path), root).split(os.sep)
    # YYYY/MM/DD/<session>/session.jsonl or YYYY/MM/DD/<session>/subagent/<agent>/session.jsonl
    if parts[0] == os.pardir or parts[-1] != journal.LOG_NAME or len(parts) not in (5, 7):
        return None
    if not all(p.isdigit() for p in parts[:3]):
        return None
    if len(parts) == 5:
        return parts[3], "main"
    return (parts[3], f"subagent/{parts[5]}") if parts[4] == "subagent" else None
