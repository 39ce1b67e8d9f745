"""Every on-disk location smllm uses, in one place.

``SMLLM_HOME=DIR`` puts data, state and user config under ``DIR``. Otherwise data
(journals) and config are platformdirs' folders (appname ``smllm``), and state (smllm
sessions and their audit, caches) is where seed 001 puts it: ``$XDG_STATE_HOME/smllm``
(``~/.local/state/smllm``) on Linux **and macOS**, ``%APPDATA%\\smllm`` on Windows. On
Linux the platformdirs folders are computed here with the standard library, because
hooks run on every tool call and importing platformdirs (or even ``pathlib``) would cost
more than the rest of a hook; a test checks that both agree. The ``*_root()`` functions
return ``str`` for the hot path; the ``*_dir()`` functions return ``pathlib.Path`` for
everything else.
"""

from __future__ import annotations

import sys

from smllm.base import osfast as os
from smllm.base.errors_hot import InvalidSessionId

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

APP = "smllm"
DIR_MODE = 0o700
FILE_MODE = 0o600

_ID_FIRST = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_ID_CHARS = _ID_FIRST | frozenset("._-")


def _home_override() -> str | None:
    home = os.environ.get("SMLLM_HOME")
    return os.path.abspath(os.path.expanduser(home)) if home else None


def _xdg(var: str, default: str) -> str:
    value = os.environ.get(var, "").strip()
    base = value if value and os.path.isabs(value) else os.path.join(os.path.expanduser("~"),
                                                                     default)
    return os.path.join(base, APP)


def _platformdirs(kind: str) -> str:
    import platformdirs  # noqa: PLC0415 - only off Linux

    return str(getattr(platformdirs, f"user_{kind}_dir")(APP, appauthor=False))


def _user_root(xdg_var: str, default: str, kind: str) -> str:
    """``SMLLM_HOME``, else the XDG folder on Linux, else platformdirs' user folder."""
    home = _home_override()
    if home is not None:
        return home
    if sys.platform.startswith("linux"):
        return _xdg(xdg_var, default)
    return _platformdirs(kind)


def data_root() -> str:
    """Where journals live (``~/.local/share/smllm`` on Linux)."""
    return _user_root("XDG_DATA_HOME", ".local/share", "data")


def state_root() -> str:
    """Where smllm sessions and their audit live: ``$XDG_STATE_HOME/smllm``, by default
    ``~/.local/state/smllm``, on Linux and macOS; ``%APPDATA%\\smllm`` on Windows."""
    home = _home_override()
    if home is not None:
        return home
    if sys.platform == "win32":
        appdata = os.environ.get("APPDATA", "").strip()
        base = appdata if appdata and os.path.isabs(appdata) else os.path.join(
            os.path.expanduser("~"), "AppData", "Roaming")
        return os.path.join(base, APP)
    return _xdg("XDG_STATE_HOME", ".local/state")


def key_root() -> str:
    """smllm's journal key and the register of the logs it keys (:mod:`smllm.journal.keyed`):
    a folder of the state folder that the agent's sandbox can neither read nor write."""
    return os.path.join(state_root(), "key")


def config_root() -> str:
    """Where the user-level ``config.toml`` and ``policy.toml`` live."""
    return _user_root("XDG_CONFIG_HOME", ".config", "config")


def user_config_file() -> str:
    """The user-level ``config.toml`` (machines, the team store's URL)."""
    return os.path.join(config_root(), "config.toml")


def claude_root(env: Mapping[str, str] | None = None) -> str:
    """Claude Code's user folder (settings, plugins): ``$CLAUDE_CONFIG_DIR``, else
    ``~/.claude`` (``env`` defaults to this process's environment)."""
    value = ((os.environ if env is None else env).get("CLAUDE_CONFIG_DIR") or "").strip()
    return os.path.abspath(os.path.expanduser(value)) if value else os.path.join(
        os.path.expanduser("~"), ".claude")


def claude_json(env: Mapping[str, str] | None = None) -> str:
    """Claude Code's own state file (MCP servers, per-project approvals): inside
    ``$CLAUDE_CONFIG_DIR`` when that is set, else ``~/.claude.json``."""
    value = ((os.environ if env is None else env).get("CLAUDE_CONFIG_DIR") or "").strip()
    return os.path.join(claude_root(env), ".claude.json") if value else os.path.join(
        os.path.expanduser("~"), ".claude.json")


def declared_project(env: Mapping[str, str] | None = None) -> str | None:
    """The project folder the host declares for its hooks (``$CLAUDE_PROJECT_DIR``, when
    absolute), else None: the one place smllm reads it."""
    value = (os.environ if env is None else env).get("CLAUDE_PROJECT_DIR")
    return os.path.normpath(value) if value and os.path.isabs(value) else None


