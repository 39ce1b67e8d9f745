"""The resident worker itself: one per (user, interpreter, smllm package), started by a hook.

:func:`main` takes the worker's lock (another worker already serving: exit), imports what
hooks run (:func:`preload`), listens on the socket in smllm's key folder (mode 0600, a
folder the agent's sandbox cannot see) and forks a child per connection (:func:`child`),
which runs the hook exactly as the hook process would (:func:`smllm.hooks.main`), with the
hook's own descriptors, argv, environment, umask and folder (:mod:`smllm.worker`). The
worker itself decides nothing, reads no configuration and writes no journal: each child
reads the compiled policy and machines as an in-process hook does, so a changed config
applies to the next call.

It ends itself:

* when idle for :data:`IDLE` seconds (``SMLLM_WORKER_IDLE`` when it started) with no
  child running;
* when its socket is gone or replaced (a hook retired it: it did not answer in time);

and it replaces itself (``exec``, keeping its socket and lock) when smllm's code changes:
before each call it compares the files of the smllm modules it runs, and the interpreter,
with what it loaded, so no call runs old code after an upgrade or an edit.

A child that loses its hook (the hook process died, e.g. killed at Claude Code's
timeout) ends too: the connection's ``SIGIO`` tells it, as the hook's own death would end
an in-process hook.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import socket
import sys
import time

from smllm import worker
from smllm.base import userkey

#: seconds without a call after which the worker exits (the default)
IDLE = 900.0
#: connections that may wait for ``accept`` (more: a hook finds the backlog full and runs
#: in-process)
BACKLOG = 64
#: how long a child waits for its hook's ``HELLO`` and ``GO`` (seconds)
CHILD_WAIT = 10.0
#: the modules a hook may run, imported once by the worker (besides those the hooks'
#: code bundle lists): every hook handler, the call's adapters, the gate and the shell
#: analyser's families
PACKAGES = ("smllm.gate.shell",)
MODULES = ("smllm.hooks._context", "smllm.hooks._features", "smllm.harness.claude",
           "smllm.harness.codex", "smllm.gate", "smllm.gate.analysis", "smllm.gate.protect",
           "smllm.gate.review", "smllm.journal", "smllm.journal.reconcile", "smllm.machine",
           "smllm.store", "smllm.base.protected", "smllm.base.knobs")


def preload() -> None:
    """Import what hooks run, so a child starts with it loaded."""
    from smllm import hooks  # noqa: PLC0415 - the worker's own start

    names = [f"smllm.hooks.{h}" for h in sorted(set(hooks.HANDLERS.values()))]
    names += MODULES
    for package in PACKAGES:
        folder = os.path.join(os.path.dirname(os.path.dirname(worker.__file__)),
                              *package.split(".")[1:])
        names += [f"{package}.{f[:-3]}" for f in sorted(os.listdir(folder))
                  if f.endswith(".py") and f != "__init__.py"]
    names += _bundled()
    for name in names:
        try:
            __import__(name)
        except Exception:  # noqa: S112 - a module that cannot load is loaded (and reported) by the hook
            continue


def _bundled() -> list[str]:
    """The modules the hooks' code bundle lists (what hooks here have loaded)."""
    from smllm.hooks import _bundle  # noqa: PLC0415 - the worker's own start

    path = _bundle.bundle_file()
    fd = _bundle._open(path) if path else -1
    if fd < 0:
        return []
    try:
        return sorted(_bundle._read_index(fd))
    except OSError:
        return []
    finally:
        os.close(fd)


def stamp() -> dict[str, tuple[int, int]]:
    """The files this worker's code came from (smllm's modules and data, and the
    interpreter), with their mtime and size."""
    files = [sys.executable]
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and getattr(module, "__name__", "").startswith("smllm"):
            files.append(file)
    package = os.path.dirname(os.path.dirname(worker.__file__))
    files.append(os.path.join(package, "data", "policy_defaults.toml"))
    out: dict[str, tuple[int, int]] = {}
    for file in files:
        try:
            st = os.stat(file)
        except OSError:
            out[file] = (-1, -1)
        else:
            out[file] = (st.st_mtime_ns, st.st_size)
    return out


def _changed(loaded: dict[str, tuple[int, int]]) -> bool:
    for file, was in loaded.items():
        try:
            st = os.stat(file)
        except OSError:
            return True
        if (st.st_mtime_ns, st.st_size) != was:
            return True
    return False


