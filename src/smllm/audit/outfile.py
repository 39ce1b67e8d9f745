"""Writing a file the user named (``export --out``, ``ledger --html``).

* A new file, or an existing regular one, is written to a private temporary file beside
  it (mode 0600, a fresh random name) and renamed over it: readers see the old file or
  the whole new one, never a part.
* An existing file that is not a regular file (a FIFO, a character device such as a
  terminal, a pipe reached through ``/dev/fd/N``) is written into directly, streaming:
  it is never replaced. The standard streams named as files (``/dev/stdout``,
  ``/dev/stderr``, ``/dev/fd/N``, ``/proc/self/fd/N``) are written to the descriptor the
  process already holds, wherever the shell sent it (a regular file included).
* A symbolic link is followed only to such a non-regular file. A link to a regular
  file, or one that leads nowhere, is refused: renaming over it would replace the link,
  and writing through it would change a file the command line does not name. (smllm
  governs an agent that may plant a link where an export is about to land, e.g. to
  ``.smllm/policy.toml``.) Block devices (disks) are refused too.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from smllm.base.errors import ExportError

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NOCTTY = getattr(os, "O_NOCTTY", 0)
#: file names of the descriptors a process already holds (Linux, macOS, the BSDs)
_STREAMS = {"/dev/stdout": 1, "/dev/stderr": 2}
_FD_FOLDERS = ("/dev/fd/", "/proc/self/fd/")


class Target:
    """Where the bytes went: ``path`` as given (made absolute), and whether it was written
    into directly (``streamed``: a FIFO, a device, a standard stream) or replaced."""

    __slots__ = ("path", "streamed")

    def __init__(self, path: Path, streamed: bool) -> None:
        self.path = path
        self.streamed = streamed


def descriptor_of(path: Path) -> int | None:
    """The descriptor a standard-stream file name stands for (``/dev/stdout`` -> 1)."""
    text = os.path.normpath(str(path))
    if text in _STREAMS:
        return _STREAMS[text]
    for folder in _FD_FOLDERS:
        rest = text.removeprefix(folder)
        if rest != text and rest.isdigit():
            return int(rest)
    return None


def _refuse(path: Path, what: str, fix: str) -> ExportError:
    return ExportError(f"will not write {path}: {what}", fix)


def _open_direct(path: Path, *, follow: bool) -> int:
    """Open an existing non-regular file for writing; never a regular file (a link or a
    file swapped in since it was looked at is refused after the open)."""
    fd = os.open(path, os.O_WRONLY | _NOCTTY | (0 if follow else _NOFOLLOW))
    mode = os.fstat(fd).st_mode
    if stat.S_ISREG(mode) or stat.S_ISBLK(mode):
        os.close(fd)
        raise _refuse(path, "it changed into a regular file or a disk while being opened",
                      "try again, or name another file")
    return fd


def _check_link(path: Path) -> None:
    """A link may lead to a FIFO or a device; never to a regular file, a disk or nothing."""
    try:
        mode: int | None = os.stat(path).st_mode
    except OSError:
        mode = None
    if mode is not None and not (stat.S_ISREG(mode) or stat.S_ISBLK(mode)
                                 or stat.S_ISDIR(mode)):
        return
    dest = os.readlink(path)
    real = os.path.realpath(path)
    raise _refuse(path, f"it is a symbolic link (to {dest}), and smllm does not write "
                        "through a link into a file",
                  f"name the file itself, {real}, or remove the link")


@contextlib.contextmanager
def open_text(path: Path) -> Iterator[tuple[TextIO, Target]]:
    """A text handle on ``path`` (UTF-8, ``\\n`` line ends) and where it writes; a regular
    file is only replaced when the block ends without an exception. ``OSError`` is left
    to the caller to word; a refused target raises :class:`ExportError`."""
    path = Path(os.path.abspath(path))
    fd_number = descriptor_of(path)
    if fd_number is not None:
        with open(os.dup(fd_number), "w", encoding="utf-8", newline="\n") as fh:
            yield fh, Target(path, streamed=True)
        return
    try:
        mode: int | None = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and stat.S_ISLNK(mode):
        _check_link(path)
        fd = _open_direct(path, follow=True)
    elif mode is not None and stat.S_ISBLK(mode):
        raise _refuse(path, "it is a block device (a disk)", "name a file or a FIFO")
    elif mode is not None and not stat.S_ISREG(mode):
        fd = _open_direct(path, follow=False)
    else:
        with _replacing(path) as fh:
            yield fh, Target(path, streamed=False)
        return
    with open(fd, "w", encoding="utf-8", newline="\n") as fh:
        yield fh, Target(path, streamed=True)


@contextlib.contextmanager
def _replacing(path: Path) -> Iterator[TextIO]:
    """Write a private temporary file beside ``path``; rename it over ``path`` at the end."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with open(fd, "w", encoding="utf-8", newline="\n") as fh:
            yield fh
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
