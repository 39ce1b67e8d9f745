"""``os`` for the hot path, over the ``posix`` builtin, without importing ``os``.

``import os`` costs 6.4 M instructions, a quarter of ``python -I -S -c pass`` (which does
not import it): ``os`` builds ``os.environ`` on ``collections.abc.MutableMapping``, and
``_collections_abc`` creates 26 abstract classes. ``posix``, which ``os`` wraps, is built
into the interpreter and already loaded. The modules a hook can load write
``from smllm.base import osfast as os`` and keep calling ``os.open``, ``os.path.join``,
``os.environ.get``: the same functions with the same results, for ``str`` paths.

* The system calls are ``posix``'s own functions (``os`` re-exports the same objects).
* :data:`environ` reads and writes ``posix.environ``, the very dict ``os.environ`` wraps
  once something imports ``os``, and ``putenv``/``unsetenv`` as ``os.environ`` does: a
  variable set here is seen by ``os.environ`` and by child processes, and the reverse.
* :class:`path` has ``posixpath``'s functions for ``str`` (``bytes`` paths are not
  supported here); ``tests/test_osfast.py`` compares each with ``posixpath`` over a corpus
  of paths and a tree of links.

For mypy the names are the ``os`` module's own (``TYPE_CHECKING``), so a caller is checked
against the standard signatures; this module's code is checked on its own.
"""

from __future__ import annotations

import posix
import sys
from posix import (
    O_APPEND,
    O_CLOEXEC,
    O_CREAT,
    O_DIRECTORY,
    O_EXCL,
    O_NOFOLLOW,
    O_RDONLY,
    O_RDWR,
    O_TRUNC,
    O_WRONLY,
    POSIX_SPAWN_DUP2,
    POSIX_SPAWN_OPEN,
    X_OK,
    _exit,
    access,
    chmod,
    close,
    fspath,
    fstat,
    fsync,
    ftruncate,
    getcwd,
    geteuid,
    getpid,
    getuid,
    kill,
    killpg,
    link,
    listdir,
    lseek,
    lstat,
    mkdir,
    open,
    pipe,
    posix_spawn,
    pread,
    pwrite,
    read,
    readlink,
    replace,
    scandir,
    stat,
    symlink,
    uname,
    unlink,
    urandom,
    write,
)

# every other name of posix too (O_NONBLOCK, O_PATH, WNOHANG, ...), as os has them:
# ``getattr(os, "O_NONBLOCK", 0)`` must not quietly answer 0 here. One dict update (a
# filtering loop over the 300 names costs 0.75 M instructions); this module's own
# identity is put back, and what follows overrides the rest (environ)
_OWN: dict[str, object] = {
    k: globals()[k] for k in ("__name__", "__doc__", "__package__", "__loader__", "__spec__",
                              "__file__", "__cached__") if k in globals()}
globals().update(posix.__dict__)
globals().update(_OWN)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from os import PathLike as PathLike  # noqa: PLC0414 - re-exported: annotations name os.PathLike
    from os import stat_result as stat_result  # noqa: PLC0414 - and os.stat_result
    from typing import IO, Any

    StrPath = str | PathLike[str]

__all__ = [
    "O_APPEND", "O_CLOEXEC", "O_CREAT", "O_DIRECTORY", "O_EXCL", "O_NOFOLLOW", "O_RDONLY",
    "O_RDWR", "O_TRUNC", "O_WRONLY", "POSIX_SPAWN_DUP2", "POSIX_SPAWN_OPEN", "SEEK_END",
    "SEEK_SET", "X_OK", "_exit", "access", "chmod", "close", "curdir", "devnull", "environ",
    "fdopen", "fsdecode", "fsencode", "fspath", "fstat", "fsync", "ftruncate", "getcwd",
    "geteuid", "getpid", "getuid", "kill", "killpg", "link", "listdir", "lseek", "lstat",
    "makedirs", "mkdir", "name", "open", "pardir", "path", "pathsep", "pipe", "posix_spawn",
    "pread", "pwrite", "read", "readlink", "replace", "scandir", "sep", "stat", "symlink",
    "uname", "unlink", "urandom", "write",
]

name = "posix"
sep = "/"
pathsep = ":"
curdir = "."
pardir = ".."
devnull = "/dev/null"
SEEK_SET = 0
SEEK_END = 2

_S_IFMT = 0o170000
_S_IFDIR = 0o040000
_S_IFREG = 0o100000
_S_IFLNK = 0o120000
_ENCODING = sys.getfilesystemencoding()
_ERRORS = sys.getfilesystemencodeerrors()


