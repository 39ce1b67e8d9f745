"""Running a program inside bubblewrap (Debian's ``bwrap``, the sandbox Claude Code itself
uses on Linux): what smllm runs, outside the agent's own sandbox, on files the agent could
have written (a state machine's ``command`` guard runs the project's tests) runs here.

The program sees:

* the whole file system read-only (``--ro-bind / /``), a ``/dev`` and a ``/proc`` of its
  own (a PID namespace: it can neither see nor signal a process outside), and empty
  private ``/tmp`` and ``/run`` (no host socket, no other session's files);
* no network (a network namespace of its own) and no Unix socket (a system-call filter
  refuses ``socket(AF_UNIX, ...)``, as Claude Code's sandbox does, so a socket the host
  keeps elsewhere, a container engine's say, cannot be reached), no capabilities, a
  terminal session of its own;
* the project writable, except each *read-only* path inside it (bound read-only) and each
  *hidden* one (absent). A folder that holds such a path is a private folder on which each
  of its entries is bound back from a file descriptor opened without following links: a
  link the agent swaps in meanwhile cannot redirect a mount, an entry that was a link is
  recreated as the same link, and what the program creates in such a folder (a new file at
  the project's top level, say) lasts only as long as the run;
* each hidden path outside the project replaced by an empty folder (or ``/dev/null``).

Killing ``bwrap`` (the caller's timeout) ends everything the program started: the
namespace's first process dies with it (``--die-with-parent``), and the kernel then ends
every other process of the namespace. It fails closed: where smllm finds no ``bwrap``
(it looks in fixed places, never on ``$PATH``, which a project can reach), on a system
other than Linux, or where ``bwrap`` cannot set the sandbox up (no namespaces), the
program does not run and :class:`SandboxUnavailable` says what to install.

Slow path (a guard that runs a program): ``subprocess``, ``signal`` and ``stat`` are
imported here.
"""

from __future__ import annotations

import contextlib
import signal
import stat
import subprocess
import sys

from smllm.base import jsonfast
from smllm.base import osfast as os
from smllm.base.errors import SandboxUnavailable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

#: where ``bwrap`` is looked for, in order (Debian's package first); never ``$PATH``
CANDIDATES = ("/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap")
#: how to get it
INSTALL = "apt-get install -y bubblewrap"
#: the namespaces, the process and the file system every run starts from
BASE = ("--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
        "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc")
#: host folders replaced by empty private ones (sockets, other programs' temporary files)
PRIVATE = ("/tmp", "/run")  # noqa: S108 - the sandbox's own, empty
_O_PATH = getattr(os, "O_PATH", 0)
#: the system-call filter's facts per architecture (``os.uname().machine``): the audit
#: architecture the kernel reports, and the number of ``socket``
SYSCALLS = {"x86_64": (0xC000003E, 41), "aarch64": (0xC00000B7, 198)}
_AF_UNIX = 1
_IO_URING_SETUP = 425  # the same number on both
_EPERM = 1


def seccomp_filter(machine: str) -> bytes:
    """The classic BPF program bwrap loads (``--seccomp``): ``socket(AF_UNIX, ...)`` fails
    with EPERM, and so do ``io_uring_setup`` (its rings can open sockets past the filter),
    every call of another architecture's (a 32-bit program's ``socketcall``) and of the
    x32 numbers; anything else is allowed."""
    try:
        arch, socket_nr = SYSCALLS[machine]
    except KeyError:
        raise SandboxUnavailable(
            f"no system-call filter for programs on {machine} (smllm knows "
            f"{', '.join(SYSCALLS)})", "opt out in smllm's user config: [guards] "
            "sandbox = false") from None
    import struct  # noqa: PLC0415 - command guards only

    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, JMP|JEQ|K, JMP|JGE|K, RET|K
    allow, refuse = 0x7FFF0000, 0x00050000 | _EPERM  # SECCOMP_RET_ALLOW, _ERRNO
    program = [  # (code, jump if true, jump if false, constant); jumps skip that many
        (ld, 0, 0, 4),                 # 0: the architecture
        (jeq, 1, 0, arch),             # 1: ours? 3 : 2
        (ret, 0, 0, refuse),           # 2
        (ld, 0, 0, 0),                 # 3: the call's number
        (jge, 5, 0, 0x40000000),       # 4: an x32 number? 10 : 5
        (jeq, 4, 0, _IO_URING_SETUP),  # 5: io_uring_setup? 10 : 6
        (jeq, 0, 2, socket_nr),        # 6: socket? 7 : 9
        (ld, 0, 0, 16),                # 7: its first argument (low half): the family
        (jeq, 1, 0, _AF_UNIX),         # 8: AF_UNIX? 10 : 9
        (ret, 0, 0, allow),            # 9
        (ret, 0, 0, refuse),           # 10
    ]
    return b"".join(struct.pack("=HBBI", *op) for op in program)


