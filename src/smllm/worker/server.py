"""The resident worker itself: one per (user's key folder, Python hook), started by a hook.

A **master** (:func:`main`) takes the worker's lock (another worker serving already: it
exits), imports what hooks run (:func:`preload`), listens on the socket in smllm's key
folder (mode 0600, a folder the agent's sandbox cannot see) and accepts each connection
itself. It hands the connection to an idle **child** (forked from it once, warm), forks a
new one when none is idle (at most :data:`CHILDREN`), or closes it when all are busy (the
client then runs the Python hook: a full worker never holds a call up).

A child serves calls one after another (:func:`serve`): ``HELLO``, ``ACK`` with its pid
and the MAC, ``GO`` with the call and the hook's descriptors; then it becomes the hook
(its stdin, stdout, stderr, folder, umask, environment and argv) and runs exactly what
the Python hook runs (:func:`smllm.hooks.main`), lets go of the hook's descriptors and
answers ``DONE``. Between calls it forgets what a call left (:func:`forget`: the caches a
hook keeps for its own process, the environment), and it ends instead of serving again
when a call left a thread or an open descriptor behind, or after :data:`CALLS` calls.
Nothing is shared between calls that a hook process would not have had; the journal stays
the one record, written by the same code under the same locks.

The master ends itself when idle for :data:`IDLE` seconds, when its socket is gone or
replaced, and runs itself afresh (``exec``, keeping its socket and lock) when smllm's code
changes: before each call it compares the files of the smllm modules it loaded, and the
interpreter, with what they were (:func:`stamp`), so no call runs old code.
"""

from __future__ import annotations

import _thread
import contextlib
import fcntl
import gc
import io
import os
import resource
import select
import signal
import socket
import struct
import sys
import time

from smllm import worker
from smllm.base import paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

#: seconds without a call after which the worker exits
IDLE = 900.0
#: connections that may wait for ``accept``
BACKLOG = 64
#: children serving at once, at most (Claude Code runs a call's hooks, and parallel
#: calls' hooks, together); a call that finds them all busy runs in the Python hook
CHILDREN = 8
#: calls a child serves before it ends (a fresh one is forked from the master when needed)
CALLS = 500
#: a worker that took the lock this long ago and has no socket is taken over (seconds)
TAKE_OVER = 10.0
#: how long a child waits for its client's ``HELLO`` and ``GO`` (seconds)
CHILD_WAIT = 5.0
#: the modules a hook may run, imported once by the master: the hooks' handlers, the
#: gate and its shell analyser (every family), the journal and the machines
PACKAGES = ("smllm.gate.shell",)
MODULES = ("smllm.hooks._context", "smllm.hooks._features", "smllm.harness.claude",
           "smllm.gate", "smllm.gate.analysis", "smllm.gate.protect", "smllm.gate.review",
           "smllm.gate.policy", "smllm.journal", "smllm.journal.transcript",
           "smllm.journal.reconcile", "smllm.journal.sidecar", "smllm.machine",
           "smllm.base.protected", "smllm.base.knobs", "smllm.base.secrets",
           "smllm.tripwire", "smllm.tripwire.keeper")
#: what a hook keeps for the rest of its process, forgotten after every call: module ->
#: its dicts and sets (``tests/test_worker_server.py`` checks that every module-level
#: container of the hooks' modules is here or known to hold constants only)
PER_CALL: dict[str, tuple[str, ...]] = {
    "smllm.base.build": ("_known",),
    "smllm.base.secrets": ("_memo", "_recent", "_secret_keys", "_plain_keys",
                           "_known_plain"),
    "smllm.gate.shell._decisions": ("_DECISIONS",),
    "smllm.journal.keyed": ("_KEY", "_PADS"),
    "smllm.journal.log": ("_STATE_SEEN",),
    "smllm.journal.transcript": ("_PREFETCHED", "_WAITED", "_WAIT_FOUND"),
}


# ------------------------------------------------------------------ the master


