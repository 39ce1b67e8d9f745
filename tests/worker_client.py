"""The worker's protocol spoken from Python (the native client's part), and a worker started
and stopped by PID: what the server's tests drive :mod:`smllm.worker.server` with."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from smllm import worker
from smllm.worker import server


class Answer:
    """What a call through the worker gave: the exit status (None: no ``DONE``), the
    hook's stdout and stderr, and the pid of the child that served it."""

    def __init__(self, code: int | None, out: bytes, err: bytes, pid: int) -> None:
        self.code, self.out, self.err, self.pid = code, out, err, pid


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


def _recv(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            break
        data += chunk
    return data


def greet(path: str, secret: bytes) -> tuple[socket.socket, bytes, int]:
    """Connect, ``HELLO``, check the ``ACK``: the connection, the worker's nonce and the
    serving child's pid."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(30)
    sock.connect(path)
    mine = os.urandom(worker.NONCE)
    sock.sendall(worker.HELLO + mine)
    ack = _recv(sock, worker.ACK_SIZE)
    assert ack.startswith(worker.ACK), ack
    theirs, pid = ack[4:4 + worker.NONCE], ack[4 + worker.NONCE:12 + worker.NONCE]
    assert ack[-worker.MAC_SIZE:] == worker.mac(secret, b"ack", mine, theirs, pid)
    return sock, theirs, int.from_bytes(pid, "little")


def call(path: str, secret: bytes, argv: Sequence[str], env: Mapping[str, str],
         stdin: bytes = b"", cwd: str | Path = ".", umask: int = 0o022,
         go_secret: bytes | None = None) -> Answer:
    """One hook call through the worker, as the native client makes it."""
    sock, theirs, pid = greet(path, secret)
    body = worker.encode_call(umask, [os.fsencode(a) for a in argv],
                              [os.fsencode(k) + b"=" + os.fsencode(v) for k, v in env.items()])
    head = worker.GO + len(body).to_bytes(4, "little") + \
        worker.mac(go_secret or secret, b"go", theirs, body)
    r0, w0 = os.pipe()
    r1, w1 = os.pipe()
    r2, w2 = os.pipe()
    here = os.open(cwd, os.O_RDONLY | os.O_DIRECTORY)
    with sock:
        socket.send_fds(sock, [head + body], [r0, w1, w2, here])
        for fd in (r0, w1, w2, here):
            os.close(fd)
        with contextlib.suppress(BrokenPipeError):  # a child that runs nothing closed it
            os.write(w0, stdin)
        os.close(w0)
        done = _recv(sock, len(worker.DONE) + 1)
    code = done[-1] if len(done) == len(worker.DONE) + 1 and done.startswith(worker.DONE) \
        else None
    return Answer(code, _read_all(r1), _read_all(r2), pid)


def key_of(folder: Path) -> bytes:
    return bytes.fromhex((folder / "journal.key").read_text().strip())


class Worker:
    """A worker of ``hook`` in the key folder ``folder``, started by a test and stopped by
    PID (the master's session, so its children too)."""

    def __init__(self, folder: Path, hook: str, *, idle: float = 120,
                 path: Sequence[str] | None = None) -> None:
        self.folder, self.hook = folder, hook
        Path(worker.stats_path(str(folder), hook)).unlink(missing_ok=True)  # a dead one's
        argv = [sys.executable, *server.boot_argv(str(folder), hook, path), repr(idle)]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, start_new_session=True)
        self.socket = worker.socket_path(str(folder), hook)
        deadline = time.monotonic() + 30
        while not self.stats() and self.proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert self.stats(), f"the worker did not start: {self.proc.stderr.read()!r}" \
            if self.proc.poll() is not None else "the worker did not start in 30 s"

    def stats(self) -> dict[str, float]:
        try:
            return dict(json.loads(Path(worker.stats_path(str(self.folder), self.hook))
                                   .read_text()))
        except (OSError, ValueError):
            return {}

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)
        if self.proc.stderr is not None:
            self.proc.stderr.close()


@contextlib.contextmanager
def running(folder: Path, hook: str, **kw: object) -> Iterator[Worker]:
    w = Worker(folder, hook, **kw)  # type: ignore[arg-type]
    try:
        yield w
    finally:
        w.stop()
