"""The native hook client (smllm/worker/client.c, built by smllm.worker.native): it hands a
hook call to a genuine worker over the socket in smllm's key folder, or runs the Python hook
itself, told why. The Python hook here is a script that records how it ran; the workers
are fake ones that speak the protocol with smllm.worker's own helpers."""

from __future__ import annotations

import array
import hashlib
import hmac
import json
import os
import select
import signal
import socket
import stat
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from smllm import hooks, worker
from smllm.base import paths, protected
from smllm.base.errors import InstallError
from smllm.worker import native

KEY = bytes(range(1, 33))
HEX_KEY = KEY.hex()
#: the Python hook: records its arguments, stdin, working folder, umask and any descriptor
#: past 2 it inherited (FALLBACK_LOG), prints a marker, exits FALLBACK_STATUS
FALLBACK_SCRIPT = f"""#!{sys.executable} -IS
import json, os, sys
data = sys.stdin.buffer.read() if sys.stdin else b"(closed)"
mask = os.umask(0)
fds = []
for fd in range(3, 256):
    try:
        os.fstat(fd)
    except OSError:
        continue
    fds.append(fd)
log = os.environ.get("FALLBACK_LOG")
if log:
    with open(log, "w") as fh:
        json.dump({{"argv": sys.argv, "stdin": data.decode("latin-1"), "cwd": os.getcwd(),
                   "umask": mask, "fds": fds}}, fh)
if sys.stdout:
    sys.stdout.write("fallback ran\\n")
sys.exit(int(os.environ.get("FALLBACK_STATUS", "0")))
"""
ACK_WAIT_QUICK = 0.4
DEADLINE_QUICK = 0.3
DENIED = "smllm: the worker lost this call ({}): smllm denies it (fail closed)\n"


@dataclass(frozen=True)
class Clients:
    """The clients built for this module, and the Python hook they run."""

    main: str  # the usual waits, but a long ack wait (a loaded test machine)
    quick: str  # a short ack wait and tiny deadlines
    fallback: str


@pytest.fixture(scope="module")
def clients(tmp_path_factory: pytest.TempPathFactory) -> Clients:
    """Build the clients once for the module, for a fallback script of the test's."""
    base = tmp_path_factory.mktemp("client")
    fallback = base / protected.PYTHON_HOOK
    fallback.write_text(FALLBACK_SCRIPT)
    fallback.chmod(0o755)
    main, quick = base / "smllm-hook", base / "smllm-hook-quick"
    native.build(main, str(fallback), ack_wait_ms=5000)
    native.build(quick, str(fallback), ack_wait_ms=int(ACK_WAIT_QUICK * 1000),
                 deadlines={"PreToolUse": DEADLINE_QUICK}, default_deadline=DEADLINE_QUICK,
                 grace_s=0.0)
    return Clients(str(main), str(quick), str(fallback))


# ------------------------------------------------------------------ helpers


def private_key(folder: Path, text: bytes | None = None) -> Path:
    """smllm's key in ``folder`` (made 0700), the file 0600."""
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)
    path = folder / "journal.key"
    path.write_bytes(HEX_KEY.encode() + b"\n" if text is None else text)
    path.chmod(0o600)
    return path


def base_env(tmp: Path, **extra: str) -> dict[str, str]:
    """A bare environment for the client: PATH, HOME, the fallback's log."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp / "user"),
            "FALLBACK_LOG": str(tmp / "fallback.json"), **extra}


def run(client: str, args: list[str], env: dict[str, str], *, stdin: bytes = b"",
        cwd: Path | None = None, umask: int = -1,
        timeout: float = 20) -> subprocess.CompletedProcess[bytes]:
    """Run the client (killed at ``timeout``, as ``subprocess.run`` does)."""
    return subprocess.run([client, *args], input=stdin, capture_output=True, env=env, cwd=cwd,
                          umask=umask, timeout=timeout, check=False)


def fallback_log(tmp: Path) -> dict[str, object] | None:
    """How the fallback ran, or None when it did not."""
    path = tmp / "fallback.json"
    return json.loads(path.read_text()) if path.exists() else None


def recv_exact(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise EOFError(f"{len(data)} of {n} bytes")
        data += chunk
    return data


def recv_with_fds(conn: socket.socket, n: int) -> tuple[bytes, list[int]]:
    """``n`` bytes and the descriptors that came with them (close-on-exec here)."""
    fds = array.array("i")
    data = b""
    while len(data) < n:
        chunk, ancillary, _, _ = conn.recvmsg(n - len(data), socket.CMSG_SPACE(8 * 4),
                                              socket.MSG_CMSG_CLOEXEC)
        if not chunk:
            raise EOFError(f"{len(data)} of {n} bytes")
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
        data += chunk
    return data, list(fds)


@dataclass
class Session:
    """What a fake worker saw and did on one connection."""

    key: bytes = KEY
    pid: int = 0
    n1: bytes = b""
    n2: bytes = b""
    status: int = 3
    call: tuple[int, list[bytes], list[bytes]] | None = None
    notes: dict[str, object] = field(default_factory=dict)


def hello(conn: socket.socket, s: Session) -> None:
    data = recv_exact(conn, len(worker.HELLO) + worker.NONCE)
    assert worker.HELLO == data[: len(worker.HELLO)]
    s.n1 = data[len(worker.HELLO):]


def ack(conn: socket.socket, s: Session, *, key: bytes | None = None,
        n1: bytes | None = None, flip: int | None = None) -> None:
    """ACK n2 pid MAC (under ``key``, over ``n1``; ``flip``: that bit of the MAC wrong)."""
    s.n2 = os.urandom(worker.NONCE)
    pid8 = (s.pid or os.getpid()).to_bytes(8, "little")
    mac = bytearray(worker.mac(key or s.key, b"ack", s.n1 if n1 is None else n1, s.n2, pid8))
    if flip is not None:
        mac[flip // 8] ^= 1 << (flip % 8)
    conn.sendall(worker.ACK + s.n2 + pid8 + bytes(mac))


def take_call(conn: socket.socket, s: Session) -> list[int]:
    """GO len MAC call: checked and decoded into ``s.call``; the descriptors it carried."""
    head, fds = recv_with_fds(conn, worker.GO_HEAD)
    assert worker.GO == head[:4]
    body, more = recv_with_fds(conn, int.from_bytes(head[4:8], "little"))
    fds += more  # none: the descriptors go with the first send only
    assert hmac.compare_digest(worker.mac(s.key, b"go", s.n2, body), head[8:])
    s.call = worker.decode_call(body)
    return fds


def close_all(fds: list[int]) -> None:
    for fd in fds:
        os.close(fd)


def serve_call(conn: socket.socket, s: Session) -> None:
    """A good worker: runs the call on the descriptors it was handed (stdin to stdout, the
    working folder noted), then DONE with the session's status."""
    hello(conn, s)
    ack(conn, s)
    fds = take_call(conn, s)
    try:
        s.notes["fds"] = len(fds)
        stdin, stdout, _, cwd = fds
        data = b""
        while chunk := os.read(stdin, 65536):
            data += chunk
        os.write(stdout, b"worker ran: " + data)
        st = os.fstat(cwd)
        s.notes["cwd"] = (st.st_dev, st.st_ino)
    finally:
        close_all(fds)
    conn.sendall(worker.DONE + bytes([s.status]))