def find(explicit: str | None = None) -> str:
    """The ``bwrap`` to run: ``explicit`` (the user's config names it), else the first of
    :data:`CANDIDATES` that exists; :class:`SandboxUnavailable` when there is none."""
    if not sys.platform.startswith("linux"):
        raise SandboxUnavailable(
            f"no sandbox for programs smllm runs on {sys.platform} (smllm uses bubblewrap, "
            "on Linux)", "run the agent on Linux, or opt out in smllm's user config: "
            "[guards] sandbox = false")
    for path in (explicit,) if explicit else CANDIDATES:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    where = explicit or ", ".join(CANDIDATES)
    raise SandboxUnavailable(f"bubblewrap (bwrap) is not installed ({where})",
                             f"install it: {INSTALL}")


class Finished:
    """How a sandboxed program ended: its exit status (None when it was stopped at its
    timeout), its output (stdout and stderr together), whether it timed out."""

    __slots__ = ("code", "output", "timed_out")

    def __init__(self, code: int | None, output: bytes, timed_out: bool) -> None:
        self.code = code
        self.output = output
        self.timed_out = timed_out


def _paths(items: Iterable[str]) -> frozenset[str]:
    """Each path as written (absolute) and as resolved: a mount works on the real one."""
    out: set[str] = set()
    for item in items:
        out.add(os.path.abspath(item))
        out.add(os.path.realpath(item))
    return frozenset(out)


def _beneath(path: str, folder: str) -> bool:
    return path.startswith(folder.rstrip(os.sep) + os.sep)


class Plan:
    """The mount arguments of one run and the descriptors they name (kept open until
    ``bwrap`` has started, then closed by :meth:`close`)."""

    __slots__ = ("args", "fds")

    def __init__(self) -> None:
        self.args: list[str] = []
        self.fds: list[int] = []

    def bind(self, fd: int, dest: str, *, writable: bool) -> None:
        self.fds.append(fd)
        self.args += ["--bind-fd" if writable else "--ro-bind-fd", str(fd), dest]

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds = []


def plan(project: str, readonly: Iterable[str], hidden: Iterable[str]) -> Plan:
    """The mounts for a run in ``project`` (see the module's text): every path as resolved,
    the project's tree from descriptors. The caller closes the plan."""
    root = os.path.realpath(project)
    ro, gone = _paths(readonly), _paths(hidden)
    out = Plan()
    out.args += BASE
    for folder in PRIVATE:
        if os.path.isdir(folder) and not os.path.islink(folder):
            out.args += ["--tmpfs", folder]
    for path in sorted(gone):
        if path == root or _beneath(root, path) or _beneath(path, root) or path in PRIVATE \
                or any(_beneath(path, p) for p in (*PRIVATE, *gone)):
            continue  # the project's are left out of its tree; private and inner ones gone
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode):
            out.args += ["--tmpfs", path]
        elif not stat.S_ISLNK(mode):  # resolved above: its target is in the set as well
            out.args += ["--ro-bind", "/dev/null", path]
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        _tree(out, root, fd, ro=ro, gone=gone,
              inner=tuple(p for p in ro | gone if _beneath(p, root)))
    except OSError as exc:
        out.close()
        raise SandboxUnavailable(f"cannot prepare the sandbox's view of {root}: {exc}",
                                 "check the project folder") from None
    finally:
        os.close(fd)
    return out


