"""The resident worker: a per-user process that keeps smllm imported and runs each hook in
a fresh child, so a hook costs an interpreter start and its own work, not smllm's imports.

A hook process (the client, :func:`relay`) hands its call to the worker
(:mod:`smllm.worker.server`) over a Unix socket in smllm's key folder; the worker forks a
child per call, which takes the hook's own stdin, stdout, stderr and working folder (passed
as file descriptors), its argv, environment and umask, and runs exactly what the hook would
run in-process (:func:`smllm.hooks.main`): the same journal writes, the same output, on the
hook's own stdout. Nothing is shared between calls; the journal stays the one record.

The conversation, and what each failure means (:func:`relay`):

1. connect (non-blocking). No socket, a refused connection (a dead worker) or a full
   backlog: the call never reached a worker, and the hook decides it itself, in-process
   (and starts a worker when none listens: :func:`start`).
2. ``HELLO`` + the client's nonce; the worker's child answers ``ACK`` + its nonce, its pid
   and an HMAC (:func:`smllm.base.userkey.hmac`) of both nonces and the pid under smllm's
   per-user key. No answer within :data:`ACK_WAIT` (a hung or stopped worker) or the
   connection closed: nothing was handed over, the hook decides in-process (and retires the
   socket, so the next hook starts a worker). A wrong HMAC: whatever listens is not smllm's
   worker (:class:`Foreign`); nothing is handed over, and a gating hook denies (fail
   closed), journaled in-process; an observing hook runs in-process.
3. ``GO``: the call (argv, environment, umask) with an HMAC over the worker's nonce and
   the call, and the hook's stdin, stdout, stderr and working folder as descriptors. From
   here the call may have been delivered, so the hook never decides it again:
4. ``DONE`` + the exit status: the hook exits with it. The connection closed without it
   (the child died) or no answer by the hook's deadline (:func:`relay`'s ``wait``; the
   child is killed then): :class:`Lost`, and a gating hook exits 2 (Claude Code and Codex
   block the call) with the reason on stderr, an observing hook exits quietly; nothing is
   written to stdout, where the child may have written already.

Where: the socket is in smllm's key folder (:func:`smllm.base.paths.key_root`), which
Claude Code's sandbox cannot see (``denyRead``): a sandboxed command can neither connect to
it nor plant a listener there (a read-only mount would not stop ``connect``). It is named
for the interpreter and the package the hook runs, so two installs never share a worker.
``SMLLM_WORKER=0`` turns the worker off (every hook in-process; the tests' default).

Hot path: ``os``, ``sys``, ``_socket`` and smllm's key; nothing else.
"""

from __future__ import annotations

import _socket  # the C module behind socket (without enum, selectors)
import os
import sys

from smllm.base import userkey

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

#: the environment variable that turns the worker off (``0``)
SWITCH = "SMLLM_WORKER"
#: how long a hook waits for the worker's ``ACK`` before deciding in-process (seconds): a
#: fork of a warm worker answers in about a millisecond; this only guards a stuck one
ACK_WAIT = 3.0
#: a child's ``DONE`` may come this long after the hook's own deadline (seconds)
DONE_GRACE = 5.0
#: the first bytes of every conversation: the protocol's name and version
HELLO = b"smllm-worker-1\n"
NONCE = 32
MAC = 32
ACK = b"ACK1"
ACK_SIZE = len(ACK) + NONCE + 8 + MAC
GO = b"GO01"
DONE = b"DONE"
#: the domain of the worker's MACs under smllm's key (the keyed chain has its own)
DOMAIN = b"smllm-worker-v1\0"
#: an AF_UNIX address is at most 108 bytes; a longer path is reached through the folder's
#: descriptor (``/proc/self/fd/N/name``, Linux)
_ADDRESS_MAX = 100
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Lost:
    """The call was handed over and no answer came back: the hook must not decide again."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


class Foreign:
    """Something that is not smllm's worker listens on its socket (it failed the HMAC)."""

    __slots__ = ("path",)

    def __init__(self, path: str) -> None:
        self.path = path

    @property
    def reason(self) -> str:
        return (f"a program that is not smllm's worker listens on smllm's worker socket "
                f"{self.path} (it cannot prove smllm's key): smllm denies this call (fail "
                f"closed); check who created that socket, then remove it")


