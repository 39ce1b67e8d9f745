"""Reading a large journal in a second process while this one writes the index.

A cold build spends about as long parsing records and computing their rows as SQLite
spends storing them, so a large read (:data:`PARALLEL_BYTES` or more) is split across
two processes: a forked child runs the very same reader over the journal with a
:class:`_Sink` in place of the database, and every statement the reader would run is
sent over a pipe (length-prefixed ``marshal``) for this process to run, in order,
inside its own transaction. The child's last message is the reader's end state (the
cursor, the summary, the subagent journals it found).

The statements are replayed under a savepoint: a child that dies, errs or sends
something unreadable rolls the savepoint back, and the caller reads the journal
in-process; an index is never left half written. The child is always reaped. No
sockets: a pipe works inside Claude Code's sandbox. Where ``fork`` is missing, threads
run (``smllm serve``) or no core is idle, the read stays in-process.
"""

from __future__ import annotations

import fcntl
import marshal
import os
import signal
import struct
import threading
from contextlib import suppress
from typing import TYPE_CHECKING, Any, Protocol

from smllm.base import faults

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable

#: a read of this many bytes or more goes to a worker (about 30 k records of a real log)
PARALLEL_BYTES = 16 * 1024 * 1024
SAVEPOINT = "smllm_index_worker"
FAULT = "index-worker"  # SMLLM_FAULT: the child SIGKILLs itself after its first message
SEND_ROWS = 1000  # rows a message holds: about 200 KB, a few such fit in the pipe
PIPE_BYTES = 1 << 20  # asked of the kernel: the child runs ahead without waiting on us
_HEADER = struct.Struct("<Q")
_EXECUTE, _EXECUTEMANY, _DONE = 1, 2, 3


class Reader(Protocol):
    """What the worker needs of the refresher's reader."""

    db: Any

    def read(self, fh: Any) -> bool: ...
    def end_state(self, ok: bool) -> tuple[Any, ...]: ...
    def take(self, state: tuple[Any, ...]) -> bool: ...


class WorkerFailed(Exception):
    """The child died, erred or sent something unreadable."""


def available() -> bool:
    """Can a read be split here (``fork``, no other thread that a fork would copy
    mid-work) and gain from it (a core to spare)?"""
    return hasattr(os, "fork") and threading.active_count() == 1 and spare_core()


def spare_core() -> bool:
    """Is some core idle, on average over the last minute (a load under the number of
    cores)? On a machine whose cores are all busy the two processes only share out one
    process's time (and the pipe costs some): the read is as quick in one."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return False
    return cores >= 2 and load < cores


class _Sink:
    """The child's database: each statement goes down the pipe."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.sent = 0

    def execute(self, sql: str, params: Iterable[Any] = ()) -> None:
        self.send((_EXECUTE, sql, list(params)))

    def executemany(self, sql: str, rows: Iterable[Iterable[Any]]) -> None:
        batch = list(rows)
        for i in range(0, len(batch), SEND_ROWS):
            self.send((_EXECUTEMANY, sql, batch[i:i + SEND_ROWS]))

    def send(self, message: tuple[Any, ...]) -> None:
        data = marshal.dumps(message)
        _write_all(self.fd, _HEADER.pack(len(data)) + data)
        self.sent += 1
        if self.sent == 1:
            faults.point(FAULT)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def read(db: sqlite3.Connection, reader: Reader, fh: Any) -> bool | None:
    """``reader.read(fh)`` split across a child and this process; None: the child failed
    (nothing of its work is left in ``db``: read in-process)."""
    db.execute(f"SAVEPOINT {SAVEPOINT}")
    rfd, wfd = os.pipe()
    _widen(wfd)
    try:
        pid = os.fork()
    except OSError:
        os.close(rfd)
        os.close(wfd)
        db.execute(f"RELEASE {SAVEPOINT}")
        return None
    if pid == 0:  # the child: never returns
        _child(rfd, wfd, reader, fh)
    try:
        os.close(wfd)  # the child's end: its exit is our end of file
        with os.fdopen(rfd, "rb", buffering=1 << 20) as pipe:
            state = _replay(db, pipe)
        if _reap(pid) != 0:
            raise WorkerFailed("the worker exited with an error")
    except WorkerFailed:
        _reap(pid)
        db.execute(f"ROLLBACK TO {SAVEPOINT}")
        db.execute(f"RELEASE {SAVEPOINT}")
        return None
    except BaseException:
        _kill(pid)
        raise
    db.execute(f"RELEASE {SAVEPOINT}")
    return reader.take(state)


def _widen(fd: int) -> None:
    """A larger pipe buffer where the kernel allows it (64 KB makes the two processes
    take turns for every few hundred rows)."""
    setsize = getattr(fcntl, "F_SETPIPE_SZ", None)
    if setsize is None:
        return
    with suppress(OSError):
        fcntl.fcntl(fd, setsize, PIPE_BYTES)


def _child(rfd: int, wfd: int, reader: Reader, fh: Any) -> None:
    status = 1
    try:
        os.close(rfd)
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # the parent answers Ctrl-C
        sink = _Sink(wfd)
        reader.db = sink
        ok = reader.read(fh)
        sink.send((_DONE, reader.end_state(ok)))
        status = 0
    finally:
        os._exit(status)  # no atexit, no finalizers of the parent's objects


def _replay(db: sqlite3.Connection, pipe: Any) -> tuple[Any, ...]:
    """Run the child's statements on ``db`` until its end state arrives."""
    execute, executemany = db.execute, db.executemany
    while True:
        header = pipe.read(_HEADER.size)
        if len(header) != _HEADER.size:
            raise WorkerFailed("the worker stopped before its end")
        (size,) = _HEADER.unpack(header)
        data = pipe.read(size)
        if len(data) != size:
            raise WorkerFailed("the worker stopped mid-message")
        try:
            message = marshal.loads(data)  # noqa: S302 - our own child, a private pipe
            tag = message[0]
        except (ValueError, EOFError, TypeError, IndexError) as exc:
            raise WorkerFailed(f"an unreadable message from the worker: {exc}") from None
        if tag == _EXECUTEMANY:
            executemany(message[1], message[2])
        elif tag == _EXECUTE:
            execute(message[1], message[2])
        elif tag == _DONE:
            return tuple(message[1])
        else:
            raise WorkerFailed(f"an unknown message from the worker: {tag!r}")


def _reap(pid: int) -> int:
    """Wait for the child; its exit status (a signal counts as a failure)."""
    while True:
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:
            return -1
        except InterruptedError:  # pragma: no cover - PEP 475 retries it
            continue
        return os.waitstatus_to_exitcode(status)


def _kill(pid: int) -> None:
    with suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    _reap(pid)
