"""Every on-disk location smllm uses, in one place.

``SMLLM_HOME=DIR`` puts data, state and user config under ``DIR``. Otherwise the
locations are platformdirs' (appname ``smllm``). On Linux they are computed here
with the standard library, because hooks run on every tool call and importing
platformdirs would cost more than the rest of a hook; a test checks that both agree.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from smllm.errors import InvalidSessionId

APP = "smllm"
DIR_MODE = 0o700
FILE_MODE = 0o600

_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def _home_override() -> Path | None:
    home = os.environ.get("SMLLM_HOME")
    return Path(home).expanduser().absolute() if home else None


def _xdg(var: str, default: str) -> Path:
    value = os.environ.get(var, "").strip()
    base = Path(value) if value and os.path.isabs(value) else Path.home() / default
    return base / APP


def _platformdirs(kind: str) -> Path:
    import platformdirs  # noqa: PLC0415 - only off Linux, off the hot path

    func = getattr(platformdirs, f"user_{kind}_dir")
    return Path(func(APP, appauthor=False))


def data_dir() -> Path:
    """Where journals live (``~/.local/share/smllm`` on Linux)."""
    home = _home_override()
    if home is not None:
        return home
    if sys.platform.startswith("linux"):
        return _xdg("XDG_DATA_HOME", ".local/share")
    return _platformdirs("data")


def state_dir() -> Path:
    """Where smllm sessions and their audit live (``~/.local/state/smllm`` on Linux)."""
    home = _home_override()
    if home is not None:
        return home
    if sys.platform.startswith("linux"):
        return _xdg("XDG_STATE_HOME", ".local/state")
    return _platformdirs("state")


def config_dir() -> Path:
    """Where the user-level ``config.toml`` and policy live."""
    home = _home_override()
    if home is not None:
        return home
    if sys.platform.startswith("linux"):
        return _xdg("XDG_CONFIG_HOME", ".config")
    return _platformdirs("config")


def sessions_dir() -> Path:
    return data_dir() / "sessions"


def audit_dir() -> Path:
    return state_dir() / "audit"


def cache_dir() -> Path:
    """Compiled config caches (policy, machines); safe to delete at any time."""
    return state_dir() / "cache"


def logs_dir() -> Path:
    """Internal error reports of hooks and commands."""
    return state_dir() / "logs"


def check_id(value: object, what: str = "session id") -> str:
    """Return ``value`` if it is safe as one path component, else raise.

    >>> check_id("c7dfaecc-adf6-4348-87df-95576e15136e")
    'c7dfaecc-adf6-4348-87df-95576e15136e'
    >>> check_id("../../etc")
    Traceback (most recent call last):
    ...
    smllm.errors.InvalidSessionId: invalid session id '../../etc' (ids are 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit)
    """
    if isinstance(value, str) and _ID_RE.fullmatch(value) and ".." not in value:
        return value
    raise InvalidSessionId(
        f"invalid {what} {value!r}",
        "ids are 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit",
    )


def ensure_dir(path: Path) -> Path:
    """Create ``path`` (and parents under the store) with mode 0700."""
    try:
        path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    except FileExistsError:
        pass
    return path


def ensure_private_tree(path: Path, root: Path) -> Path:
    """Create ``path`` and every missing directory between ``root`` and it as 0700."""
    missing: list[Path] = []
    cur = path
    while not cur.exists():
        missing.append(cur)
        if cur == root or cur.parent == cur:
            break
        cur = cur.parent
    for p in reversed(missing):
        try:
            p.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue
        os.chmod(p, DIR_MODE)  # mkdir's mode is masked by the umask
    return path
