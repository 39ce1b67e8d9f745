"""An exclusive inter-process lock on a file, with the standard library only.

POSIX uses ``flock``; Windows locks the first byte with ``msvcrt.locking``. The
``filelock`` package would do the same but costs an import on the hot path.
"""

from __future__ import annotations

import sys

from smllm.base import osfast as os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import TracebackType


def _lock(fd: int) -> None:
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import msvcrt  # noqa: PLC0415 - Windows only

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
        return
    import fcntl  # noqa: PLC0415 - POSIX only

    fcntl.flock(fd, fcntl.LOCK_EX)


def _unlock(fd: int) -> None:
    if sys.platform == "win32":  # pragma: no cover
        import msvcrt  # noqa: PLC0415 - Windows only

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        return
    import fcntl  # noqa: PLC0415 - POSIX only

    fcntl.flock(fd, fcntl.LOCK_UN)


class locked_fd:
    """Hold an exclusive lock on an open file descriptor."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __enter__(self) -> int:
        _lock(self.fd)
        return self.fd

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        _unlock(self.fd)


class locked:
    """Hold an exclusive lock on ``path`` (created 0600 if missing)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self.fd = -1

    def __enter__(self) -> None:
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            _lock(self.fd)
        except BaseException:
            os.close(self.fd)
            raise

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            _unlock(self.fd)
        finally:
            os.close(self.fd)