def main(argv: list[str]) -> None:
    """``FOLDER [IDLE] [--fd LISTENER LOCK]``: serve hooks from smllm's key folder."""
    folder, idle = argv[0], _seconds(argv[1] if len(argv) > 1 else "")
    inherited = argv[argv.index("--fd") + 1:] if "--fd" in argv else []
    _close_all_but({int(fd) for fd in inherited})
    path = worker.socket_path(folder)
    if inherited:
        listener = socket.socket(fileno=int(inherited[0]))
        lock = int(inherited[1])
    else:
        lock = _lock(worker.lock_path(folder))
        if lock < 0:
            return  # another worker serves this socket
        listener = _listen(path)
    secret = userkey.key(create=False, folder=folder)
    if secret is None:
        return
    preload()
    loaded = stamp()
    ino = os.stat(path).st_ino
    _serve(_Place(listener, lock, path, ino, folder), secret, idle, loaded)


def _close_all_but(keep: set[int]) -> None:
    """Close every descriptor above stderr but ``keep``: nothing of the hook that started
    the worker stays open in it (Claude Code waits for its pipes to close)."""
    low = 3
    for fd in sorted(keep):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 16)


def _seconds(raw: str) -> float:
    try:
        value = float(raw) if raw else IDLE
    except ValueError:
        value = IDLE
    return value if value > 0 else IDLE


def _lock(path: str) -> int:
    import fcntl  # noqa: PLC0415 - POSIX only (the worker is)

    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return -1
    return fd


def _listen(path: str) -> socket.socket:
    """Bind the socket afresh (a stale one from a dead worker is removed), mode 0600."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    where, folder = worker.address(path)
    old = os.umask(0o177)
    try:
        listener.bind(where)
    finally:
        os.umask(old)
        if folder >= 0:
            os.close(folder)
    listener.listen(BACKLOG)
    return listener


def _ours(path: str, ino: int) -> bool:
    try:
        return os.stat(path).st_ino == ino
    except OSError:
        return False


class _Stats:
    """What the worker did, in :func:`smllm.worker.stats_path` (``smllm doctor``, and the
    benchmarks' count of the CPU time spent for the hooks): its pid, when it started, the
    calls served and the CPU seconds of its own and of its children (``wait4``)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.calls = 0
        self.children_cpu = 0.0
        self.started = time.time()

    def write(self) -> None:
        import resource  # noqa: PLC0415 - the worker's own loop

        own = resource.getrusage(resource.RUSAGE_SELF)
        line = (f'{{"pid": {os.getpid()}, "started": {self.started:.3f}, '
                f'"calls": {self.calls}, "cpu": {own.ru_utime + own.ru_stime:.6f}, '
                f'"children_cpu": {self.children_cpu:.6f}}}\n')
        try:
            from smllm.base import paths  # noqa: PLC0415 - loaded already

            paths.write_private(self.path, line.encode("ascii"))
        except OSError:
            pass


def _reap(children: set[int], stats: _Stats) -> None:
    """Collect every child that ended (those of the worker before a reload too)."""
    ended = 0
    while True:
        try:
            pid, _, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            children.clear()
            break
        if not pid:
            break
        children.discard(pid)
        stats.children_cpu += usage.ru_utime + usage.ru_stime
        ended += 1
    if ended:
        stats.calls += ended
        stats.write()


class _Place:
    """Where the worker listens: its socket (path, inode), listener, lock and folder."""

    __slots__ = ("folder", "ino", "listener", "lock", "path")

    def __init__(self, listener: socket.socket, lock: int, path: str, ino: int,
                 folder: str) -> None:
        self.listener, self.lock, self.path, self.ino, self.folder = \
            listener, lock, path, ino, folder


def _serve(place: _Place, secret: bytes, idle: float,
           loaded: dict[str, tuple[int, int]]) -> None:
    import select  # noqa: PLC0415 - the worker's own loop

    listener, lock, path, ino, folder = (place.listener, place.lock, place.path, place.ino,
                                         place.folder)
    listener.setblocking(False)
    wake_r, wake_w = os.pipe()  # a child's end (SIGCHLD) wakes the loop: reaped at once
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    poller = select.poll()
    poller.register(listener.fileno(), select.POLLIN)
    poller.register(wake_r, select.POLLIN)
    children: set[int] = set()
    stats = _Stats(worker.stats_path(folder))
    stats.write()
    last = time.monotonic()
    gc.collect()
    gc.freeze()  # what the imports made is never collected: children copy fewer pages
    while True:
        events = poller.poll(1000)
        if any(fd == wake_r for fd, _ in events):
            _drain(wake_r)
        _reap(children, stats)
        if not _ours(path, ino):
            return
        if not any(fd == listener.fileno() for fd, _ in events):
            if not children and time.monotonic() - last > idle:
                return
            continue
        if _changed(loaded):
            _reload(listener, lock, folder, idle)
        try:
            conn, _ = listener.accept()
        except BlockingIOError:
            continue
        last = time.monotonic()
        pid = os.fork()
        if pid == 0:
            listener.close()
            os.close(lock)
            for fd in (wake_r, wake_w):
                os.close(fd)
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            child(conn, secret)
        conn.close()
        children.add(pid)


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 256):
            pass
    except BlockingIOError:
        pass