class Listener:
    """A listener on a socket path; with ``serve``, a thread answers one connection."""

    def __init__(self, path: str, serve: Callable[[socket.socket, Session], None] | None,
                 *, backlog: int = 8, session: Session | None = None) -> None:
        self.path = path
        self.session = session or Session()
        self.error: BaseException | None = None
        self.stop = threading.Event()
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        address, fd = worker.address(path)
        try:
            self.sock.bind(address)
        finally:
            if fd >= 0:
                os.close(fd)
        self.sock.listen(backlog)
        self.serve = serve
        self.thread: threading.Thread | None = None
        if serve is not None:
            self.thread = threading.Thread(target=self._run, daemon=True)
            self.thread.start()

    def _run(self) -> None:
        self.sock.settimeout(0.05)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(None)
            with conn:
                try:
                    assert self.serve is not None
                    self.serve(conn, self.session)
                except BaseException as exc:  # re-raised by done(), in the test
                    self.error = exc
            return

    def idle(self) -> bool:
        """Whether no connection ever came (only without ``serve``)."""
        self.sock.setblocking(False)
        try:
            conn, _ = self.sock.accept()
        except BlockingIOError:
            return True
        conn.close()
        return False

    def close(self) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join(5)
        self.sock.close()

    def done(self) -> Session:
        """The session, once the thread finished (its error raised here)."""
        if self.thread is not None:
            self.thread.join(10)
            assert not self.thread.is_alive()
        if self.error is not None:
            raise self.error
        return self.session


@pytest.fixture
def listen() -> Iterator[Callable[..., Listener]]:
    """Start listeners; every one is closed at the end."""
    made: list[Listener] = []

    def start(path: str, serve: Callable[[socket.socket, Session], None] | None = None,
              **kw: object) -> Listener:
        listener = Listener(path, serve, **kw)  # type: ignore[arg-type]
        made.append(listener)
        return listener

    yield start
    for listener in made:
        listener.close()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """The installed hook's ``--home`` (short: socket paths stay under ADDRESS_MAX), with
    its key."""
    folder = tmp_path / "h"
    folder.mkdir(mode=0o700)
    private_key(folder / "key")
    return folder


def sock_path(clients: Clients, home: Path) -> str:
    return worker.socket_path(str(home / "key"), clients.fallback)


