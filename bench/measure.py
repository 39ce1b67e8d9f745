"""Shared benchmark helpers: the baselines, timing in interleaved rounds, memory per child,
and the fsync floor.

* **Baselines use the hooks' own interpreter flags.** An installed hook runs
  ``<python> -I -S -c ...`` (:func:`smllm.setup.install.interpreter`); a bare
  ``python -c pass`` also loads ``site`` (a few ms more), which would flatter every ratio.
  :func:`baseline_argv` is the no-op with exactly the installed flags.
* **Memory per child.** On Linux a child's ``ru_maxrss`` (``os.wait4``) starts from the RSS
  of the process that forked it: a benchmark holding 600 MiB would see ``python -c pass``
  "peak" at 600 MiB. :func:`peak_rss_kib` runs the child under GNU time
  (``/usr/bin/time -f %M``, Debian package ``time``), a small C parent; without it, under a
  fresh ``python -I -S`` parent that forks the child, whose own few MiB are the floor.
* **CPU time beside wall time.** :func:`cpu_seconds` is a child's own user + system time
  (``os.wait4``): on a machine whose cores are shared it varies far less than the wall
  time, which also counts the wait for a core.
* **Medians and ranges over interleaved rounds.** :func:`interleaved` runs every case once
  per round, in turn, so machine noise hits all of them alike; :class:`Stats` is the median
  and the range.
* **Throughput beside its floor.** :func:`fsync_floor` is the rate of bare
  ``write`` + ``fsync`` of same-sized lines to one file in the same folder, measured in the
  same run as the throughput it is printed beside.
"""

from __future__ import annotations

import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass

PYTHON = sys.executable
GNU_TIME = "/usr/bin/time"

#: a fresh, small parent for a child whose peak RSS is wanted (the fallback without GNU time):
#: it forks the child, waits, and prints the child's ``ru_maxrss`` (KiB)
_FRESH_PARENT = (
    "import os, sys\n"
    "pid = os.fork()\n"
    "if pid == 0:\n"
    "    try:\n"
    "        os.execvp(sys.argv[1], sys.argv[1:])\n"
    "    finally:\n"
    "        os._exit(127)\n"
    "_, status, usage = os.wait4(pid, 0)\n"
    "sys.stderr.write('\\n%d %d\\n' % (os.waitstatus_to_exitcode(status), usage.ru_maxrss))\n"
)


def hook_interpreter() -> tuple[str, list[str]]:
    """The interpreter and flags ``smllm install`` writes into the hook commands."""
    from smllm.setup import install

    return install.interpreter()


def installed_hook_argv(event: str, *between: str) -> list[str]:
    """The argv of ``event``'s hook as ``smllm install`` writes it (``between``: words
    after the event, such as ``--harness codex``; the pinned ``--home`` stays last)."""
    from smllm.setup import install

    python, flags = install.interpreter()
    exe = install.executable_plan(python, flags)
    if exe is not None:  # the short command runs an executable an install writes
        install.write_executable(*exe)
    words = shlex.split(install.hook_command("EVENT", python, flags))
    at = words.index("EVENT")
    return [*words[:at], event, *between, *words[at + 1:]]


def baseline_argv() -> list[str]:
    """The no-op with the hooks' own interpreter and flags: ``<python> -I -S -c pass``."""
    python, flags = hook_interpreter()
    return [python, *flags, "-c", "pass"]


def baseline_label() -> str:
    return "baseline: " + " ".join(["python", *baseline_argv()[1:]])


# ------------------------------------------------------------------ timing


@dataclass(frozen=True)
class Stats:
    """Median and range of a list of samples (in the samples' unit)."""

    median: float
    low: float
    high: float
    n: int

    @classmethod
    def of(cls, samples: Sequence[float]) -> Stats:
        if not samples:
            raise ValueError("no samples")
        return cls(statistics.median(samples), min(samples), max(samples), len(samples))

    def ms(self, width: int = 7) -> str:
        """``median [low–high] ms`` of samples in seconds."""
        return (f"{self.median * 1e3:{width}.1f} ms [{self.low * 1e3:.1f}–"
                f"{self.high * 1e3:.1f}]")