def main(argv: list[str]) -> None:
    """``FOLDER PYTHON_HOOK [IDLE] [--fd LISTENER LOCK]``: serve the hooks of
    ``PYTHON_HOOK`` from smllm's key folder ``FOLDER``."""
    folder, hook = argv[0], argv[1]
    idle = _seconds(argv[2] if len(argv) > 2 and argv[2] != "--fd" else "")
    inherited = [int(fd) for fd in argv[argv.index("--fd") + 1:]] if "--fd" in argv else []
    _close_all_but(set(inherited))
    os.chdir("/")  # not the folder of the hook that started it (a project the agent writes)
    path = worker.socket_path(folder, hook)
    secret = _key(folder)
    if secret is None:
        return
    if inherited:
        listener = socket.socket(fileno=inherited[0])
        lock = inherited[1]
        preload()
    else:
        lock = _lock(worker.lock_path(folder, hook))
        if lock < 0 and not _stuck(path, worker.lock_path(folder, hook)):
            return  # another worker serves this socket, or is about to
        preload()
        listener = _listen(path)  # only now: a hook never waits on a worker's start
    loaded = stamp()
    master = Master(listener, lock, path, folder, hook, secret, idle, loaded)
    gc.collect()
    gc.freeze()  # what the imports made is never collected: children copy fewer pages
    master.run()


def _key(folder: str) -> bytes | None:
    """smllm's journal key in ``folder`` (the worker proves it to each client), read as the
    hooks read it: a regular file, through no link."""
    from smllm.journal import keyed  # noqa: PLC0415 - the worker's start

    try:
        return keyed._read(os.path.join(folder, keyed.KEY_NAME))
    except Exception:  # not a key: no worker
        return None


def preload() -> None:
    """Import what hooks run, so every child starts with it loaded."""
    from smllm import hooks  # noqa: PLC0415 - the worker's own start

    names = [f"smllm.hooks.{h}" for h in sorted(set(hooks.HANDLERS.values()))]
    names += MODULES
    root = os.path.dirname(os.path.dirname(os.path.abspath(worker.__file__)))
    for package in PACKAGES:
        folder = os.path.join(root, *package.split(".")[1:])
        names += [f"{package}.{f[:-3]}" for f in sorted(os.listdir(folder))
                  if f.endswith(".py") and f != "__init__.py"]
    for name in names:
        with contextlib.suppress(Exception):  # a module that cannot load fails in the call
            __import__(name)


def stamp() -> dict[str, tuple[int, int]]:
    """The files this worker's code came from (smllm's modules, its built-in rules and the
    interpreter), with their mtime and size."""
    files = [sys.executable]
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and (name == "smllm" or name.startswith("smllm.")):
            files.append(file)
    root = os.path.dirname(os.path.dirname(os.path.abspath(worker.__file__)))
    files.append(os.path.join(root, "data", "policy_defaults.toml"))
    return {file: _mark(file) for file in files}


def _mark(file: str) -> tuple[int, int]:
    try:
        st = os.stat(file)
    except OSError:
        return (-1, -1)
    return (st.st_mtime_ns, st.st_size)


def changed(loaded: dict[str, tuple[int, int]]) -> bool:
    """Whether any file :func:`stamp` recorded is not as it was."""
    return any(_mark(file) != was for file, was in loaded.items())


def _close_all_but(keep: set[int]) -> None:
    """Close every descriptor above stderr but ``keep``: nothing of the hook that started
    the worker stays open in it (Claude Code waits for its pipes to close)."""
    low = 3
    for fd in sorted(k for k in keep if k >= low):
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
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return -1
    os.ftruncate(fd, 0)
    os.write(fd, b"%d\n" % os.getpid())
    return fd


def _stuck(path: str, lock: str) -> bool:
    """Whether the worker holding the lock is past serving: its socket is gone (a hook
    removed it when it did not answer: stopped, or stuck) and it took the lock more than
    :data:`TAKE_OVER` seconds ago (not one still loading). Then a new worker serves
    without the lock; the old one, should it run again, finds its socket replaced and
    ends."""
    if os.path.exists(path):
        return False
    try:
        return time.time() - os.stat(lock).st_mtime > TAKE_OVER
    except OSError:
        return True