def fsencode(filename: StrPath | bytes) -> bytes:
    """``os.fsencode``: a name as the file system takes it."""
    value = fspath(filename)
    return value.encode(_ENCODING, _ERRORS) if isinstance(value, str) else value


def fsdecode(filename: StrPath | bytes) -> str:
    """``os.fsdecode``: a name as ``str``, undecodable bytes kept as surrogates."""
    value = fspath(filename)
    return value.decode(_ENCODING, _ERRORS) if isinstance(value, bytes) else value


class _Environ:
    """``os.environ`` over ``posix.environ`` (bytes to bytes), the same dict ``os.environ``
    keeps once ``os`` is imported; a write also reaches the C environment, as there."""

    __slots__ = ()
    _data = posix.environ  # the names and values as the OS gave them

    def __getitem__(self, key: str) -> str:
        return self._data[key.encode(_ENCODING, _ERRORS)].decode(_ENCODING, _ERRORS)

    def get(self, key: str, default: str | None = None) -> str | None:
        value = self._data.get(key.encode(_ENCODING, _ERRORS))
        return default if value is None else value.decode(_ENCODING, _ERRORS)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key.encode(_ENCODING, _ERRORS) in self._data

    def __iter__(self) -> Iterator[str]:
        return iter([k.decode(_ENCODING, _ERRORS) for k in self._data])

    def __len__(self) -> int:
        return len(self._data)

    def keys(self) -> list[str]:
        return list(self)

    def values(self) -> list[str]:  # posix_spawn reads keys() and values()
        return [v.decode(_ENCODING, _ERRORS) for v in self._data.values()]

    def items(self) -> list[tuple[str, str]]:
        return [(k.decode(_ENCODING, _ERRORS), v.decode(_ENCODING, _ERRORS))
                for k, v in self._data.items()]

    def copy(self) -> dict[str, str]:
        return dict(self.items())

    def __setitem__(self, key: str, value: str) -> None:
        k, v = key.encode(_ENCODING, _ERRORS), value.encode(_ENCODING, _ERRORS)
        posix.putenv(k, v)
        self._data[k] = v

    def __delitem__(self, key: str) -> None:
        k = key.encode(_ENCODING, _ERRORS)
        posix.unsetenv(k)
        del self._data[k]

    def pop(self, key: str, default: str | None = None) -> str | None:
        value = self.get(key)
        if value is None:
            return default
        del self[key]
        return value


if TYPE_CHECKING:
    from os import environ
else:
    environ = _Environ()


def fdopen(fd: int, mode: str = "r", buffering: int = -1) -> IO[Any]:
    """``os.fdopen``: a file object over an open descriptor."""
    import io  # noqa: PLC0415 - loaded by the interpreter at start-up; only here

    return io.open(fd, mode, buffering)  # noqa: UP020 - open here is posix.open


def makedirs(name: StrPath, mode: int = 0o777, exist_ok: bool = False) -> None:
    """``os.makedirs``: a folder and its missing parents."""
    target = fspath(name)
    head, tail = path.split(target)
    if not tail:
        head, tail = path.split(head)
    if head and tail and not path.exists(head):
        try:  # noqa: SIM105 - contextlib is not loaded on the hot path
            makedirs(head, exist_ok=exist_ok)
        except FileExistsError:
            pass  # made meanwhile by another process
        if tail == curdir:
            return
    try:
        mkdir(target, mode)
    except OSError:
        if not exist_ok or not path.isdir(target):
            raise


def _mode(p: StrPath, follow: bool) -> int | None:
    try:
        return (stat(p) if follow else lstat(p)).st_mode
    except (OSError, ValueError):
        return None


def _is(p: StrPath, kind: int, follow: bool) -> bool:
    """Is ``p`` (its target when ``follow``) of file type ``kind``? False where it is not
    there or cannot be asked (``os.path.isfile`` and the rest)."""
    mode = _mode(p, follow)
    return mode is not None and mode & _S_IFMT == kind