def _reload(listener: socket.socket, lock: int, folder: str, idle: float) -> None:
    """smllm's code changed: run the worker afresh, on the same socket and lock."""
    os.set_inheritable(listener.fileno(), True)
    os.set_inheritable(lock, True)
    entries = "\0".join(sys.path).encode("utf-8", "surrogateescape").hex()
    os.execv(sys.executable, [sys.executable, "-I", "-S", "-c",  # noqa: S606 - itself
                              worker._BOOT, entries, folder, repr(idle), "--fd",
                              str(listener.fileno()), str(lock)])


# ------------------------------------------------------------------ one call


def child(conn: socket.socket, secret: bytes) -> None:
    """Serve one hook on ``conn``, then exit (never returns)."""
    code = 0
    try:
        call = _receive(conn, secret)
        if call is not None:
            code = _run(conn, call)
            conn.sendall(worker.DONE + bytes([code & 0xFF]))
    except BaseException:  # noqa: S110 - the hook sees no DONE and acts on it
        pass
    finally:
        os._exit(0)


class _Call:
    __slots__ = ("argv", "env", "fds", "main_argv", "umask")

    def __init__(self, fields: list[bytes], fds: list[int]) -> None:
        self.umask = int(fields[0])
        n = int(fields[1])
        self.argv = [os.fsdecode(f) for f in fields[2:2 + n]]
        m = int(fields[2 + n])
        self.main_argv = [os.fsdecode(f) for f in fields[3 + n:3 + n + m]]
        self.env = [f.partition(b"=") for f in fields[3 + n + m:]]
        self.fds = fds


def _receive(conn: socket.socket, secret: bytes) -> _Call | None:
    """The hook's ``HELLO``, our ``ACK``, its ``GO``: the call, or None (the hook left, or
    the call does not carry smllm's key)."""
    conn.settimeout(CHILD_WAIT)
    hello = worker._recv_exact(conn, len(worker.HELLO) + worker.NONCE)
    if len(hello) != len(worker.HELLO) + worker.NONCE or not hello.startswith(worker.HELLO):
        return None
    nonce = hello[len(worker.HELLO):]
    ours = os.urandom(worker.NONCE)
    pid = os.getpid().to_bytes(8, "little")
    conn.sendall(worker.ACK + ours + pid + worker.mac(secret, b"ack", nonce, ours, pid))
    head_size = len(worker.GO) + 4 + worker.MAC
    data, ancillary, _, _ = conn.recvmsg(head_size, socket.CMSG_SPACE(4 * 4))
    fds = [int.from_bytes(cdata[i:i + 4], sys.byteorder)
           for level, kind, cdata in ancillary
           if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS
           for i in range(0, len(cdata) - len(cdata) % 4, 4)]
    data += worker._recv_exact(conn, head_size - len(data))
    if len(fds) != 4 or len(data) != head_size or not data.startswith(worker.GO):
        return None
    size = int.from_bytes(data[len(worker.GO):len(worker.GO) + 4], "little")
    body = worker._recv_exact(conn, size)
    if len(body) != size or data[-worker.MAC:] != worker.mac(secret, b"go", ours, body):
        return None
    return _Call(body.split(b"\0"), fds)


def _run(conn: socket.socket, call: _Call) -> int:
    """Become the hook: its descriptors, folder, umask, environment and argv; then run it
    as the hook process would, in-process."""
    for target, fd in enumerate(call.fds[:3]):
        os.dup2(fd, target)
    os.fchdir(call.fds[3])
    for fd in call.fds:
        os.close(fd)
    os.umask(call.umask)
    os.environb.clear()
    for key, _, value in call.env:
        os.environb[key] = value
    sys.argv = call.argv
    _watch(conn)
    from smllm import hooks  # noqa: PLC0415 - imported by preload already

    code = hooks.guarded(call.main_argv)
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    return code


def _watch(conn: socket.socket) -> None:
    """End this child when its hook goes away (SIGIO on the connection: end of file)."""
    import fcntl  # noqa: PLC0415 - loaded by the worker already

    conn.settimeout(None)  # blocking: a peek with MSG_DONTWAIT never waits
    def gone(signum: int, frame: object) -> None:
        try:
            data = conn.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            os._exit(0)

    signal.signal(signal.SIGIO, gone)
    fcntl.fcntl(conn.fileno(), fcntl.F_SETOWN, os.getpid())
    flags = fcntl.fcntl(conn.fileno(), fcntl.F_GETFL)
    fcntl.fcntl(conn.fileno(), fcntl.F_SETFL, flags | os.O_ASYNC)
    gone(signal.SIGIO, None)  # it may have gone before the watch was set

