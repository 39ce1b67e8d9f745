"""Where smllm sessions live: the audit (the record) and the state file (its cache).

``<state dir>/audit/<KEY>.jsonl`` gets one line per call, written with one
``os.write`` and fsynced before the reply is printed. ``<state dir>/sessions/<KEY>.json``
holds the session's state, rebuilt by replaying the audit whenever it does not
match the audit's size (a crash between the two writes). Every change happens under
an exclusive lock on ``sessions/<KEY>.lock``, so concurrent fires are serialized.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from smllm import faults, paths
from smllm.errors import SessionNotFound
from smllm.filelock import locked


def sessions_dir() -> Path:
    return paths.state_dir() / "sessions"


def bindings_dir() -> Path:
    return paths.state_dir() / "bindings"


def audit_path(key: str) -> Path:
    return paths.audit_dir() / f"{paths.check_id(key, 'smllm session')}.jsonl"


def state_path(key: str) -> Path:
    return sessions_dir() / f"{paths.check_id(key, 'smllm session')}.json"


def ensure_root() -> None:
    """Create the state folder (0700) and, if missing, its parents (``~/.local/state``)."""
    root = paths.state_dir()
    if not root.is_dir():
        os.makedirs(root.parent, exist_ok=True)
        paths.ensure_private_tree(root, root)


def _ensure(path: Path) -> Path:
    ensure_root()
    return Path(paths.ensure_private_tree(path, paths.state_dir()))


def dumps(obj: Any) -> str:
    """The one serialization of audit lines and ``--json`` replies (compact, UTF-8)."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


@contextlib.contextmanager
def session_lock(key: str) -> Iterator[None]:
    lock = _ensure(sessions_dir()) / f"{paths.check_id(key, 'smllm session')}.lock"
    with locked(lock):
        yield


@contextlib.contextmanager
def binding_lock(harness: str, host: str) -> Iterator[Path]:
    folder = _ensure(bindings_dir() / paths.check_id(harness, "harness"))
    host = paths.check_id(host, "host session id")
    with locked(folder / f"{host}.lock"):
        yield folder / f"{host}.key"


def exists(key: str) -> bool:
    return audit_path(key).exists()


def read_state(key: str) -> dict[str, Any] | None:
    try:
        data: dict[str, Any] = json.loads(state_path(key).read_bytes())
    except (OSError, ValueError):
        return None
    return data


def audit_size(key: str) -> int:
    try:
        return os.stat(audit_path(key)).st_size
    except OSError:
        return 0


def write_state(key: str, state: dict[str, Any]) -> None:
    path = _ensure(sessions_dir()) / state_path(key).name
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, paths.FILE_MODE)
    try:
        os.write(fd, json.dumps(state, ensure_ascii=False).encode("utf-8"))
    finally:
        os.close(fd)
    os.replace(tmp, path)


def append_audit(key: str, line: dict[str, Any]) -> int:
    """Append one audit line and fsync it; return the audit's new size in bytes."""
    path = _ensure(paths.audit_dir()) / audit_path(key).name
    data = (dumps(line) + "\n").encode("utf-8")
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, paths.FILE_MODE)
    try:
        end = os.lseek(fd, 0, os.SEEK_END)
        if end > 0 and os.pread(fd, 1, end - 1) != b"\n":
            data = b"\n" + data  # a torn last line (crash mid-write) stays on its own line
        faults.point("audit-before-write")
        written = os.write(fd, data)
        while written < len(data):
            written += os.write(fd, data[written:])
        os.fsync(fd)
        faults.point("audit-after-fsync")
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def read_audit(key: str) -> list[dict[str, Any]]:
    """Every complete audit line of a session (a torn last line is skipped)."""
    try:
        raw = audit_path(key).read_bytes()
    except FileNotFoundError:
        raise SessionNotFound(f"no smllm session {key!r}",
                              "run `smllm session list` to see the sessions") from None
    out: list[dict[str, Any]] = []
    for chunk in raw.split(b"\n"):
        if not chunk.strip():
            continue
        try:
            obj = json.loads(chunk)
        except ValueError:
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out


def read_binding(harness: str, host: str) -> str | None:
    try:
        folder = bindings_dir() / paths.check_id(harness, "harness")
        key = (folder / f"{paths.check_id(host, 'host session id')}.key").read_text().strip()
    except (OSError, ValueError):
        return None
    return key or None


def all_keys() -> list[str]:
    try:
        names = os.listdir(paths.audit_dir())
    except OSError:
        return []
    return sorted(n[: -len(".jsonl")] for n in names if n.endswith(".jsonl"))
