"""Shared benchmark helpers: run a command many times, interleaved with a baseline."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence

PYTHON = sys.executable


def installed_hook_argv() -> list[str]:
    """The argv of a hook as ``smllm install`` writes it, without its EVENT."""
    import shlex

    from smllm.setup import install

    python, flags = install.interpreter()
    return shlex.split(install.hook_command("", python, flags))


def run_once(argv: Sequence[str], stdin: bytes = b"", env: dict[str, str] | None = None,
             cwd: str | None = None) -> tuple[float, int, int]:
    """(wall seconds, exit status, peak RSS in KiB) of one process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    assert proc.stdin is not None
    proc.stdin.write(stdin)
    proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - t0, proc.returncode, usage.ru_maxrss


def interleaved(cases: dict[str, tuple[Sequence[str], bytes]], rounds: int,
                env: dict[str, str] | None = None, cwd: str | None = None
                ) -> dict[str, list[tuple[float, int]]]:
    """Run every case once per round, in turn, so machine noise hits all of them alike."""
    out: dict[str, list[tuple[float, int]]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, (argv, stdin) in cases.items():
            wall, rc, rss = run_once(argv, stdin, env=env, cwd=cwd)
            if rc != 0:
                raise SystemExit(f"{name}: exit status {rc}")
            out[name].append((wall, rss))
    return out


def peak_rss_kib(argv: Sequence[str], stdin: bytes = b"", env: dict[str, str] | None = None,
                 cwd: str | None = None) -> int | None:
    """Peak RSS of one run, measured by GNU time (a fork of this process would inherit
    this process's memory and spoil ``ru_maxrss``); None without /usr/bin/time."""
    if not os.path.exists("/usr/bin/time"):
        return None
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], input=stdin, env=env, cwd=cwd,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    last = proc.stderr.decode().strip().splitlines()[-1:]
    return int(last[0]) if last and last[0].isdigit() else None


def median_ms(samples: list[tuple[float, int]]) -> float:
    return statistics.median(s[0] for s in samples) * 1000


def peak_kib(samples: list[tuple[float, int]]) -> int:
    return max(s[1] for s in samples)