def _tree(out: Plan, folder: str, dir_fd: int, *, ro: frozenset[str], gone: frozenset[str],
          inner: tuple[str, ...]) -> None:
    """``folder`` as a private folder with each entry bound back (read-only ones read-only,
    hidden ones left out, folders holding either of them, ``inner``, the same way)."""
    out.args += ["--tmpfs", folder]
    for name in sorted(os.listdir(dir_fd)):
        path = os.path.join(folder, name)
        if path in gone:
            continue
        try:
            fd = os.open(name, _O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
        except FileNotFoundError:
            continue  # removed meanwhile
        mode = os.fstat(fd).st_mode
        if stat.S_ISLNK(mode):
            os.close(fd)
            out.args += ["--symlink", os.readlink(name, dir_fd=dir_fd), path]
        elif path in ro:
            out.bind(fd, path, writable=False)
        elif stat.S_ISDIR(mode) and any(_beneath(p, path) for p in inner):
            os.close(fd)
            sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                          dir_fd=dir_fd)
            try:
                _tree(out, path, sub, ro=ro, gone=gone, inner=inner)
            finally:
                os.close(sub)
        else:
            out.bind(fd, path, writable=True)


def run(command: Sequence[str], *, bwrap: str, project: str, readonly: Iterable[str],
        hidden: Iterable[str], env: Mapping[str, str], timeout: float) -> Finished:
    """Run ``command`` in ``project`` inside the sandbox, with ``env`` (``TMPDIR`` and
    ``XDG_CACHE_HOME`` pointed at the private ``/tmp``), for at most ``timeout`` seconds
    (then it is killed with everything it started). :class:`SandboxUnavailable` when the
    sandbox could not be set up: the program did not run."""
    rules = seccomp_filter(os.uname().machine)
    mounts = plan(project, readonly, hidden)
    root = os.path.realpath(project)
    child_env = {**env, "TMPDIR": "/tmp", "XDG_CACHE_HOME": "/tmp/.cache"}  # noqa: S108 - private
    status_r, status_w = os.pipe()
    rules_r, rules_w = os.pipe()
    os.write(rules_w, rules)  # 80 bytes: the pipe holds them until bwrap reads
    os.close(rules_w)
    try:
        argv = [bwrap, *mounts.args, "--seccomp", str(rules_r), "--json-status-fd",
                str(status_w), "--chdir", root, "--", *command]
        try:
            proc = subprocess.Popen(argv, cwd=root, env=child_env, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    pass_fds=(*mounts.fds, status_w, rules_r),
                                    start_new_session=True)
        except OSError as exc:
            raise SandboxUnavailable(f"cannot start {bwrap}: {exc.strerror}",
                                     f"install it: {INSTALL}") from None
        finally:
            mounts.close()
            os.close(status_w)
            os.close(rules_r)
        out, timed_out = wait(proc, timeout)
        started, code = _status(status_r)
    finally:
        os.close(status_r)
    if not started and not timed_out:
        said = out.decode("utf-8", "replace").strip().splitlines()
        raise SandboxUnavailable(
            f"bubblewrap could not set up the sandbox ({said[0] if said else 'no reason given'})",
            "it needs user namespaces (Debian: sysctl kernel.unprivileged_userns_clone=1; "
            "inside a container, a runtime that allows them)")
    return Finished(None if timed_out else (proc.returncode if code is None else code), out,
                    timed_out)


def wait(proc: subprocess.Popen[bytes], timeout: float) -> tuple[bytes, bool]:
    """The output of ``proc`` (started as the leader of its own process group) and whether
    it was killed at ``timeout``, with its whole group (for ``bwrap``, whose death ends the
    sandbox and everything in it)."""
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return out, True
    return out, False


def _status(fd: int) -> tuple[bool, int | None]:
    """What ``--json-status-fd`` told: did the program start, and its exit status."""
    data = b""
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        data += chunk
    started, code = False, None
    for line in data.splitlines():
        try:
            doc = jsonfast.loads(line)
        except ValueError:
            continue
        if isinstance(doc, dict):
            started = started or "child-pid" in doc
            if isinstance(doc.get("exit-code"), int):
                code = doc["exit-code"]
    return started, code
