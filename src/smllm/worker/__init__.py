"""The resident worker: a per-user process that keeps smllm loaded and answers Claude Code's
hooks through a small native client, so a hook costs neither a Python start nor smllm's
imports.

The parts:

* **the client** (``client.c``, built by ``smllm install`` where a C compiler exists:
  :mod:`smllm.worker.native`) is the installed ``smllm-hook``. It hands the call to the
  worker, or runs the Python hook (``smllm-hook.py`` beside it) itself;
* **the worker** (:mod:`smllm.worker.server`): a master that listens, and children that
  each serve calls one after another, exactly as the Python hook would run them
  (:func:`smllm.hooks.main`): the same journal writes, the same output, written on the
  hook's own stdout;
* **the Python hook**, which the client runs whenever no worker takes the call, told why
  by its last two arguments (``--worker start|foreign``: :func:`take_worker`).

The conversation (all integers little-endian; ``MAC(x)`` is HMAC-SHA256 under smllm's
journal key, 32 bytes, of :data:`DOMAIN` + ``x``):

1. The client connects (non-blocking) to :func:`socket_path`. No socket or a refused
   connection: no worker; the Python hook runs the call and starts one (``--worker
   start``). A full backlog (``EAGAIN``): the Python hook runs it.
2. Client: :data:`HELLO` + a 32-byte nonce ``n1``. Worker: :data:`ACK` + its nonce ``n2``
   + the serving child's pid (8 bytes) + ``MAC(b"ack" + n1 + n2 + pid)``. No answer
   within :data:`ACK_WAIT` seconds (a stopped or stuck worker): the client removes the
   socket and the Python hook runs the call (``--worker start``). The connection closed
   first (a busy or reloading worker turns calls away so): the Python hook runs it. A
   wrong answer or MAC: whatever listens is not smllm's worker; nothing is handed over,
   and the Python hook runs the call with ``--worker foreign``: a gating call is denied
   and journaled (:data:`smllm.hooks.pre_tool_use.FOREIGN_WORKER`).
3. Client: :data:`GO` + the call's length (4 bytes) + ``MAC(b"go" + n2 + call)`` + the
   call (:func:`encode_call`), the first ``sendmsg`` carrying the hook's stdin, stdout,
   stderr and working folder as descriptors. A child that gets less, or a wrong MAC,
   runs nothing. From here on the call may have been delivered: the client never runs it
   again.
4. Worker: :data:`DONE` + the exit status (1 byte), once the child has written the hook's
   output and let go of the hook's descriptors. The connection closed without it, or no
   answer by the hook's deadline and :data:`DONE_GRACE` (the client kills the child then): the
   call is lost; a gating hook exits 2 (Claude Code blocks the call) with the reason on
   stderr, an observing one exits 0.

Where: the socket is in smllm's key folder (:func:`smllm.base.paths.key_root`), which
Claude Code's sandbox can neither read nor write (``denyRead``), so a sandboxed command can
neither connect to it nor plant a listener there; it is named for the Python hook it
stands for (:func:`tag`), so two installs never share a worker. ``SMLLM_WORKER=0`` in the
hooks' environment makes the client run the Python hook at once. Only Claude Code's hooks
go through the client; the other hosts' commands (``--harness``) run the Python hook.

Hot path (the Python hook's ``--worker`` handling): ``smllm.base.osfast``, not ``os``.
"""

from __future__ import annotations

from smllm.base import osfast as os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

#: the environment variable that turns the worker off (``0``)
SWITCH = "SMLLM_WORKER"
#: how long the client waits for :data:`ACK` (seconds): a warm worker answers in well
#: under a millisecond; this only guards a stopped or stuck one
ACK_WAIT = 1.0
#: the ``DONE`` may come this long after the hook's own deadline (seconds)
DONE_GRACE = 5.0
#: the first bytes of every conversation: the protocol's name and version
HELLO = b"smllm-worker-2\n"
NONCE = 32
MAC_SIZE = 32
ACK = b"ACK2"
ACK_SIZE = len(ACK) + NONCE + 8 + MAC_SIZE
GO = b"GO02"
GO_HEAD = len(GO) + 4 + MAC_SIZE
DONE = b"DONE"
#: the domain of the worker's MACs under smllm's key (the journal's MACs have their own)
DOMAIN = b"smllm-worker-v2\0"
#: the largest call (argv and environment) a child takes
CALL_LIMIT = 1 << 20
#: the Python hook's last two arguments when the client ran it instead of a worker
FLAG = "--worker"
START, FOREIGN = "start", "foreign"
#: an AF_UNIX address is at most 108 bytes; a longer path is reached through its
#: folder's descriptor (``/proc/self/fd/N/name``)
ADDRESS_MAX = 100