def project_root(cwd: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """The project a call belongs to, the one answer for the gate, its self-protection, the
    policy and ``smllm policy explain|test``: ``$CLAUDE_PROJECT_DIR`` (the folder the host
    runs in, when absolute), else the nearest folder at or above ``cwd`` with ``.smllm/``
    or ``.git``, else ``cwd`` itself."""
    found = find_project(cwd, env)
    return found if found is not None else os.path.abspath(cwd or os.getcwd())


def find_project(cwd: str | None = None, env: Mapping[str, str] | None = None) -> str | None:
    """:func:`project_root`, or None where ``cwd`` is in no project (no ``.smllm/`` or
    ``.git`` at or above it, and no declared folder)."""
    declared = declared_project(env)
    if declared is not None:
        return declared
    folder = os.path.abspath(cwd or os.getcwd())
    while True:
        if os.path.isdir(os.path.join(folder, ".smllm")) or os.path.exists(
            os.path.join(folder, ".git")
        ):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _path(value: str) -> Path:
    from pathlib import Path  # noqa: PLC0415 - for commands; hooks use the str API

    return Path(value)


def data_dir() -> Path:
    return _path(data_root())


def state_dir() -> Path:
    return _path(state_root())


def config_dir() -> Path:
    return _path(config_root())


def sessions_dir() -> Path:
    return _path(os.path.join(data_root(), "sessions"))


def audit_dir() -> Path:
    return _path(os.path.join(state_root(), "audit"))


def cache_root() -> str:
    """Compiled config caches (policy, machines); safe to delete at any time."""
    return os.path.join(state_root(), "cache")


def cache_dir() -> Path:
    return _path(cache_root())


def logs_root() -> str:
    """Internal error reports of hooks and commands."""
    return os.path.join(state_root(), "logs")


def locks_root() -> str:
    """The lock files of smllm's writers (the journals'): a folder of the state folder
    that the agent's sandbox can neither read nor write, so no sandboxed process can open
    a lock file, let alone hold its lock and starve the hooks."""
    return os.path.join(state_root(), "locks")


def lock_path(name: str) -> str:
    """A lock file of :func:`locks_root` (the folder created, 0700, when missing)."""
    folder = locks_root()
    if not os.path.isdir(folder):
        ensure_private_tree(folder, state_root())
    return os.path.join(folder, name)


def logs_dir() -> Path:
    return _path(logs_root())


def is_safe_id(value: object) -> bool:
    return (
        isinstance(value, str)
        and 0 < len(value) <= 128
        and value[0] in _ID_FIRST
        and all(ch in _ID_CHARS for ch in value)
        and ".." not in value
    )


def check_id(value: object, what: str = "session id") -> str:
    """Return ``value`` if it is safe as one path component, else raise.

    >>> check_id("c7dfaecc-adf6-4348-87df-95576e15136e")
    'c7dfaecc-adf6-4348-87df-95576e15136e'
    >>> check_id("../../etc")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    smllm.base.errors.InvalidSessionId: invalid session id '../../etc' (ids are 1-128 letters, ...)
    """
    if is_safe_id(value):
        return value  # type: ignore[return-value]
    raise InvalidSessionId(
        f"invalid {what} {value!r}",
        "ids are 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit",
    )


def ensure_private_tree(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> str:
    """Create ``path`` and its missing parents; ``root`` and everything below it is 0700.

    Missing folders above ``root`` (``~/.local/state`` on a new machine) are created with
    the usual modes: they are not smllm's.
    """
    target = os.fspath(path)
    stop = os.path.abspath(os.fspath(root))
    missing: list[str] = []
    cur = os.path.abspath(target)
    while not os.path.isdir(cur):
        missing.append(cur)
        parent = os.path.dirname(cur)
        if parent == cur:
            break
        cur = parent
    inside = stop + os.sep
    for p in reversed(missing):
        ours = p == stop or p.startswith(inside)
        try:
            os.mkdir(p, DIR_MODE if ours else 0o777)
        except FileExistsError:
            continue
        if ours:
            os.chmod(p, DIR_MODE)  # mkdir's mode is masked by the umask
    return target


def write_private(path: str | os.PathLike[str], data: bytes, *, fault: str | None = None) -> None:
    """Replace ``path`` atomically with ``data``, mode 0600 from the first byte.

    Readers see the old file or the new one, never a part. ``fault`` names a crash-test
    point (:mod:`smllm.base.faults`) between the write and the replace. The temporary file
    is always a new one (``O_EXCL``): whatever sits at its name (a link planted there, or
    a file left by a crash, with its own mode) is removed first, never written through.
    """
    target = os.fspath(path)
    tmp = os.path.join(os.path.dirname(target), f".{os.path.basename(target)}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    try:
        fd = os.open(tmp, flags, FILE_MODE)
    except FileExistsError:
        os.unlink(tmp)
        fd = os.open(tmp, flags, FILE_MODE)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        if fault is not None and "SMLLM_FAULT" in os.environ:  # a crash test: load it only then
            from smllm.base import faults  # noqa: PLC0415 - crash tests only (hot path)

            faults.point(fault)
        os.replace(tmp, target)
    except BaseException:
        import contextlib  # noqa: PLC0415 - failure path only

        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


# ------------------------------------------------------------------ store safety
# The agent smllm governs may plant links or loosen folders in the store before a hook
# runs. Everything below refuses to follow a link, keeps every derived path inside its
# root, and repairs (ours) or refuses (someone else's) a folder others could use.

REPAIR_LOG = "store-repairs.log"
# stat.S_IF* (the stat module is not loaded at startup: a hook saves importing it)
_S_IFMT, _S_IFREG, _S_IFDIR, _S_IFLNK = 0o170000, 0o100000, 0o040000, 0o120000


class UnsafeStore(OSError):
    """A store path is a link, not a regular file or folder, or not ours."""

    def __init__(self, what: str, fix: str) -> None:
        super().__init__(what)
        self.what = what
        self.fix = fix


def open_regular(path: str, flags: int, mode: int = FILE_MODE) -> int:
    """``os.open`` that never follows a link, never waits, and accepts only a regular file.

    ``O_NONBLOCK`` keeps a FIFO planted at ``path`` from blocking the open; it changes
    nothing for a regular file.
    """
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    extra = nofollow | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags | extra, mode)
    except OSError as exc:
        import errno  # noqa: PLC0415 - builtin

        if nofollow and exc.errno == errno.ELOOP and os.path.islink(path):
            raise UnsafeStore(f"{path} is a symbolic link",
                              "smllm never follows links in its store; remove the link") from None
        raise
    st = os.fstat(fd)
    if st.st_mode & _S_IFMT != _S_IFREG:
        os.close(fd)
        raise UnsafeStore(f"{path} is not a regular file",
                          "smllm only reads and writes regular files in its store; remove it")
    return fd


def _repaired(path: str, old_mode: int) -> None:
    """Note a repaired folder for ``smllm doctor`` (best effort)."""
    try:
        logs = ensure_private_tree(logs_root(), state_root())
        fd = os.open(os.path.join(logs, REPAIR_LOG),
                     os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0),
                     FILE_MODE)
        try:
            os.write(fd, f"{old_mode & 0o777:04o} {path}\n".encode("utf-8",
                                                                        "backslashreplace"))
        finally:
            os.close(fd)
    except OSError:
        pass


def check_private_dir(path: str, *, link_ok: bool = False) -> None:
    """``path`` must be our folder, 0700: repair its mode if it is ours, else refuse."""
    st = os.stat(path) if link_ok else os.lstat(path)
    if st.st_mode & _S_IFMT != _S_IFDIR:
        what = "a symbolic link" if st.st_mode & _S_IFMT == _S_IFLNK else "not a folder"
        raise UnsafeStore(f"{path} is {what}",
                          "smllm keeps its store in plain folders of its own; remove it")
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        raise UnsafeStore(f"{path} belongs to user {st.st_uid}, not to this user",
                          "give it back (chown) or point SMLLM_HOME elsewhere")
    if st.st_mode & 0o077:
        os.chmod(path, DIR_MODE)
        _repaired(path, st.st_mode)


def check_store_path(root: str, *parts: str, checked: int = 0) -> str:
    """``root/part/...``, checking that every folder on the way is private and no link.

    ``root`` itself may be a link (a user may keep data on another disk); nothing below it
    may. Missing folders are left to :func:`ensure_private_tree`. ``checked``: how many
    leading folders (``root`` counts as one) were already checked by the caller.
    """
    path = root
    try:
        if not checked:
            check_private_dir(path, link_ok=True)
        for i, part in enumerate(parts, 1):
            if i < checked:
                path = os.path.join(path, part)
                continue
            if not part or part in (".", "..") or "/" in part or os.sep in part:
                raise UnsafeStore(f"{part!r} is not a folder name",
                                  "smllm derives store paths from ids and dates only")
            path = os.path.join(path, part)
            check_private_dir(path)
    except FileNotFoundError:
        pass
    return os.path.join(root, *parts)