def run_once(argv: Sequence[str], stdin: bytes = b"", env: dict[str, str] | None = None,
             cwd: str | None = None) -> tuple[float, int]:
    """(wall seconds, exit status) of one process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    assert proc.stdin is not None
    proc.stdin.write(stdin)
    proc.stdin.close()
    rc = proc.wait()
    return time.perf_counter() - t0, rc


def interleaved(cases: dict[str, tuple[Sequence[str], bytes]], rounds: int,
                env: dict[str, str] | None = None, cwd: str | None = None
                ) -> dict[str, list[float]]:
    """Run every case once per round, in turn; wall seconds per case."""
    out: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, (argv, stdin) in cases.items():
            wall, rc = run_once(argv, stdin, env=env, cwd=cwd)
            if rc != 0:
                raise SystemExit(f"{name}: exit status {rc}")
            out[name].append(wall)
    return out


def cpu_seconds(argv: Sequence[str], stdin: bytes = b"", env: dict[str, str] | None = None,
                cwd: str | None = None) -> float:
    """User + system CPU seconds of one run of ``argv``, which must exit 0: the child's own
    (``os.wait4``), not this process's, and on a shared machine far steadier than its wall
    time, which mostly measures the wait for a core."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=env, cwd=cwd)
    assert proc.stdin is not None
    assert proc.stderr is not None
    proc.stdin.write(stdin)
    proc.stdin.close()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"failed (exit {proc.returncode}): {' '.join(argv)}\n"
                         f"{err.decode(errors='replace')[-2000:]}")
    return usage.ru_utime + usage.ru_stime


VALGRIND = "valgrind"


def instructions(argv: Sequence[str], stdin: bytes = b"", env: dict[str, str] | None = None,
                 cwd: str | None = None) -> int:
    """User-space instructions of one run of ``argv`` (which must exit 0), counted by
    valgrind's callgrind: unlike any time, the same on a busy machine as on an idle one
    (it leaves out the kernel's work: system calls, page faults). Debian package
    ``valgrind``; the run is about 50 times slower."""
    with tempfile.TemporaryDirectory(prefix="smllm-callgrind-") as tmp:
        log = os.path.join(tmp, "log")
        proc = subprocess.run([VALGRIND, "--tool=callgrind", f"--log-file={log}",
                               f"--callgrind-out-file={os.path.join(tmp, 'out')}", *argv],
                              input=stdin, env=env, cwd=cwd, capture_output=True, check=False)
        with open(log, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    if proc.returncode != 0:
        raise SystemExit(f"failed (exit {proc.returncode}): {' '.join(argv)}\n"
                         f"{proc.stderr.decode(errors='replace')[-2000:]}")
    for line in text.splitlines():
        if "Collected :" in line:
            return int(line.rsplit(":", 1)[1])
    raise RuntimeError(f"callgrind counted nothing for {' '.join(argv)}: {text[-500:]}")


def median_ms(samples: Sequence[float]) -> float:
    return statistics.median(samples) * 1000


# ------------------------------------------------------------------ memory


def peak_rss_kib(argv: Sequence[str], stdin: bytes = b"", env: dict[str, str] | None = None,
                 cwd: str | None = None) -> int:
    """Peak RSS (KiB) of one run of ``argv``, which must succeed; independent of this
    process's own memory (see the module docstring)."""
    if os.path.exists(GNU_TIME):
        wrapper = [GNU_TIME, "-f", "\n%x %M"]
    else:
        wrapper = [PYTHON, "-I", "-S", "-c", _FRESH_PARENT]
    with tempfile.TemporaryFile() as err:
        proc = subprocess.run([*wrapper, *argv], input=stdin, env=env, cwd=cwd,
                              stdout=subprocess.DEVNULL, stderr=err, check=False)
        err.seek(0)
        text = err.read().decode(errors="replace")
    last = text.rstrip().rsplit("\n", 1)[-1].split()
    if len(last) != 2 or not all(p.lstrip("-").isdigit() for p in last):
        raise RuntimeError(f"could not read the peak RSS of {' '.join(argv)}: {text[-500:]}")
    status, kib = int(last[0]), int(last[1])
    if status != 0 or proc.returncode != 0:
        raise SystemExit(f"failed (exit {status}): {' '.join(argv)}\n{text[-1500:]}")
    return kib


def timed_with_peak(argv: Sequence[str], stdin: bytes = b"", env: dict[str, str] | None = None,
                    cwd: str | None = None) -> tuple[float, int]:
    """(wall seconds, peak RSS KiB) of one run: the wall time includes GNU time's own
    start (about a millisecond), the same for every case measured this way."""
    t0 = time.perf_counter()
    kib = peak_rss_kib(argv, stdin, env=env, cwd=cwd)
    return time.perf_counter() - t0, kib


# ------------------------------------------------------------------ the fsync floor


def fsync_floor(folder: str, count: int = 1000, line_bytes: int = 400) -> float:
    """Records per second of the least a durable append must do: ``write`` one
    ``line_bytes`` line to an ``O_APPEND`` file in ``folder`` and ``fsync`` it, ``count``
    times (the file is removed afterwards)."""
    line = b"x" * (line_bytes - 1) + b"\n"
    fd, path = tempfile.mkstemp(prefix="fsync-floor-", dir=folder)
    try:
        os.close(fd)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        try:
            t0 = time.perf_counter()
            for _ in range(count):
                os.write(fd, line)
                os.fsync(fd)
            return count / (time.perf_counter() - t0)
        finally:
            os.close(fd)
    finally:
        os.unlink(path)