def enabled() -> bool:
    """Whether hooks use the worker: on POSIX with ``fork``, unless ``SMLLM_WORKER=0``."""
    return os.environ.get(SWITCH) != "0" and hasattr(os, "fork") \
        and hasattr(_socket, "AF_UNIX")


def tag(executable: str | None = None) -> str:
    """What names a worker: the interpreter and the package it runs."""
    from smllm.base.digest import sha256_hex  # noqa: PLC0415 - hot path: built-in sha256

    who = f"{executable or sys.executable}\0{_PACKAGE}".encode("utf-8", "surrogateescape")
    return sha256_hex(who)[:16]


def socket_path(folder: str | None = None) -> str:
    """The worker's socket in ``folder`` (smllm's key folder)."""
    return os.path.join(folder or userkey.key_folder(), f"worker-{tag()}.sock")


def lock_path(folder: str | None = None) -> str:
    """The worker's lock (held for its whole life: one worker per socket)."""
    return os.path.join(folder or userkey.key_folder(), f"worker-{tag()}.lock")


def stats_path(folder: str | None = None) -> str:
    """What the worker did (pid, calls, CPU seconds): :class:`smllm.worker.server._Stats`."""
    return os.path.join(folder or userkey.key_folder(), f"worker-{tag()}.json")


def address(path: str) -> tuple[str, int]:
    """``(address, folder descriptor or -1)``: ``path``, or the same socket through its
    folder's descriptor where ``path`` is too long for an AF_UNIX address."""
    if len(os.fsencode(path)) < _ADDRESS_MAX:
        return path, -1
    folder, name = os.path.split(path)
    fd = os.open(folder, getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY)
    return f"/proc/self/fd/{fd}/{name}", fd


def mac(secret: bytes, *parts: bytes) -> bytes:
    return userkey.hmac(secret, DOMAIN + b"".join(parts))


def _recv_exact(sock: _socket.socket, size: int) -> bytes:
    """``size`` bytes, or fewer if the peer closed first."""
    chunks: list[bytes] = []
    got = 0
    while got < size:
        chunk = sock.recv(size - got)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _connect(path: str) -> _socket.socket | None:
    """A connection to the worker, or None (then it never reached one: no socket, a dead
    worker, a full backlog); starts a worker where none listens."""
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    sock.setblocking(False)
    try:
        where, folder = address(path)
    except OSError:
        sock.close()
        return None
    try:
        sock.connect(where)
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        start(path)
        return None
    except OSError:  # EAGAIN: the backlog is full; anything else: not reached either
        sock.close()
        return None
    finally:
        if folder >= 0:
            os.close(folder)
    return sock


def _call(argv: Sequence[str], main_argv: Sequence[str]) -> bytes:
    """The call the child runs: umask, this process's argv, the hook's arguments and the
    environment, NUL-separated (none of them can hold a NUL)."""
    mask = os.umask(0o077)
    os.umask(mask)
    env = [k + b"=" + v for k, v in os.environb.items()]
    fields = [b"%d" % mask, b"%d" % len(argv), *map(os.fsencode, argv),
              b"%d" % len(main_argv), *map(os.fsencode, main_argv), *env]
    return b"\0".join(fields)


def relay(main_argv: Sequence[str], wait: float) -> int | Lost | Foreign | None:
    """Hand this hook to the worker. The hook's exit status once the worker's child ran
    it; :class:`Lost` once it was handed over and no answer came back; :class:`Foreign`
    when whatever listens failed to prove smllm's key (nothing handed over); None when it
    never reached a worker (then the hook runs in-process). ``wait``: the hook's deadline
    (seconds), after which a child that has not answered is killed."""
    try:
        secret = userkey.key(create=False)
    except Exception:  # an unreadable or damaged key: in-process (which reports it)
        return None
    if secret is None:  # no key yet: the first in-process hook makes it
        return None
    path = socket_path()
    sock = _connect(path)
    if sock is None:
        return None
    try:
        return _converse(sock, secret, path, main_argv, wait)
    finally:
        sock.close()


