"""Finding journals in the store: by host session id, by path, or the latest."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from smllm import journal
from smllm.base import paths
from smllm.base.errors import SessionNotFound


@dataclass(frozen=True)
class StoredSession:
    session_id: str
    path: Path
    mtime: float

    @property
    def cwd(self) -> str | None:
        """The folder the session ran in, from its first ``session.start``."""
        for rec in journal.iter_records(self.path):
            if rec.get("payload_type") == "session.start":
                body = (rec.get("payload") or {}).get("record") or {}
                cwd = body.get("cwd")
                return cwd if isinstance(cwd, str) else None
        return None


def sessions() -> list[StoredSession]:
    """Every host session in the store, most recently written first."""
    index = paths.sessions_dir() / "by-id"
    out: list[StoredSession] = []
    try:
        names = os.listdir(index)
    except FileNotFoundError:
        return out
    for sid in names:
        try:
            log = journal.log_path(sid)
            out.append(StoredSession(sid, log, log.stat().st_mtime))
        except (OSError, ValueError):
            continue
    out.sort(key=lambda s: (s.mtime, s.session_id), reverse=True)
    return out


def latest(cwd: str | None = None) -> StoredSession:
    """The most recent session (in ``cwd`` when given)."""
    for s in sessions():
        if cwd is None or s.cwd == cwd:
            return s
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
    matches = [s for s in sessions() if s.session_id.startswith(spec)]
    if len(matches) == 1:
        return matches[0].path
    if len(matches) > 1:
        ids = ", ".join(s.session_id for s in matches[:5])
        raise SessionNotFound(f"session id prefix {spec!r} is ambiguous", f"matches: {ids}")
    raise SessionNotFound(
        f"no session {spec!r} in {paths.sessions_dir()}",
        "list the sessions with `smllm export` on a terminal, or give a path to session.jsonl",
    )
