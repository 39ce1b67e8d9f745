"""An exclusive inter-process lock on a file, with the standard library only.

POSIX uses ``flock``; Windows locks the first byte with ``msvcrt.locking``. The
``filelock`` package would do the same but costs an import on the hot path.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def locked_fd(fd: int) -> Iterator[int]:
    """Hold an exclusive lock on an open file descriptor."""
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import msvcrt  # noqa: PLC0415

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
        try:
            yield fd
        finally:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        return
    import fcntl  # noqa: PLC0415

    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield fd
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created 0600 if missing)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        with locked_fd(fd):
            yield
    finally:
        os.close(fd)