def _greet(sock: _socket.socket, secret: bytes, path: str) -> tuple[bytes, bytes] | Foreign | None:
    """``HELLO`` and the worker's ``ACK``: (its nonce, its pid), or :class:`Foreign`, or
    None (nothing handed over: no answer in time, or the connection closed)."""
    nonce = os.urandom(NONCE)
    sock.settimeout(ACK_WAIT)
    try:
        sock.sendall(HELLO + nonce)
        ack = _recv_exact(sock, ACK_SIZE)
    except TimeoutError:  # a stopped or stuck worker: nothing handed over yet
        retire(path)
        return None
    except OSError:
        return None
    if len(ack) < len(ACK):
        return None
    theirs = ack[len(ACK):len(ACK) + NONCE]
    pid_bytes = ack[len(ACK) + NONCE:len(ACK) + NONCE + 8]
    if len(ack) < ACK_SIZE or not ack.startswith(ACK) \
            or ack[-MAC:] != mac(secret, b"ack", nonce, theirs, pid_bytes):
        return Foreign(path)
    return theirs, pid_bytes


def _converse(sock: _socket.socket, secret: bytes, path: str, main_argv: Sequence[str],
              wait: float) -> int | Lost | Foreign | None:
    greeted = _greet(sock, secret, path)
    if not isinstance(greeted, tuple):
        return greeted
    theirs, pid_bytes = greeted
    call = _call(sys.argv, main_argv)
    head = GO + len(call).to_bytes(4, "little") + mac(secret, b"go", theirs, call)
    try:
        cwd = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    except OSError:  # a working folder that is gone: in-process, which reports it
        return None
    try:
        fds = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2, cwd))
        sent = sock.sendmsg([head + call],
                            [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
        sock.sendall((head + call)[sent:])
    except OSError:  # not all of it arrived: the child never runs an incomplete call
        return None
    finally:
        os.close(cwd)
    # handed over: from here on this hook never decides the call itself
    return _outcome(sock, int.from_bytes(pid_bytes, "little"), wait)


def _outcome(sock: _socket.socket, pid: int, wait: float) -> int | Lost:
    try:
        sock.settimeout(wait + DONE_GRACE)
        done = _recv_exact(sock, len(DONE) + 1)
    except TimeoutError:
        _kill(pid)
        return Lost(f"smllm's worker did not answer within {wait + DONE_GRACE:.0f} s")
    except OSError as exc:
        return Lost(f"smllm's worker could not be read ({exc})")
    if len(done) == len(DONE) + 1 and done.startswith(DONE):
        return done[-1]
    return Lost("smllm's worker ended without answering")


def _kill(pid: int) -> None:
    """End the child that did not answer in time (it must not decide after the hook)."""
    try:  # noqa: SIM105 - contextlib is too slow to import on the hot path
        os.kill(pid, 9)
    except OSError:
        pass


def retire(path: str) -> None:
    """Take the socket of a worker that does not answer out of the way (it exits when it
    finds its socket gone); the next hook starts a new one."""
    try:  # noqa: SIM105 - contextlib is too slow to import on the hot path
        os.unlink(path)
    except OSError:
        pass


#: what a new worker runs: the client's ``sys.path`` (hex of the NUL-joined entries), then
#: the server's main with the key folder
_BOOT = ("import sys; sys.path[:] = bytes.fromhex(sys.argv[1]).decode('utf-8', "
         "'surrogateescape').split('\\0'); from smllm.worker.server import main; "
         "main(sys.argv[2:])")


def start(path: str | None = None) -> int | None:
    """Start a worker, detached (its own session, stdio on /dev/null), for this process's
    interpreter, ``sys.path`` and key folder; its pid, or None where it cannot start. A
    worker that finds another one holding the lock exits at once."""
    folder = os.path.dirname(path or socket_path())
    if not os.path.isdir(folder):
        return None
    entries = "\0".join(sys.path).encode("utf-8", "surrogateescape").hex()
    idle = os.environ.get("SMLLM_WORKER_IDLE", "")
    argv = [sys.executable, "-I", "-S", "-c", _BOOT, entries, folder, idle]
    null = os.devnull
    actions = [(os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0),
               (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
               (os.POSIX_SPAWN_OPEN, 2, null, os.O_WRONLY, 0)]
    env = {"PATH": os.environ.get("PATH", os.defpath)}
    try:  # S606: the worker is this very interpreter, no shell
        return os.posix_spawn(sys.executable, argv, env, file_actions=actions,
                              setsid=True)
    except (OSError, AttributeError, TypeError):
        return None
