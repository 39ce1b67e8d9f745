"""Where smllm sessions live: the audit (the record) and the state file (its cache).

``<state dir>/audit/<KEY>.jsonl`` gets one line per call, written with one
``os.write`` and fsynced before the reply is printed. ``<state dir>/sessions/<KEY>.json``
holds the session's state, rebuilt by replaying the audit whenever it does not
match the audit's size (a crash between the two writes). Every change happens under
an exclusive lock on ``sessions/<KEY>.lock``, so concurrent fires are serialized.

Hot path: plain ``os.path`` strings, no pathlib.
"""

from __future__ import annotations

from smllm.base import faults, jsonfast, paths
from smllm.base import osfast as os
from smllm.base.errors import SessionNotFound
from smllm.base.lockfile import locked
from smllm.machine import binding_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from smllm.base.shapes import AuditLine


def root() -> str:
    """The state folder (``~/.local/state/smllm`` on Linux, or ``$SMLLM_HOME``)."""
    fast = getattr(paths, "state_root", None)
    return str(fast()) if fast is not None else os.fspath(paths.state_dir())


def sessions_dir() -> str:
    return os.path.join(root(), "sessions")


def bindings_dir() -> str:
    return os.path.join(root(), "bindings")


def audit_dir() -> str:
    return os.path.join(root(), "audit")


def cache_dir() -> str:
    return os.path.join(root(), "cache")


def _id(key: str) -> str:
    return paths.check_id(key, "smllm session")


def audit_path(key: str) -> str:
    return os.path.join(audit_dir(), f"{_id(key)}.jsonl")


def state_path(key: str) -> str:
    return os.path.join(sessions_dir(), f"{_id(key)}.json")


def ensure_root() -> None:
    """Create the state folder (0700) and, if missing, its parents (``~/.local/state``)."""
    top = root()
    if not os.path.isdir(top):
        os.makedirs(os.path.dirname(top), exist_ok=True)
        paths.ensure_private_tree(top, top)


def ensure(folder: str) -> str:
    """Create a folder under the state folder, 0700 all the way down."""
    if not os.path.isdir(folder):
        ensure_root()
        paths.ensure_private_tree(folder, root())
    return folder


def dumps(obj: Any) -> str:
    """The one serialization of audit lines and ``--json`` replies (compact, UTF-8)."""
    return jsonfast.dumps(obj)


def session_lock(key: str) -> locked:
    """The lock of one smllm session's state and audit (in smllm's locks folder, which the
    agent's sandbox cannot open: :func:`smllm.base.paths.locks_root`)."""
    return locked(paths.lock_path(f"session-{_id(key)}.lock"))


def binding_files(harness: str, host: str) -> tuple[locked, str]:
    """The lock guarding a host session's binding (in smllm's locks folder), and the file
    naming its smllm session."""
    folder = ensure(os.path.join(bindings_dir(), paths.check_id(harness, "harness")))
    host = paths.check_id(host, "host session id")
    return (locked(paths.lock_path(f"bind-{harness}-{host}.lock")),
            os.path.join(folder, f"{host}.key"))


def exists(key: str) -> bool:
    return os.path.exists(audit_path(key))


def read_state(key: str) -> dict[str, Any] | None:
    try:
        with open(state_path(key), "rb") as f:
            data: dict[str, Any] = jsonfast.loads(f.read())
    except (OSError, ValueError):
        return None
    return data


def audit_size(key: str) -> int:
    try:
        return os.stat(audit_path(key)).st_size
    except OSError:
        return 0


def write_state(key: str, state: dict[str, Any]) -> None:
    path = os.path.join(ensure(sessions_dir()), f"{_id(key)}.json")
    paths.write_private(path, jsonfast.dumps(state).encode("utf-8"))


def append_audit(key: str, line: AuditLine) -> int:
    """Append one audit line and fsync it; return the audit's new size in bytes."""
    path = os.path.join(ensure(audit_dir()), f"{_id(key)}.jsonl")
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


def read_audit(key: str) -> list[AuditLine]:
    """Every complete audit line of a session (a torn last line is skipped)."""
    try:
        with open(audit_path(key), "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise SessionNotFound(f"no smllm session {key!r}",
                              "run `smllm session list` to see the sessions") from None
    out: list[AuditLine] = []
    for chunk in raw.split(b"\n"):
        if not chunk.strip():
            continue
        try:
            obj = jsonfast.loads(chunk)
        except ValueError:
            continue
        is_line = isinstance(obj, dict)
        if is_line:
            out.append(obj)  # obj: what the JSON decoder gave
    return out


def read_binding(harness: str, host: str) -> str | None:
    try:
        with open(binding_file(harness, host), encoding="utf-8") as f:
            key = f.read().strip()
    except (OSError, ValueError):
        return None
    return key or None


def all_keys() -> list[str]:
    try:
        names = os.listdir(audit_dir())
    except OSError:
        return []
    return sorted(n[: -len(".jsonl")] for n in names if n.endswith(".jsonl"))
