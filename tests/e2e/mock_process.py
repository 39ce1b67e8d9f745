"""A scripted model server run as a process for one e2e harness (Codex's, Copilot's): started
on 127.0.0.1 on a free port, its script replaced over HTTP, killed by the PID it wrote; and
the two helpers every harness's ``run`` needs (a JSONL file read from an offset, a process
waited for or killed)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def jsonl(path: Path, offset: int = 0) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL file from ``offset`` (other lines skipped)."""
    try:
        data = path.read_bytes()[offset:]
    except FileNotFoundError:
        return []
    out = []
    for line in data.split(b"\n"):
        with contextlib.suppress(ValueError):
            obj = json.loads(line)
            if isinstance(obj, dict):
                out.append(obj)
    return out


def wait_or_kill(proc: subprocess.Popen[bytes], timeout: float,
                 kill_when: Callable[[], bool] | None = None) -> None:
    """Wait for ``proc`` (started with ``start_new_session``); SIGKILL its process group at
    ``timeout`` or as soon as ``kill_when`` returns True (polled)."""
    deadline = time.monotonic() + timeout
    while proc.poll() is None:
        if time.monotonic() > deadline or (kill_when is not None and kill_when()):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            break
        time.sleep(0.05)


class MockProcess:
    """``script`` (a mock's path) serving on 127.0.0.1, its requests logged to ``log``."""

    def __init__(self, script: Path, root: Path, log: Path) -> None:
        port_file, pid_file = root / "mock.port", root / "mock.pid"
        proc = subprocess.Popen(
            [sys.executable, str(script), "--port", "0", "--port-file", str(port_file),
             "--pid-file", str(pid_file), "--log", str(log), "--max-lifetime", "900"],
            stdout=subprocess.DEVNULL, stderr=open(root / "mock.err", "w"),  # noqa: SIM115
            start_new_session=True)
        deadline = time.monotonic() + 30
        while not port_file.exists() or not port_file.read_text().strip():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the mock did not start: {(root / 'mock.err').read_text()}")
            time.sleep(0.05)
        self.pid: int | None = int(pid_file.read_text()) if pid_file.exists() else proc.pid
        self.port = int(port_file.read_text())

    def set_script(self, script: Sequence[Mapping[str, Any]]) -> None:
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/_mock/script",
                                     data=json.dumps(list(script)).encode(), method="POST")
        with urllib.request.urlopen(req, timeout=10) as resp:
            resp.read()

    def close(self) -> None:
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGTERM)
            self.pid = None


def git_project(folder: Path) -> None:
    """A git repository with one empty commit at ``folder`` (the project of a run)."""
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q",
                    "--allow-empty", "-m", "init"], cwd=folder, check=True)


@dataclass
class HostRun:
    """One run of a host CLI: its exit status, its JSONL events, stderr and the mock's
    requests of this run."""

    returncode: int | None
    events: list[dict[str, Any]]
    stderr: str
    log: list[dict[str, Any]]

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Bodies of the main requests the model received, in order."""
        return [r.get("body") or {} for r in self.log if r.get("kind") == "main"]