def _listen(path: str) -> socket.socket:
    """Bind the socket afresh (a stale one of a dead worker is removed), mode 0600."""
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


class Stats:
    """What the worker did, in :func:`smllm.worker.stats_path` (``smllm doctor``, and the
    benchmarks' count of the CPU the worker spends for the hooks): the master's pid, when
    it started, the calls served, the master's CPU seconds and its children's (those
    alive as they last said, those ended as ``wait4`` said)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.calls = 0
        self.started = time.time()
        self.ended_cpu = 0.0
        self.live_cpu: dict[int, float] = {}
        self.busy = 0

    def write(self) -> None:
        own = resource.getrusage(resource.RUSAGE_SELF)
        children = self.ended_cpu + sum(self.live_cpu.values())
        line = (f'{{"pid": {os.getpid()}, "started": {self.started:.3f}, '
                f'"calls": {self.calls}, "busy": {self.busy}, '
                f'"cpu": {own.ru_utime + own.ru_stime:.6f}, '
                f'"children_cpu": {children:.6f}}}\n')
        with contextlib.suppress(OSError):
            paths.write_private(self.path, line.encode("ascii"))


class _Child:
    __slots__ = ("busy", "control", "pid")

    def __init__(self, pid: int, control: socket.socket) -> None:
        self.pid, self.control, self.busy = pid, control, False


class Master:
    """The listening process: it accepts, hands each call to an idle child, and keeps
    the worker's life (idle end, socket gone, code changed)."""

    def __init__(self, listener: socket.socket, lock: int, path: str, folder: str,  # noqa: PLR0917 - a record
                 hook: str, secret: bytes, idle: float,
                 loaded: dict[str, tuple[int, int]]) -> None:
        self.listener, self.lock, self.path, self.folder, self.hook = \
            listener, lock, path, folder, hook
        self.secret, self.idle, self.loaded = secret, idle, loaded
        self.ino = os.stat(path).st_ino
        self.children: dict[int, _Child] = {}
        self.stats = Stats(worker.stats_path(folder, hook))

    def run(self) -> None:
        self.listener.setblocking(False)
        wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)
        self.stats.write()
        last = time.monotonic()
        try:
            while True:
                poller = select.poll()
                poller.register(self.listener.fileno(), select.POLLIN)
                poller.register(wake_r, select.POLLIN)
                by_fd = {c.control.fileno(): c for c in self.children.values()}
                for fd in by_fd:
                    poller.register(fd, select.POLLIN)
                events = poller.poll(1000)
                _drain(wake_r)
                self._reap()
                for fd, _ in events:
                    if fd in by_fd:
                        self._heard(by_fd[fd])
                if not self._ours():
                    return
                if any(fd == self.listener.fileno() for fd, _ in events):
                    last = time.monotonic()
                    self._accept()
                elif time.monotonic() - last > self.idle and \
                        not any(c.busy for c in self.children.values()):
                    return
        finally:
            for child in list(self.children.values()):
                child.control.close()  # an idle child ends when its master does

    def _ours(self) -> bool:
        try:
            return os.stat(self.path).st_ino == self.ino
        except OSError:
            return False

    def _accept(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        with conn:
            if not confined_like_us(conn):
                return  # closed unanswered: a sandboxed process runs nothing out here
            if changed(self.loaded):
                self._reload()  # the connection closes in the exec: the hook runs itself
            child = next((c for c in self.children.values() if not c.busy), None)
            if child is None and len(self.children) < CHILDREN:
                child = self._fork()
            if child is None:
                return  # all busy: closed unanswered, the client runs the Python hook
            try:
                socket.send_fds(child.control, [b"c"], [conn.fileno()])
            except OSError:
                self._gone(child)
                return
            child.busy = True

    def _fork(self) -> _Child | None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            pid = os.fork()
        except OSError:
            ours.close()
            theirs.close()
            return None
        if pid == 0:  # the child: nothing of the master's stays open in it (the listener,
            try:  # the lock, the connection being handed over, its siblings' sockets)
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                _close_all_but({theirs.fileno()})
                for sock in (ours, self.listener, *(c.control for c in self.children.values())):
                    sock.detach()  # closed above: the objects must not close a reused number
                Child(theirs, self.secret, set(self.loaded)).run()
            finally:
                os._exit(0)
        theirs.close()
        child = _Child(pid, ours)
        self.children[pid] = child
        return child

    def _heard(self, child: _Child) -> None:
        """A child's word: idle again (with its CPU so far), or gone (end of file)."""
        try:
            data = child.control.recv(64)
        except OSError:
            data = b""
        if not data.startswith(b"i"):
            self._gone(child)
            return
        child.busy = False
        self.stats.calls += 1
        self.stats.busy = sum(c.busy for c in self.children.values())
        with contextlib.suppress(ValueError):
            self.stats.live_cpu[child.pid] = float(data[1:].split(b"\n")[0])
        self.stats.write()

    def _gone(self, child: _Child) -> None:
        child.control.close()
        self.children.pop(child.pid, None)
        self.stats.busy = sum(c.busy for c in self.children.values())

    def _reap(self) -> None:
        while True:
            try:
                pid, _, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if not pid:
                return
            child = self.children.pop(pid, None)
            if child is not None:
                child.control.close()
            self.stats.busy = sum(c.busy for c in self.children.values())
            self.stats.live_cpu.pop(pid, None)
            self.stats.ended_cpu += usage.ru_utime + usage.ru_stime
            self.stats.write()

    def _reload(self) -> None:
        """smllm's code changed: run the worker afresh, on the same socket and lock."""
        for child in list(self.children.values()):
            child.control.close()
        os.set_inheritable(self.listener.fileno(), True)
        if self.lock >= 0:
            os.set_inheritable(self.lock, True)
        argv = [sys.executable, *boot_argv(self.folder, self.hook), repr(self.idle),
                "--fd", str(self.listener.fileno()), str(self.lock)]
        os.execv(sys.executable, argv)  # noqa: S606 - itself, no shell


#: what /proc/PID/status says of a process's confinement: a sandbox (Claude Code's
#: bubblewrap, Codex's landlock, seccomp filters) sets no_new_privs and a seccomp filter
CONFINEMENT = (b"NoNewPrivs:", b"Seccomp:")


def confinement(pid: int | str) -> tuple[bytes, ...] | None:
    """``(NoNewPrivs, Seccomp)`` of a process (None when it cannot be read)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    found = {ln.split(b":", 1)[0] + b":": ln.split(b":", 1)[1].strip()
             for ln in lines if ln.startswith(CONFINEMENT)}
    return tuple(found.get(k, b"?") for k in CONFINEMENT)


_OURS: list[tuple[bytes, ...] | None] = []


def confined_like_us(conn: socket.socket) -> bool:
    """Whether the process at the other end is this user's and no more confined than the
    worker (the hooks that started it are not sandboxed): a process inside a sandbox that
    could read smllm's key and reach the socket (a host whose sandbox hides neither) must
    not have the worker, outside the sandbox, write for it. It is turned away before the
    handshake and runs the Python hook, inside its sandbox."""
    try:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError:
        return False
    pid, uid, _ = struct.unpack("3i", creds)
    if uid != os.getuid() or pid <= 0:
        return False
    if not _OURS:
        _OURS.append(confinement("self"))
    theirs = confinement(pid)
    return theirs is not None and theirs == _OURS[0]


def _drain(fd: int) -> None:
    with contextlib.suppress(BlockingIOError):
        while os.read(fd, 256):
            pass


#: what a new worker runs: the Python hook's ``sys.path`` (hex of the NUL-joined
#: entries), then :func:`main` with the key folder and the Python hook
BOOT = ("import sys; sys.path[:] = bytes.fromhex(sys.argv[1]).decode('utf-8', "
        "'surrogateescape').split('\\0'); from smllm.worker.server import main; "
        "main(sys.argv[2:])")


def boot_argv(folder: str, hook: str, path: Iterable[str] | None = None) -> list[str]:
    """The interpreter's arguments that start a worker (after ``sys.executable``)."""
    entries = "\0".join(sys.path if path is None else path)
    return ["-I", "-S", "-c", BOOT, entries.encode("utf-8", "surrogateescape").hex(),
            folder, hook]


def start(folder: str, hook: str, idle: str = "") -> int | None:
    """Start a worker, detached (its own session, stdio on /dev/null), for this process's
    interpreter and ``sys.path``; its pid, or None where it cannot start. One that finds
    another holding the lock exits at once."""
    if not os.path.isdir(folder):
        return None
    argv = [sys.executable, *boot_argv(folder, hook)] + ([idle] if idle else [])
    null = os.devnull
    actions = [(os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0),
               (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
               (os.POSIX_SPAWN_OPEN, 2, null, os.O_WRONLY, 0)]
    env = {"PATH": os.environ.get("PATH", os.defpath)}
    try:
        return os.posix_spawn(sys.executable, argv, env, file_actions=actions, setsid=True)
    except (OSError, AttributeError, TypeError):
        return None


# ------------------------------------------------------------------ a child


class Child:
    """A warm child: takes connections from its master and serves each as one call."""

    def __init__(self, control: socket.socket, secret: bytes,
                 watched: set[str] | None = None) -> None:
        self.control, self.secret = control, secret
        #: the files the master checks before each call; this child checks those of the
        #: smllm modules its calls imported besides (:meth:`imported`)
        self.watched = watched or set()
        self.extra: dict[str, tuple[int, int]] = {}
        self.null = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
        self.fds = _open_fds()

    def imported(self) -> None:
        """Note the files of the smllm modules the last call imported (not preloaded), so
        that no call runs them once they changed."""
        for file in _imported_files():
            if file not in self.watched and file not in self.extra:
                self.extra[file] = _mark(file)

    def run(self) -> None:
        for served in range(CALLS):
            try:
                _, fds, _, _ = socket.recv_fds(self.control, 1, 1)
            except OSError:
                return
            if not fds:
                return  # the master ended
            conn = socket.socket(fileno=fds[0])
            try:
                clean = self.serve(conn, self.null)
            finally:
                conn.close()
            self.imported()
            clean = clean and served + 1 < CALLS and forget() and _open_fds() == self.fds
            if not clean:
                return
            cpu = resource.getrusage(resource.RUSAGE_SELF)
            try:
                self.control.sendall(b"i%.6f\n" % (cpu.ru_utime + cpu.ru_stime))
            except OSError:
                return

    def serve(self, conn: socket.socket, null: int) -> bool:
        """One call on ``conn``; whether this child may serve another."""
        if changed(self.extra):  # a module a call imported here changed: unanswered, and
            return False  # this child ends (the client runs the Python hook)
        call = receive(conn, self.secret)
        if call is None:
            return True
        umask, argv, env, fds = call
        code = 0
        try:
            _watch(conn)
            code = _become_and_run(umask, argv, env, fds)
        finally:
            _unwatch(conn)
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    stream.flush()
            for target in (0, 1, 2):  # let go of the hook's pipes: Claude Code waits on them
                os.dup2(null, target)
            os.chdir("/")
        with contextlib.suppress(OSError):
            conn.sendall(worker.DONE + bytes([code & 0xFF]))
        return True


def _watch(conn: socket.socket) -> None:
    """End this child when its client goes away mid-call (Claude Code killed the hook at
    its timeout, or the user interrupted): ``SIGIO`` on the connection's end of file, as
    the hook's own death would end a hook process. Nothing is answered then."""
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
    fcntl.fcntl(conn.fileno(), fcntl.F_SETFL,
                fcntl.fcntl(conn.fileno(), fcntl.F_GETFL) | os.O_ASYNC)
    gone(signal.SIGIO, None)  # it may have gone before the watch was set


def _unwatch(conn: socket.socket) -> None:
    with contextlib.suppress(OSError):
        fcntl.fcntl(conn.fileno(), fcntl.F_SETFL,
                    fcntl.fcntl(conn.fileno(), fcntl.F_GETFL) & ~os.O_ASYNC)
    signal.signal(signal.SIGIO, signal.SIG_IGN)


def _imported_files() -> list[str]:
    return [f for n, m in list(sys.modules.items())
            if (n == "smllm" or n.startswith("smllm."))
            and isinstance(f := getattr(m, "__file__", None), str)]


def _open_fds() -> frozenset[int]:
    try:
        return frozenset(int(n) for n in os.listdir("/proc/self/fd"))
    except OSError:
        return frozenset()


def _recv_exact(sock: socket.socket, size: int) -> bytes:
    chunks: list[bytes] = []
    got = 0
    while got < size:
        chunk = sock.recv(size - got)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def receive(conn: socket.socket, secret: bytes) \
        -> tuple[int, list[bytes], list[bytes], list[int]] | None:
    """The client's ``HELLO``, our ``ACK``, its ``GO``: ``(umask, argv, environment,
    descriptors)``, or None (the client left, or the call does not carry smllm's key)."""
    conn.settimeout(CHILD_WAIT)
    fds: list[int] = []
    try:
        hello = _recv_exact(conn, len(worker.HELLO) + worker.NONCE)
        if len(hello) != len(worker.HELLO) + worker.NONCE or \
                not hello.startswith(worker.HELLO):
            return None
        nonce = hello[len(worker.HELLO):]
        ours = os.urandom(worker.NONCE)
        pid = os.getpid().to_bytes(8, "little")
        conn.sendall(worker.ACK + ours + pid + worker.mac(secret, b"ack", nonce, ours, pid))
        data, fds, _, _ = socket.recv_fds(conn, worker.GO_HEAD, 4)
        data += _recv_exact(conn, worker.GO_HEAD - len(data))
        if len(fds) != 4 or len(data) != worker.GO_HEAD or not data.startswith(worker.GO):
            raise ValueError("not a GO")
        size = int.from_bytes(data[len(worker.GO):len(worker.GO) + 4], "little")
        if size > worker.CALL_LIMIT:
            raise ValueError("too large")
        body = _recv_exact(conn, size)
        if len(body) != size or data[-worker.MAC_SIZE:] != worker.mac(secret, b"go", ours, body):
            raise ValueError("not the client's call")
        umask, argv, env = worker.decode_call(body)
    except (OSError, ValueError):
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        return None
    conn.settimeout(None)
    return umask, argv, env, fds


def _become_and_run(umask: int, argv: list[bytes], env: list[bytes], fds: list[int]) -> int:
    """Become the hook (its descriptors, folder, umask, environment, argv and standard
    streams), then run it as the Python hook would."""
    try:
        for target, fd in enumerate(fds[:3]):
            os.dup2(fd, target)
        os.fchdir(fds[3])
    finally:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
    os.umask(umask)
    os.environb.clear()
    for entry in env:
        key, _, value = entry.partition(b"=")
        if key:
            os.environb[key] = value
    sys.argv = [os.fsdecode(a) for a in argv]
    sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "rb", closefd=False)),
                                 encoding="utf-8", errors="surrogateescape")
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "wb", closefd=False)),
                                  encoding="utf-8", errors="surrogateescape")
    sys.stderr = io.TextIOWrapper(io.BufferedWriter(io.FileIO(2, "wb", closefd=False)),
                                  encoding="utf-8", errors="backslashreplace",
                                  line_buffering=True)
    from smllm import hooks  # noqa: PLC0415 - loaded by preload already

    return hooks.guarded(sys.argv[1:], resident=True)


def forget() -> bool:
    """Forget what the call left: the hooks' per-process caches (:data:`PER_CALL`), the
    environment; collect its garbage. False when it left something a new process would
    not have (a thread): then the child ends rather than serve again."""
    for name, attributes in PER_CALL.items():
        module = sys.modules.get(name)
        for attribute in attributes:
            holder = getattr(module, attribute, None) if module is not None else None
            if holder is not None:
                holder.clear()
    os.environb.clear()
    sys.argv = ["smllm-worker"]
    # the call ran with the cyclic GC off (hooks.main): what it left is all in the youngest
    # generation, which a collection of that generation alone covers
    gc.collect(0)
    return _thread._count() == 0  # no thread but the main one