class _Path:
    """``os.path`` (``posixpath``) for ``str`` paths."""

    __slots__ = ()

    @staticmethod
    def isabs(s: StrPath) -> bool:
        return fspath(s).startswith(sep)

    @staticmethod
    def join(a: StrPath, *p: StrPath) -> str:
        out = fspath(a)
        for part in p:
            b = fspath(part)
            if b.startswith(sep):
                out = b
            elif not out or out.endswith(sep):
                out += b
            else:
                out += sep + b
        return out

    @staticmethod
    def split(p: StrPath) -> tuple[str, str]:
        s = fspath(p)
        i = s.rfind(sep) + 1
        head, tail = s[:i], s[i:]
        if head and head != sep * len(head):
            head = head.rstrip(sep)
        return head, tail

    @staticmethod
    def dirname(p: StrPath) -> str:
        return path.split(p)[0]

    @staticmethod
    def basename(p: StrPath) -> str:
        s = fspath(p)
        return s[s.rfind(sep) + 1:]

    @staticmethod
    def normpath(p: StrPath) -> str:
        return _normpath(fspath(p))

    @staticmethod
    def abspath(p: StrPath) -> str:
        s = fspath(p)
        if not s.startswith(sep):
            s = path.join(getcwd(), s)
        return _normpath(s)

    @staticmethod
    def realpath(p: StrPath) -> str:
        resolved, _ = _joinrealpath("", fspath(p), {})
        return path.abspath(resolved)

    @staticmethod
    def relpath(p: StrPath, start: StrPath | None = None) -> str:
        if not p:
            raise ValueError("no path specified")
        start_list = [x for x in path.abspath(curdir if start is None else start).split(sep) if x]
        path_list = [x for x in path.abspath(p).split(sep) if x]
        i = 0
        for a, b in zip(start_list, path_list, strict=False):
            if a != b:
                break
            i += 1
        rel_list = [pardir] * (len(start_list) - i) + path_list[i:]
        return path.join(*rel_list) if rel_list else curdir

    @staticmethod
    def expanduser(p: StrPath) -> str:
        s = fspath(p)
        if not s.startswith("~"):
            return s
        i = s.find(sep, 1)
        if i < 0:
            i = len(s)
        if i == 1 and "HOME" in environ:
            userhome = environ["HOME"]
        else:
            try:
                import pwd  # noqa: PLC0415 - only without HOME or for ~user
            except ImportError:
                return s
            try:
                userhome = (pwd.getpwuid(getuid()) if i == 1 else pwd.getpwnam(s[1:i])).pw_dir
            except KeyError:
                return s
        return (userhome.rstrip(sep) + s[i:]) or sep

    @staticmethod
    def exists(p: StrPath) -> bool:
        return _mode(p, True) is not None

    @staticmethod
    def lexists(p: StrPath) -> bool:
        return _mode(p, False) is not None

    @staticmethod
    def isfile(p: StrPath) -> bool:
        return _is(p, _S_IFREG, True)

    @staticmethod
    def isdir(p: StrPath) -> bool:
        return _is(p, _S_IFDIR, True)

    @staticmethod
    def islink(p: StrPath) -> bool:
        return _is(p, _S_IFLNK, False)

    @staticmethod
    def getsize(p: StrPath) -> int:
        return stat(p).st_size


if TYPE_CHECKING:  # callers see the standard signatures
    import posixpath as path
else:
    path = _Path


try:
    from posix import _path_normpath  # type: ignore[attr-defined]  # where this CPython has it
except ImportError:  # pragma: no cover - Python 3.10 (tests/test_osfast.py covers the loop)
    _path_normpath = None


def _normpath(s: str) -> str:
    if _path_normpath is not None:
        return _path_normpath(s) or curdir
    if not s:
        return curdir
    slashes = 0
    if s.startswith(sep):
        slashes = 2 if s.startswith("//") and not s.startswith("///") else 1
    comps: list[str] = []
    for comp in s.split(sep):
        if comp in ("", curdir):
            continue
        if comp != pardir or (not slashes and not comps) or (comps and comps[-1] == pardir):
            comps.append(comp)
        elif comps:
            comps.pop()
    return (sep * slashes + sep.join(comps)) or curdir


def _joinrealpath(done: str, rest: str, seen: dict[str, str | None]) -> tuple[str, bool]:
    """``posixpath._joinrealpath`` (not strict): ``done`` joined with ``rest``, each link
    in ``rest`` resolved; a loop leaves the rest unresolved (``False``)."""
    if rest.startswith(sep):
        rest, done = rest[1:], sep
    while rest:
        part, _, rest = rest.partition(sep)
        if not part or part == curdir:
            continue
        if part == pardir:
            if done:
                done, last = path.split(done)
                if last == pardir:
                    done = path.join(done, pardir, pardir)
            else:
                done = pardir
            continue
        newpath = path.join(done, part)
        try:
            mode = lstat(newpath).st_mode
        except OSError:
            mode = 0
        if mode & _S_IFMT != _S_IFLNK:
            done = newpath
            continue
        if newpath in seen:
            cached = seen[newpath]
            if cached is not None:
                done = cached
                continue
            return path.join(newpath, rest), False
        seen[newpath] = None
        done, ok = _joinrealpath(done, readlink(newpath), seen)
        if not ok:
            return path.join(done, rest), False
        seen[newpath] = done
    return done, True

