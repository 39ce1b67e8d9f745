"""A scripted model server run as a process for one e2e harness (Codex's, Copilot's): started
on 127.0.0.1 on a free port, its script replaced over HTTP, killed by the PID it wrote; and
the two helpers every harness's ``run`` needs (a JSONL file read from an offset, a process
waited for or killed); and what a clean export's diagnostics are, which their tests check."""

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

#: the diagnostics of an export that a clean log has at zero (the host e2e tests compare)
CLEAN_EXPORT = {"unparseable_lines": 0, "unknown_payload_kinds": 0, "duplicate_records": 0,
                "torn_lines": 0, "sequence_gaps": 0}


def export_diagnostics(doc: dict[str, Any]) -> dict[str, Any]:
    """Those of :data:`CLEAN_EXPORT`'s diagnostics an export ``doc`` has."""
    return {k: v for k, v in doc["diagnostics"].items() if k in CLEAN_EXPORT}


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


class HostHarness:
    """What every host CLI's e2e harness holds (each fixture of ``conftest.py`` gives a test
    one): ``home`` (the CLI's ``HOME``), ``project`` (a git-initialised folder, the cwd of
    every run and every smllm command), ``smllm_home``, and the host's scripted model
    (``MOCK``) on 127.0.0.1, killed by PID at :meth:`close`. A subclass names its host
    (``HARNESS``: ``smllm install --harness``), its mock, the outer variables that would
    change what the CLI or smllm does (``SCRUB``), and what its environment adds
    (:meth:`host_env`)."""

    HARNESS = ""
    MOCK: Path
    SCRUB: tuple[str, ...] = ()

    def __init__(self, root: Path, cli: Path, smllm_home: Path, *folders: Path) -> None:
        self.root = root
        self.cli = cli
        self.smllm_home = smllm_home
        self.home = root / "home"
        self.project = root / "proj"
        for folder in (self.home, self.project, *folders):
            folder.mkdir(parents=True, exist_ok=True)
        git_project(self.project)
        self.log_path = root / "requests.jsonl"
        self.mock = MockProcess(self.MOCK, root, self.log_path)
        self.port = self.mock.port

    def set_script(self, script: Sequence[Mapping[str, Any]]) -> None:
        self.mock.set_script(script)

    def close(self) -> None:
        self.mock.close()

    def host_env(self) -> dict[str, str]:
        """What the host's runs (and smllm's commands) see besides HOME and SMLLM_HOME."""
        return {}

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(self.SCRUB)}
        env.update({"HOME": str(self.home), "SMLLM_HOME": str(self.smllm_home),
                    **self.host_env(), **(extra or {})})
        return env

    def smllm(self, *args: str, extra: Mapping[str, str] | None = None
              ) -> subprocess.CompletedProcess[str]:
        """``smllm ARGS`` in the project, in the harness's environment."""
        return subprocess.run([sys.executable, "-m", "smllm", *args], cwd=self.project,
                              env=self.env(extra), capture_output=True, text=True, timeout=120,
                              check=False)

    def install_smllm(self, *args: str) -> subprocess.CompletedProcess[str]:
        proc = self.smllm("install", "--harness", self.HARNESS, *args)
        assert 0 == proc.returncode, proc.stdout + proc.stderr
        return proc