def take_worker(argv: list[str]) -> tuple[str | None, list[str]]:
    """``(why the client ran the Python hook, the other arguments)``: ``--worker start`` or
    ``--worker foreign`` at the end of the hook's arguments (after ``--home``).

    >>> take_worker(["PreToolUse", "--home", "platform", "--worker", "start"])
    ('start', ['PreToolUse', '--home', 'platform'])
    >>> take_worker(["PreToolUse", "--home", "platform"])
    (None, ['PreToolUse', '--home', 'platform'])
    """
    if len(argv) >= 3 and argv[-2] == FLAG and argv[-1] in (START, FOREIGN):
        return argv[-1], argv[:-2]
    return None, argv


def tag(python_hook: str) -> str:
    """What names a worker: the Python hook it stands for (its path as the client runs it).

    >>> len(tag("/venv/bin/smllm-hook.py"))
    16
    """
    from smllm.base.digest import sha256_hex  # noqa: PLC0415 - hot path: built-in sha256

    return sha256_hex(python_hook.encode("utf-8", "surrogateescape"))[:16]


def socket_path(folder: str, python_hook: str) -> str:
    """The worker's socket in smllm's key folder ``folder``."""
    return os.path.join(folder, f"worker-{tag(python_hook)}.sock")


def lock_path(folder: str, python_hook: str) -> str:
    """The worker's lock, held for its whole life (one worker per socket)."""
    return os.path.join(folder, f"worker-{tag(python_hook)}.lock")


def stats_path(folder: str, python_hook: str) -> str:
    """What the worker did (:class:`smllm.worker.server.Stats`): its pid, the calls it
    served and the CPU time it and its children spent."""
    return os.path.join(folder, f"worker-{tag(python_hook)}.json")


def address(path: str) -> tuple[str, int]:
    """``(address, folder descriptor or -1)``: ``path``, or the same socket through its
    folder's descriptor where ``path`` is too long for an AF_UNIX address."""
    if len(os.fsencode(path)) < ADDRESS_MAX:
        return path, -1
    folder, name = os.path.split(path)
    fd = os.open(folder, getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY)
    return f"/proc/self/fd/{fd}/{name}", fd


def mac(secret: bytes, *parts: bytes) -> bytes:
    """``MAC(parts)``: HMAC-SHA256 under ``secret`` of :data:`DOMAIN` and the parts."""
    import hmac  # noqa: PLC0415 - the worker's side only

    return hmac.digest(secret, DOMAIN + b"".join(parts), "sha256")


def encode_call(umask: int, argv: Sequence[bytes], env: Sequence[bytes]) -> bytes:
    """A call as the client sends it: the umask (decimal), the count of arguments, the
    arguments (``argv[0]`` the Python hook), then ``NAME=VALUE`` per variable, joined by
    NUL (none of them can hold one).

    >>> encode_call(0o22, [b"/h.py", b"Stop"], [b"A=1"])
    b'18\\x002\\x00/h.py\\x00Stop\\x00A=1'
    """
    return b"\0".join([b"%d" % umask, b"%d" % len(argv), *argv, *env])


def decode_call(body: bytes) -> tuple[int, list[bytes], list[bytes]]:
    """``(umask, argv, environment entries)`` of :func:`encode_call`'s bytes; ValueError
    for anything else."""
    fields = body.split(b"\0")
    if len(fields) < 3 or not fields[0].isdigit() or not fields[1].isdigit():
        raise ValueError("not a worker call")
    count = int(fields[1])
    if count < 2 or len(fields) < 2 + count:
        raise ValueError("a worker call without its arguments")
    env = fields[2 + count:]
    if any(b"=" not in entry for entry in env):
        raise ValueError("a worker call with an environment entry that is not NAME=VALUE")
    return int(fields[0]) & 0o777, fields[2:2 + count], env


def workers(folder: str, python_hook: str | None = None) -> list[dict[str, float]]:
    """The stats of every worker whose files are in the key folder ``folder`` (of the one
    standing for ``python_hook`` only, when given): :class:`smllm.worker.server.Stats`,
    ``pid``, ``calls``, ``busy``, ``cpu``, ``children_cpu``. One that cannot be read, or
    whose process is gone, is left out."""
    import glob  # noqa: PLC0415 - doctor, the benchmarks and the tests only
    import json  # noqa: PLC0415 - the same: not on the hooks' path

    name = f"worker-{tag(python_hook)}.json" if python_hook else "worker-*.json"
    out = []
    for path in sorted(glob.glob(os.path.join(glob.escape(folder), name))):
        try:
            with open(path, "rb") as fh:
                data = json.load(fh)
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("pid"), int) and _alive(data["pid"]):
            out.append(data)
    return out


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a worker still (not gone, its pid not taken by another process)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return b"smllm.worker.server" in fh.read()
    except OSError:
        return False


def stop(folder: str) -> list[int]:
    """Kill each worker of ``folder`` that still runs (its master leads its own process
    group: the children go with it), by the pid its stats name; the pids killed."""
    import signal  # noqa: PLC0415 - the benchmarks and the tests only

    killed = []
    for stats in workers(folder):
        pid = int(stats["pid"])
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            continue
        killed.append(pid)
    return killed