def wait_for_silence(until: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 5
    while not until() and time.monotonic() < deadline:
        time.sleep(0.01)


# ------------------------------------------------------------------ no worker: the Python hook


def test_no_socket_runs_the_python_hook_to_start_a_worker(clients: Clients, home: Path,
                                                           tmp_path: Path) -> None:
    """Without a socket the Python hook runs with ``--worker start``: its stdin intact, its
    stdout and exit status passed through, no descriptor of the client's leaked."""
    cwd = tmp_path / "work"
    cwd.mkdir()
    done = run(clients.main, ["PreToolUse", "--home", str(home)],
               base_env(tmp_path, FALLBACK_STATUS="7"), stdin=b'{"tool": "x"}', cwd=cwd,
               umask=0o027)
    assert (7, b"fallback ran\n", b"") == (done.returncode, done.stdout, done.stderr)
    assert {"argv": [clients.fallback, "PreToolUse", "--home", str(home), "--worker", "start"],
            "stdin": '{"tool": "x"}', "cwd": str(cwd), "umask": 0o027,
            "fds": []} == fallback_log(tmp_path)


def test_stale_socket_runs_the_python_hook_to_start_a_worker(clients: Clients, home: Path,
                                                             tmp_path: Path) -> None:
    """A socket nobody listens on (a dead worker's: ECONNREFUSED) is the same as none."""
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(sock_path(clients, home))
    stale.close()
    done = run(clients.main, ["Stop", "--home", str(home)], base_env(tmp_path))
    assert 0 == done.returncode
    log = fallback_log(tmp_path)
    assert log is not None
    assert ["--worker", "start"] == log["argv"][-2:]  # type: ignore[index]


@pytest.mark.parametrize(("args", "env"), [
    (["PreToolUse", "--home", "{home}"], {"SMLLM_WORKER": "0"}),
    (["PreToolUse", "--harness", "codex", "--home", "{home}"], {}),
    (["PreToolUse", "--home", "{home}", "--harness", "codex"], {}),
    (["PreToolUse"], {}),
    (["PreToolUse", "--home"], {}),
    (["--home", "{home}"], {}),
    (["PreToolUse", "--home", "{home}", "extra"], {}),
    ([], {}),
], ids=["switched-off", "harness", "harness-last", "no-home", "home-without-value",
        "no-event", "home-not-last", "no-arguments"])
def test_python_hook_at_once(clients: Clients, home: Path, tmp_path: Path,
                             listen: Callable[..., Listener], args: list[str],
                             env: dict[str, str]) -> None:
    """``SMLLM_WORKER=0``, another host's hook, or arguments that do not end in ``--home X``:
    the Python hook runs with the same arguments, and the worker never hears of it."""
    listener = listen(sock_path(clients, home))
    argv = [a.replace("{home}", str(home)) for a in args]
    done = run(clients.main, argv, base_env(tmp_path, **env), stdin=b"in", umask=0o077)
    assert (0, b"fallback ran\n") == (done.returncode, done.stdout)
    assert {"argv": [clients.fallback, *argv], "stdin": "in", "cwd": os.getcwd(),
            "umask": 0o077, "fds": []} == fallback_log(tmp_path)
    assert listener.idle()


# ------------------------------------------------------------------ a good worker


@pytest.mark.parametrize("padding", [0, 1, 9, 64, 200])
def test_good_worker_runs_the_call(clients: Clients, home: Path, tmp_path: Path,
                                   listen: Callable[..., Listener], padding: int) -> None:
    """A genuine worker gets the call, MACed (SHA-256 blocks of every fill), with the
    hook's descriptors, arguments, environment and umask; its status and output are the
    hook's, and the Python hook never runs."""
    listener = listen(sock_path(clients, home), serve_call)
    cwd = tmp_path / "work dir"
    cwd.mkdir()
    env = base_env(tmp_path, SMLLM_TEST_VAR="é=" + "x" * padding, SMLLM_WORKER="1")
    done = run(clients.main, ["PreToolUse", "--home", str(home)], env, stdin=b"payload",
               cwd=cwd, umask=0o027)
    s = listener.done()
    assert (3, b"worker ran: payload", b"") == (done.returncode, done.stdout, done.stderr)
    assert s.call is not None
    umask, argv, entries = s.call
    assert (0o027, [os.fsencode(clients.fallback), b"PreToolUse", b"--home", os.fsencode(home)],
            sorted(os.fsencode(f"{k}={v}") for k, v in env.items())) == (umask, argv,
                                                                         sorted(entries))
    st = cwd.stat()
    assert (4, (st.st_dev, st.st_ino)) == (s.notes["fds"], s.notes["cwd"])
    assert fallback_log(tmp_path) is None


def test_big_call_is_sent_whole(clients: Clients, home: Path, tmp_path: Path,
                                listen: Callable[..., Listener]) -> None:
    """A call of 800 KB (many sends, the worker reading as they come) arrives whole, the
    descriptors with its first bytes only; the worker's status is the hook's."""
    listener = listen(sock_path(clients, home), serve_call, session=Session(status=0))
    big = {f"BIG{i}": "b" * 100_000 for i in range(8)}
    done = run(clients.main, ["Stop", "--home", str(home)], base_env(tmp_path, **big))
    s = listener.done()
    assert (0, b"worker ran: ", 4) == (done.returncode, done.stdout, s.notes["fds"])
    assert s.call is not None
    assert set(s.call[2]) >= {f"{k}={v}".encode() for k, v in big.items()}


def test_call_over_the_limit_goes_to_the_python_hook(clients: Clients, home: Path,
                                                     tmp_path: Path,
                                                     listen: Callable[..., Listener]) -> None:
    """A call over CALL_LIMIT is never sent: the Python hook runs it, plain."""

    def no_go(conn: socket.socket, s: Session) -> None:
        hello(conn, s)
        ack(conn, s)
        s.notes["after"] = conn.recv(1)

    listener = listen(sock_path(clients, home), no_go)
    big = {f"BIG{i}": "b" * 100_000 for i in range(11)}
    done = run(clients.main, ["Stop", "--home", str(home)], base_env(tmp_path, **big))
    assert (0, b"fallback ran\n") == (done.returncode, done.stdout)
    assert b"" == listener.done().notes["after"]
    log = fallback_log(tmp_path)
    assert log is not None
    assert [clients.fallback, "Stop", "--home", str(home)] == log["argv"]


LAUNCHER = """
import ctypes, json, os, sys
entries = [e.encode() for e in json.loads(os.environ["LAUNCH_ENV"])]
args = [a.encode() for a in sys.argv[1:]]
libc = ctypes.CDLL(None, use_errno=True)
argv = (ctypes.c_char_p * (len(args) + 1))(*args, None)
envp = (ctypes.c_char_p * (len(entries) + 1))(*entries, None)
libc.execve(args[0], argv, envp)
sys.exit(f"execve: {os.strerror(ctypes.get_errno())}")
"""


def test_environment_entries_without_a_value_are_left_out(
        clients: Clients, home: Path, tmp_path: Path,
        listen: Callable[..., Listener]) -> None:
    """An environment entry without ``=`` (no variable; the worker would refuse the whole
    call for it) is left out of the call, as os.environ leaves it out."""
    listener = listen(sock_path(clients, home), serve_call)
    entries = ["NOT-A-VARIABLE", "A=1", "=odd", f"PATH={os.environ.get('PATH', '')}"]
    done = subprocess.run([sys.executable, "-c", LAUNCHER, clients.main, "Stop", "--home",
                           str(home)], env={"LAUNCH_ENV": json.dumps(entries)},
                          capture_output=True, timeout=20, check=False)
    s = listener.done()
    assert (3, b"") == (done.returncode, done.stderr)
    assert s.call is not None
    assert [b"A=1", b"=odd", os.fsencode(entries[-1])] == s.call[2]


@pytest.mark.parametrize("closed", [0, 1, 2])
def test_closed_standard_descriptor_runs_the_python_hook(
        clients: Clients, home: Path, tmp_path: Path, listen: Callable[..., Listener],
        closed: int) -> None:
    """The hook's stdin, stdout or stderr closed: the Python hook runs the call, plain,
    before the client opens anything (its own descriptors would take the number)."""
    listener = listen(sock_path(clients, home))
    done = subprocess.run(["/bin/sh", "-c", f'exec "$0" "$@" {closed}>&-', clients.main,
                           "Stop", "--home", str(home)], env=base_env(tmp_path), input=b"in",
                          capture_output=True, timeout=20, check=False)
    log = fallback_log(tmp_path)
    assert log is not None
    assert (0, [clients.fallback, "Stop", "--home", str(home)], []) == (
        done.returncode, log["argv"], log["fds"])
    assert listener.idle()


@pytest.mark.parametrize("stall", [False, True], ids=["closed", "stalled"])
def test_call_not_sent_whole_runs_the_python_hook(
        clients: Clients, home: Path, tmp_path: Path, listen: Callable[..., Listener],
        stall: bool) -> None:
    """A worker that stops reading the call (closed, or stalled for the ack wait) has not
    got it: the Python hook runs it, plain, and inherits nothing of the client's."""

    def part(conn: socket.socket, s: Session) -> None:
        hello(conn, s)
        ack(conn, s)
        head, fds = recv_with_fds(conn, worker.GO_HEAD)
        close_all(fds)
        s.notes["length"] = int.from_bytes(head[4:8], "little")
        recv_exact(conn, 1000)
        if stall:
            waiter = select.poll()  # until the client goes (unread bytes left)
            waiter.register(conn, select.POLLRDHUP)
            waiter.poll(10_000)
            s.notes["end"] = time.monotonic()

    listener = listen(sock_path(clients, home), part)
    big = {f"BIG{i}": "b" * 100_000 for i in range(8)}
    start = time.monotonic()
    done = run(clients.quick, ["Stop", "--home", str(home)], base_env(tmp_path, **big),
               stdin=b"in", umask=0o027)
    s = listener.done()
    assert s.notes["length"] > 800_000  # type: ignore[operator]
    if stall:
        assert ACK_WAIT_QUICK <= s.notes["end"] - start < ACK_WAIT_QUICK + 3  # type: ignore[operator]
    log = fallback_log(tmp_path)
    assert log is not None
    assert (0, b"fallback ran\n", [clients.fallback, "Stop", "--home", str(home)], "in",
            0o027, []) == (done.returncode, done.stdout, log["argv"], log["stdin"],
                           log["umask"], log["fds"])


# ------------------------------------------------------------------ whatever else listens


def garbage(conn: socket.socket, s: Session) -> None:
    hello(conn, s)
    conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")


def garbage_then_silence(conn: socket.socket, s: Session) -> None:
    hello(conn, s)
    conn.sendall(b"AX")
    conn.recv(1)


def wrong_key(conn: socket.socket, s: Session) -> None:
    hello(conn, s)
    ack(conn, s, key=bytes(32))


def replayed(conn: socket.socket, s: Session) -> None:
    hello(conn, s)
    ack(conn, s, n1=bytes(32))


def flipped(bit: int) -> Callable[[socket.socket, Session], None]:
    def serve(conn: socket.socket, s: Session) -> None:
        hello(conn, s)
        ack(conn, s, flip=bit)
        s.notes["after"] = conn.recv(1)

    return serve


@pytest.mark.parametrize("serve", [garbage, garbage_then_silence, wrong_key, replayed,
                                   flipped(0), flipped(129), flipped(255)],
                         ids=["garbage", "garbage-then-silence", "wrong-key", "replayed",
                              "mac-bit-0", "mac-bit-129", "mac-bit-255"])
def test_foreign_listener(clients: Clients, home: Path, tmp_path: Path,
                          listen: Callable[..., Listener],
                          serve: Callable[[socket.socket, Session], None]) -> None:
    """A listener that does not answer as smllm's worker (under smllm's key, for this
    nonce) gets nothing: the Python hook runs the call with ``--worker foreign``, at once."""
    listener = listen(sock_path(clients, home), serve)
    start = time.monotonic()
    done = run(clients.main, ["PreToolUse", "--home", str(home)], base_env(tmp_path),
               stdin=b"secret")
    assert time.monotonic() - start < 4  # not the ack wait (5 s)
    s = listener.done()
    assert (0, b"fallback ran\n") == (done.returncode, done.stdout)
    log = fallback_log(tmp_path)
    assert log is not None
    assert ([clients.fallback, "PreToolUse", "--home", str(home), "--worker", "foreign"],
            "secret", []) == (log["argv"], log["stdin"], log["fds"])
    assert s.notes.get("after", b"") == b""  # no GO
    assert os.path.exists(sock_path(clients, home))


@pytest.mark.parametrize("long", [False, True], ids=["short-path", "long-path"])
def test_silent_listener_is_retired(clients: Clients, tmp_path_factory: pytest.TempPathFactory,
                                    tmp_path: Path, listen: Callable[..., Listener],
                                    long: bool) -> None:
    """A listener that accepts and never answers (a stopped worker): after the ack wait the
    client removes its socket and the Python hook runs with ``--worker start``."""
    base = tmp_path_factory.mktemp("s")
    here = base / ("p" * 80 if long else "h")
    private_key(here / "key")
    path = sock_path(clients, here)
    assert long == (len(path) >= worker.ADDRESS_MAX)

    def silent(conn: socket.socket, s: Session) -> None:
        s.notes["after"] = conn.recv(1000)  # the HELLO
        s.notes["end"] = conn.recv(1)

    listener = listen(path, silent)
    start = time.monotonic()
    done = run(clients.quick, ["Stop", "--home", str(here)], base_env(tmp_path))
    took = time.monotonic() - start
    listener.done()
    assert ACK_WAIT_QUICK <= took < ACK_WAIT_QUICK + 3
    assert (0, b"fallback ran\n") == (done.returncode, done.stdout)
    log = fallback_log(tmp_path)
    assert log is not None
    assert (["--worker", "start"], []) == (log["argv"][-2:], log["fds"])  # type: ignore[index]
    assert not os.path.lexists(path)


@pytest.mark.parametrize("answer", [b"", b"ACK2" + bytes(20)], ids=["closed", "short-ack"])
def test_turned_away_runs_the_python_hook(clients: Clients, home: Path, tmp_path: Path,
                                          listen: Callable[..., Listener],
                                          answer: bytes) -> None:
    """A connection closed before a whole ACK (a busy or reloading worker): the Python hook
    runs the call, plain (no worker to start, nothing foreign)."""

    def turn_away(conn: socket.socket, s: Session) -> None:
        if answer:
            hello(conn, s)
            conn.sendall(answer)

    listener = listen(sock_path(clients, home), turn_away)
    done = run(clients.main, ["PreToolUse", "--home", str(home)], base_env(tmp_path),
               stdin=b"x")
    listener.done()
    assert (0, b"fallback ran\n") == (done.returncode, done.stdout)
    log = fallback_log(tmp_path)
    assert log is not None
    assert ([clients.fallback, "PreToolUse", "--home", str(home)], "x") == (log["argv"],
                                                                           log["stdin"])


def test_full_backlog_runs_the_python_hook(clients: Clients, home: Path, tmp_path: Path,
                                           listen: Callable[..., Listener]) -> None:
    """A worker whose backlog is full (EAGAIN): the Python hook runs the call, plain, at once."""
    listener = listen(sock_path(clients, home), None, backlog=1)
    queued: list[socket.socket] = []
    try:
        while True:
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.setblocking(False)
            queued.append(c)
            try:
                c.connect(sock_path(clients, home))
            except BlockingIOError:
                break
            assert len(queued) < 100
        start = time.monotonic()
        done = run(clients.main, ["Stop", "--home", str(home)], base_env(tmp_path), timeout=5)
        assert time.monotonic() - start < 2
    finally:
        for c in queued:
            c.close()
    assert (0, b"fallback ran\n") == (done.returncode, done.stdout)
    log = fallback_log(tmp_path)
    assert log is not None
    assert [clients.fallback, "Stop", "--home", str(home)] == log["argv"]
    listener.close()


def test_bad_pid_in_ack_runs_the_python_hook(clients: Clients, home: Path, tmp_path: Path,
                                             listen: Callable[..., Listener]) -> None:
    """An ACK, MACed right, naming no child's pid (0, 1 or not a pid_t) hands nothing over:
    the client must never be able to kill(-1) or a process group."""
    for pid in (1, -1 & (2**64 - 1), 2**40):

        def bad_pid(conn: socket.socket, s: Session, pid: int = pid) -> None:
            hello(conn, s)
            s.n2 = os.urandom(32)
            pid8 = pid.to_bytes(8, "little")
            conn.sendall(worker.ACK + s.n2 + pid8 + worker.mac(KEY, b"ack", s.n1, s.n2, pid8))
            s.notes["after"] = conn.recv(1)

        listener = listen(sock_path(clients, home), bad_pid)
        done = run(clients.main, ["Stop", "--home", str(home)], base_env(tmp_path))
        assert (0, b"fallback ran\n", b"") == (done.returncode, done.stdout,
                                               listener.done().notes["after"])
        listener.close()
        os.unlink(sock_path(clients, home))


# ------------------------------------------------------------------ a call lost after GO


def take_and_close(conn: socket.socket, s: Session) -> None:
    hello(conn, s)
    ack(conn, s)
    close_all(take_call(conn, s))


def take_and_babble(conn: socket.socket, s: Session) -> None:
    take_and_close(conn, s)
    conn.sendall(b"NOPE!")


@pytest.mark.parametrize(("serve", "why"), [(take_and_close, "the connection closed"),
                                            (take_and_babble, "a malformed answer")],
                         ids=["closed", "malformed"])
@pytest.mark.parametrize(("event", "status"), [("PreToolUse", 2), ("Stop", 0)])
def test_lost_call_is_never_run_again(clients: Clients, home: Path, tmp_path: Path,
                                      listen: Callable[..., Listener],
                                      serve: Callable[[socket.socket, Session], None], why: str,
                                      event: str, status: int) -> None:
    """A worker that took the call and gave no DONE: the Python hook does not run it again;
    the gating hook denies (exit 2, the reason on stderr), an observing one exits 0."""
    listener = listen(sock_path(clients, home), serve)
    done = run(clients.main, [event, "--home", str(home)], base_env(tmp_path))
    listener.done()
    line = (DENIED.format(why) if status else f"smllm: the worker lost this call ({why})\n")
    assert (status, b"", line.encode()) == (done.returncode, done.stdout, done.stderr)
    assert fallback_log(tmp_path) is None


@pytest.mark.parametrize(("event", "status"), [("PreToolUse", 2), ("SessionStart", 0)])
def test_deadline_kills_the_child(clients: Clients, home: Path, tmp_path: Path,
                                  listen: Callable[..., Listener], event: str,
                                  status: int) -> None:
    """No DONE by the hook's deadline: the child named in the ACK is killed (SIGKILL) and
    the call is lost: denied by the gating hook."""
    sleeper = subprocess.Popen(["sleep", "30"])
    try:

        def hang(conn: socket.socket, s: Session) -> None:
            hello(conn, s)
            ack(conn, s)
            close_all(take_call(conn, s))
            s.notes["end"] = conn.recv(1)

        listener = listen(sock_path(clients, home), hang, session=Session(pid=sleeper.pid))
        start = time.monotonic()
        done = run(clients.quick, [event, "--home", str(home)], base_env(tmp_path))
        took = time.monotonic() - start
        assert -signal.SIGKILL == sleeper.wait(5)
        listener.done()
    finally:
        if sleeper.poll() is None:
            os.kill(sleeper.pid, signal.SIGKILL)
            sleeper.wait()
    assert DEADLINE_QUICK <= took < DEADLINE_QUICK + 3
    why = "no answer by the hook's deadline"
    line = DENIED.format(why) if status else f"smllm: the worker lost this call ({why})\n"
    assert (status, line.encode()) == (done.returncode, done.stderr)
    assert fallback_log(tmp_path) is None


# ------------------------------------------------------------------ the key folder and key


FOLDER_CASES = {
    "home-absolute": ("{tmp}/h", {"SMLLM_HOME": "{tmp}/elsewhere"}),
    "platform-xdg": ("platform", {"XDG_STATE_HOME": "{tmp}/state",
                                  "SMLLM_HOME": "{tmp}/elsewhere"}),
    "platform-xdg-relative": ("platform", {"XDG_STATE_HOME": "rel/state"}),
    "platform-xdg-padded": ("platform", {"XDG_STATE_HOME": " \t{tmp}/state\n\x1f"}),
    "platform-xdg-trailing-slash": ("platform", {"XDG_STATE_HOME": "{tmp}/state/"}),
    "platform-xdg-dots": ("platform", {"XDG_STATE_HOME": "{tmp}/state/../state2"}),
    "platform-xdg-empty": ("platform", {"XDG_STATE_HOME": ""}),
    "platform-home-trailing-slash": ("platform", {"HOME": "{tmp}/user//"}),
    "relative-home-argument": ("rel", {"XDG_STATE_HOME": "{tmp}/state"}),
    "empty-home-argument": ("", {}),
}


def python_key_folder(monkeypatch: pytest.MonkeyPatch, home_arg: str,
                      env: dict[str, str]) -> str:
    """smllm's key folder as the Python hook finds it under ``env`` and ``--home``."""
    for var in ("HOME", "XDG_STATE_HOME", "SMLLM_HOME"):
        if var in env:
            monkeypatch.setenv(var, env[var])
        else:
            monkeypatch.delenv(var, raising=False)
    hooks.pin_home(home_arg)
    return paths.key_root()


@pytest.mark.parametrize("case", list(FOLDER_CASES))
def test_key_folder_is_the_python_hooks(clients: Clients, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch,
                                        listen: Callable[..., Listener], case: str) -> None:
    """The client finds the key and the worker where the Python hook does
    (paths.key_root() once pin_home applied ``--home``)."""
    home_arg, raw = FOLDER_CASES[case]
    env = base_env(tmp_path, **{k: v.replace("{tmp}", str(tmp_path)) for k, v in raw.items()})
    home_arg = home_arg.replace("{tmp}", str(tmp_path))
    (tmp_path / "state").mkdir()
    folder = python_key_folder(monkeypatch, home_arg, env)
    assert folder.startswith(str(tmp_path))
    private_key(Path(folder))
    listener = listen(worker.socket_path(folder, clients.fallback), serve_call)
    done = run(clients.main, ["Stop", "--home", home_arg], env, cwd=tmp_path)
    listener.done()
    assert (3, b"worker ran: ") == (done.returncode, done.stdout)


#: (--home, environment, a folder a client that read it naively would go to)
UNSURE_CASES = {
    "home-trailing-slash": ("{tmp}/h/", {}, None),
    "home-double-slash": ("{tmp}//h", {}, None),
    "home-dot": ("{tmp}/./h", {}, None),
    "home-dot-dot": ("{tmp}/x/../h", {}, "{tmp}/deep/h/key"),  # x: a link to deep/inner
    "home-ends-dot": ("{tmp}/h/.", {}, None),
    "home-ends-dot-dot": ("{tmp}/h/x/..", {}, None),
    "platform-xdg-nbsp-before": ("platform", {"XDG_STATE_HOME": "\u00a0{tmp}/state"},
                                 "{tmp}/user/.local/state/smllm/key"),
    "platform-xdg-nbsp-after": ("platform", {"XDG_STATE_HOME": "{tmp}/state\u00a0"},
                                "{tmp}/state\u00a0/smllm/key"),
    "platform-user-home-relative": ("platform", {"HOME": "user"}, None),
    "platform-user-home-empty": ("platform", {"HOME": ""}, "/.local/state/smllm/key"),
}


@pytest.mark.parametrize("case", list(UNSURE_CASES))
def test_key_folder_unsure_runs_the_python_hook(clients: Clients, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                listen: Callable[..., Listener],
                                                case: str) -> None:
    """Where the client cannot be sure of the Python hook's folder (a ``--home`` that is not
    normal, a non-ASCII space around ``$XDG_STATE_HOME``, no usable ``$HOME``), the Python
    hook runs the call, plain, and no worker is asked."""
    home_arg, raw, naive = UNSURE_CASES[case]
    env = base_env(tmp_path, **{k: v.replace("{tmp}", str(tmp_path)) for k, v in raw.items()})
    home_arg = home_arg.replace("{tmp}", str(tmp_path))
    for sub in ("h", "h/x", "state", "deep/inner"):
        (tmp_path / sub).mkdir(parents=True)
    (tmp_path / "x").symlink_to(tmp_path / "deep/inner")
    listeners = []
    for folder in (python_key_folder(monkeypatch, home_arg, env),
                   (naive or "").replace("{tmp}", str(tmp_path))):
        if folder.startswith(str(tmp_path)):  # not a relative HOME's folder, nor /.local
            private_key(Path(folder))
            listeners.append(listen(worker.socket_path(folder, clients.fallback)))
    done = run(clients.main, ["Stop", "--home", home_arg], env, cwd=tmp_path)
    assert (0, b"fallback ran\n") == (done.returncode, done.stdout)
    log = fallback_log(tmp_path)
    assert log is not None
    assert [clients.fallback, "Stop", "--home", home_arg] == log["argv"]
    assert all(listener.idle() for listener in listeners)


def test_home_unset_runs_the_python_hook(clients: Clients, tmp_path: Path) -> None:
    """No ``$HOME`` (nor ``$XDG_STATE_HOME``) with the platform's folders: the Python hook
    runs the call, plain."""
    env = base_env(tmp_path)
    del env["HOME"]
    done = run(clients.main, ["Stop", "--home", "platform"], env)
    log = fallback_log(tmp_path)
    assert log is not None
    assert (0, [clients.fallback, "Stop", "--home", "platform"]) == (done.returncode,
                                                                      log["argv"])


@pytest.mark.parametrize("length", [99, 100, 107, 108, 160])
def test_long_socket_path_is_reached(clients: Clients, tmp_path_factory: pytest.TempPathFactory,
                                     tmp_path: Path, listen: Callable[..., Listener],
                                     length: int) -> None:
    """A socket path of ADDRESS_MAX bytes or more (an AF_UNIX address holds 108) is reached
    through its folder's descriptor."""
    base = tmp_path_factory.mktemp("L")
    pad = length - len(sock_path(clients, base / "x")) + 1
    if pad < 1:
        pytest.skip("the temporary folder is too long for this length")
    here = base / ("q" * pad)
    assert length == len(sock_path(clients, here))
    private_key(here / "key")
    listener = listen(sock_path(clients, here), serve_call, session=Session(status=255))
    done = run(clients.main, ["Stop", "--home", str(here)], base_env(tmp_path))
    listener.done()
    assert 255 == done.returncode


def key_link(folder: Path) -> None:
    real = folder.parent / "real.key"
    real.write_text(HEX_KEY + "\n")
    real.chmod(0o600)
    (folder / "journal.key").unlink()
    (folder / "journal.key").symlink_to(real)


def key_folder_instead(folder: Path) -> None:
    (folder / "journal.key").unlink()
    (folder / "journal.key").mkdir()


def key_fifo(folder: Path) -> None:
    (folder / "journal.key").unlink()
    os.mkfifo(folder / "journal.key", 0o600)


def key_missing(folder: Path) -> None:
    (folder / "journal.key").unlink()


def key_text(text: bytes) -> Callable[[Path], None]:
    def write(folder: Path) -> None:
        (folder / "journal.key").write_bytes(text)

    return write


@pytest.mark.parametrize("spoil", [
    key_missing, key_link, key_folder_instead, key_fifo, key_text(HEX_KEY[:63].encode()),
    key_text(HEX_KEY.encode() + b"0"), key_text(HEX_KEY.upper().encode()),
    key_text(HEX_KEY[:62].encode() + b"g0"), key_text(b""),
    key_text(HEX_KEY.encode() + b" " * 200), key_text(b"\0" + HEX_KEY.encode()),
    key_text(HEX_KEY[:32].encode() + b" " + HEX_KEY[32:].encode()),
], ids=["missing", "link", "folder", "fifo", "63-digits", "65-digits", "upper-case",
        "not-hex", "empty", "over-256-bytes", "nul", "space-inside"])
def test_bad_key_runs_the_python_hook(clients: Clients, home: Path, tmp_path: Path,
                                      listen: Callable[..., Listener],
                                      spoil: Callable[[Path], None]) -> None:
    """A key file that is missing, not a regular file (never followed, never waited on) or
    not 64 lowercase hex digits: the Python hook runs the call, plain; no worker is asked."""
    spoil(home / "key")
    listener = listen(sock_path(clients, home))
    done = run(clients.main, ["PreToolUse", "--home", str(home)], base_env(tmp_path),
               stdin=b"x", timeout=5)
    log = fallback_log(tmp_path)
    assert log is not None
    assert (0, [clients.fallback, "PreToolUse", "--home", str(home)]) == (done.returncode,
                                                                           log["argv"])
    assert listener.idle()


def test_key_with_spaces_around_is_read(clients: Clients, home: Path, tmp_path: Path,
                                        listen: Callable[..., Listener]) -> None:
    """ASCII spaces around the key's digits (as keyed._parse strips them), up to 256 bytes."""
    text = b" \t\r\n\x0b\x0c" + HEX_KEY.encode() + b"\n" * 186
    assert 256 == len(text)
    key_text(text)(home / "key")
    listener = listen(sock_path(clients, home), serve_call)
    done = run(clients.main, ["Stop", "--home", str(home)], base_env(tmp_path))
    listener.done()
    assert 3 == done.returncode


# ------------------------------------------------------------------ SHA-256 and HMAC

HARNESS = r"""
#define main smllm_client_main
#include "client.c"
#undef main

/* stdin: records (u32 key length, key, u32 message length, message, u32 chunk); stdout:
 * SHA-256(message) and HMAC-SHA256(key, message), the message fed in chunks */
static int take(void *p, size_t n) { return fread(p, 1, n, stdin) == n; }

int main(void)
{
    uint32_t klen, mlen, chunk;
    while (take(&klen, 4)) {
        unsigned char *k = malloc(klen + 1), *msg, digest[32];
        size_t at;
        sha256_ctx c;
        hmac_ctx m;
        if (!take(k, klen) || !take(&mlen, 4) || !(msg = malloc(mlen + 1)) ||
            !take(msg, mlen) || !take(&chunk, 4))
            return 1;
        sha256_init(&c);
        hmac_init(&m, k, klen);
        for (at = 0; at < mlen; at += chunk) {
            size_t n = mlen - at < chunk ? mlen - at : chunk;
            sha256_update(&c, msg + at, n);
            hmac_update(&m, msg + at, n);
        }
        sha256_final(&c, digest);
        fwrite(digest, 1, 32, stdout);
        hmac_final(&m, digest);
        fwrite(digest, 1, 32, stdout);
        printf("%d", same_mac(digest, digest));
        free(k), free(msg);
    }
    return 0;
}
"""


def compile_with(tmp: Path, source: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """``source`` compiled as the client is (-Werror and more warnings than the install's)."""
    header = tmp / "config.h"
    header.write_text(native.header("/x/smllm-hook.py") + '#define SMLLM_STAMP "0"\n')
    cc = native.compiler()
    assert cc is not None
    return subprocess.run([cc, *native.FLAGS, "-Werror", "-Wpedantic", "-Wshadow",
                           "-Wconversion", *extra, "-include", str(header), "-I",
                           str(Path(native.__file__).parent), "-o", str(tmp / "out"),
                           str(source)], capture_output=True, text=True, check=False)


def test_client_compiles_without_a_warning(tmp_path: Path) -> None:
    """client.c compiles with -Werror under -Wall -Wextra -Wpedantic -Wshadow -Wconversion."""
    done = compile_with(tmp_path, Path(native.__file__).parent / native.SOURCE)
    assert (0, "") == (done.returncode, done.stderr)


def test_sha256_and_hmac_agree_with_python(tmp_path: Path) -> None:
    """The client's SHA-256 and HMAC-SHA256 give Python's digests for keys and messages of
    every length around the block size, fed whole or in pieces."""
    (tmp_path / "harness.c").write_text(HARNESS)
    done = compile_with(tmp_path, tmp_path / "harness.c", "-Wno-unused-function")
    assert (0, "") == (done.returncode, done.stderr)
    cases = [(os.urandom(k), os.urandom(m), chunk)
             for k in (0, 1, 31, 32, 63, 64, 65, 200)
             for m in (0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000, 70_000)
             for chunk in (1, 13, 64, 1 << 20) if m < 2000 or chunk > 1]
    feed = b"".join(struct.pack("<I", len(k)) + k + struct.pack("<I", len(m)) + m +
                    struct.pack("<I", chunk) for k, m, chunk in cases)
    out = subprocess.run([str(tmp_path / "out")], input=feed, capture_output=True, timeout=60,
                         check=True).stdout
    expected = b"".join(hashlib.sha256(m).digest() + hmac.digest(k, m, "sha256") + b"1"
                        for k, m, _ in cases)
    assert expected == out


# ------------------------------------------------------------------ the build itself


def test_build_names_the_python_hook_exactly(tmp_path: Path, listen: Callable[..., Listener],
                                            home: Path) -> None:
    """A Python hook whose path holds quotes, backslashes, ``??/``, a newline and bytes that
    are not UTF-8 is the one run, and names the socket (its tag); the build is current for
    it only, 0755, put in place by one rename."""
    folder = tmp_path / 'we"ird\\??' / " é\n\udcff"
    folder.mkdir(parents=True)
    fallback = folder / protected.PYTHON_HOOK
    fallback.write_text(FALLBACK_SCRIPT)
    fallback.chmod(0o755)
    out = tmp_path / "bin" / "smllm-hook"
    out.parent.mkdir()
    out.write_text("old")
    native.build(out, str(fallback))
    assert (0o755, ["smllm-hook"]) == (stat.S_IMODE(out.stat().st_mode),
                                       os.listdir(out.parent))
    assert (True, False) == (native.is_current(out, str(fallback)),
                             native.is_current(out, str(tmp_path / protected.PYTHON_HOOK)))
    done = run(str(out), ["Stop", "--home", str(home)], base_env(tmp_path, SMLLM_WORKER="0"))
    log = fallback_log(tmp_path)
    assert log is not None
    assert (0, [str(fallback), "Stop", "--home", str(home)]) == (done.returncode, log["argv"])
    listener = listen(worker.socket_path(str(home / "key"), str(fallback)), serve_call)
    done = run(str(out), ["Stop", "--home", str(home)], base_env(tmp_path))
    s = listener.done()
    assert s.call is not None
    assert (3, os.fsencode(fallback)) == (done.returncode, s.call[1][0])


def test_is_current_only_for_this_build(clients: Clients, tmp_path: Path) -> None:
    """A build with other settings, a file without the stamp or no file is not current."""
    (tmp_path / "plain").write_bytes(b"\x7fELF" + b"\0" * 100)
    assert (False, False, False) == (native.is_current(clients.main, clients.fallback),
                                     native.is_current(tmp_path / "plain", clients.fallback),
                                     native.is_current(tmp_path / "none", clients.fallback))


def test_python_hook_that_cannot_start(tmp_path: Path, home: Path) -> None:
    """A Python hook that cannot be run: the gating hook denies (exit 2, why on stderr), an
    observing one exits 0 quietly."""
    missing = tmp_path / "gone" / protected.PYTHON_HOOK
    out = tmp_path / "smllm-hook"
    native.build(out, str(missing))
    denied = run(str(out), ["PreToolUse", "--home", str(home)], base_env(tmp_path))
    quiet = run(str(out), ["Stop", "--home", str(home)], base_env(tmp_path))
    assert (2, b"", f"smllm hook could not start ({missing}: No such file or directory): "
                    "the call is denied\n".encode()) == (denied.returncode, denied.stdout,
                                                         denied.stderr)
    assert (0, b"", b"") == (quiet.returncode, quiet.stdout, quiet.stderr)


def test_compiler_failure_is_an_install_error(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A compiler that fails: InstallError with what it said, and nothing at ``out``."""
    cc = tmp_path / "broken-cc"
    cc.write_text("#!/bin/sh\necho 'client.c:1: boom' >&2\nexit 1\n")
    cc.chmod(0o755)
    monkeypatch.setenv("CC", str(cc))
    out = tmp_path / "smllm-hook"
    with pytest.raises(InstallError) as caught:
        native.build(out, "/x/smllm-hook.py")
    assert (f"could not build the native hook client with {cc} (exit status 1): "
            "client.c:1: boom (set CC to a working C compiler, or install gcc and libc6-dev)",
            ["broken-cc"]) == (str(caught.value), os.listdir(tmp_path))


def test_compiler_choice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``$CC`` when it is found, else cc, gcc or clang; None without any."""
    cc = tmp_path / "my-cc"
    cc.write_text("#!/bin/sh\n")
    cc.chmod(0o755)
    monkeypatch.setenv("CC", str(cc))
    chosen = native.compiler()
    monkeypatch.setenv("CC", "no-such-cc")
    fallen_back = native.compiler()
    monkeypatch.delenv("CC")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(InstallError) as caught:
        native.build(tmp_path / "out", "/x/smllm-hook.py")
    assert (str(cc), True, None, False) == (
        chosen, fallen_back is not None and Path(fallen_back).name in {"cc", "gcc", "clang"},
        native.compiler(), native.is_current(cc, "/x/smllm-hook.py"))
    assert ("no C compiler to build the native hook client (install gcc and libc6-dev, or set "
            "CC)") == str(caught.value)


def test_header_is_generated_from_the_python_modules() -> None:
    """The header takes the protocol and the hooks' tables from the Python modules."""
    text = native.header("/venv/bin/smllm-hook.py")
    assert [
        '#define SMLLM_FALLBACK "/venv/bin/smllm-hook.py"',
        f'#define SMLLM_TAG "{worker.tag("/venv/bin/smllm-hook.py")}"',
        "#define SMLLM_ACK_WAIT_MS 1000",
        "#define SMLLM_GRACE_S 5.0",
        "#define SMLLM_DEFAULT_DEADLINE_S 20.0",
        '#define SMLLM_DEADLINES {"PermissionRequest", 270.0}, {"PreToolUse", 270.0},',
        '#define SMLLM_GATING "PreToolUse",',
        '#define SMLLM_HELLO "smllm-worker-2\\012"',
        '#define SMLLM_DOMAIN "smllm-worker-v2\\000"',
    ] == [line for line in text.splitlines() if line.split(" ")[1:2] and line.split(" ")[1] in {
        "SMLLM_FALLBACK", "SMLLM_TAG", "SMLLM_ACK_WAIT_MS", "SMLLM_GRACE_S",
        "SMLLM_DEFAULT_DEADLINE_S", "SMLLM_DEADLINES", "SMLLM_GATING", "SMLLM_HELLO",
        "SMLLM_DOMAIN"}]
    with pytest.raises(ValueError, match="absolute"):
        native.header("smllm-hook.py")

