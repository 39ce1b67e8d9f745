"""Run the real Claude Code CLI against a scripted model, in a scratch HOME and project.

The ``claude`` fixture (``tests/e2e/conftest.py``) gives each test one :class:`Harness`:

* ``home``: a scratch HOME (Claude Code writes ``~/.claude.json``, transcripts, plugins);
* ``project``: a git-initialised project folder, the cwd of every run;
* ``smllm_home``: the test's own ``SMLLM_HOME`` (the autouse fixture of tests/conftest.py);
* one mock Messages API (``mock_anthropic.py``) on 127.0.0.1, started on first use and
  killed by PID at teardown.

Typical use::

    def test_two_tools(claude):
        claude.install_smllm()
        run = claude.run("go", script=[{"tool_use": {"name": "Bash", "input": {...}}},
                                       {"text": "done"}])
        assert 0 == run.returncode
        assert "session.start" in [kind(r) for r in run.journal()]
        assert run.model_saw("expected tool output")

``run()`` sets the environment of shared/ref/real-client.md §3, passes
``-p PROMPT --output-format stream-json --verbose --include-hook-events`` and a pinned
``--session-id`` (or ``--resume``), waits (``timeout``), and can SIGKILL the process
group it created mid-run (``kill_after``: seconds, or a callable given the partial
:class:`Run` that returns True when it is time).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from smllm import journal

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
MOCK = HERE / "mock_anthropic.py"
PYTHON = sys.executable
MOCK_LIFETIME = 900.0

#: variables from the outer environment that would change what the CLI does
_SCRUB_PREFIXES = ("CLAUDE", "ANTHROPIC_", "IS_SANDBOX", "DISABLE_", "MCP_")

KillAfter = float | Callable[["Run"], bool] | None


def snapshot_repo(dest: Path) -> Path:
    """A clean copy of this repository's working tree (what `git clone` of it would hold,
    plus uncommitted edits): tracked and untracked-but-not-ignored files, no .venv."""
    listing = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard"], cwd=REPO, capture_output=True, check=True)
    for rel in filter(None, listing.stdout.decode().split("\0")):
        src = REPO / rel
        if not src.is_file():
            continue  # deleted in the working tree
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)
    return dest


def _jsonl(path: Path, offset: int = 0) -> list[dict[str, Any]]:
    """Complete JSON lines of ``path`` from byte ``offset`` (a torn last line is skipped)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(offset)
            data = fh.read()
    except FileNotFoundError:
        return []
    out = []
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        with contextlib.suppress(ValueError):
            obj = json.loads(line)
            if isinstance(obj, dict):
                out.append(obj)
    return out


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


@dataclass
class Run:
    """One ``claude -p`` invocation and everything it left behind."""

    returncode: int | None
    events: list[dict[str, Any]]
    stderr: str
    log: list[dict[str, Any]]  # every mock request of this run (main, judge, side, other)
    session_id: str
    project: Path
    home: Path
    smllm_home: Path
    argv: list[str]
    duration: float
    killed: bool = False
    timed_out: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def result(self) -> dict[str, Any] | None:
        """The stream's final ``{"type": "result", ...}`` object, if the run got that far."""
        found = [e for e in self.events if e.get("type") == "result"]
        return found[-1] if found else None

    @property
    def init(self) -> dict[str, Any] | None:
        """The ``system/init`` event (tools, plugins, slash commands, permission mode)."""
        for e in self.events:
            if e.get("type") == "system" and e.get("subtype") == "init":
                return e
        return None

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Bodies of the main (agent-loop) requests the model received, in order."""
        return [r.get("body") or {} for r in self.log if r.get("kind") == "main"]

    @property
    def judge_requests(self) -> list[dict[str, Any]]:
        """Bodies of the requests that hit the judge queue, in order."""
        return [r.get("body") or {} for r in self.log if r.get("kind") == "judge"]

    @property
    def hook_events(self) -> list[dict[str, Any]]:
        """``system/hook_started`` and ``system/hook_response`` events, in order."""
        return [e for e in self.events if e.get("type") == "system"
                and str(e.get("subtype", "")).startswith("hook_")]

    @property
    def hook_outputs(self) -> list[dict[str, Any]]:
        """Every ``system/hook_response`` event (hook_event, hook_name, stdout, exit_code...)."""
        return [e for e in self.events
                if e.get("type") == "system" and e.get("subtype") == "hook_response"]

    def hook_responses(self, event: str) -> list[dict[str, Any]]:
        """The hook responses of one host event (e.g. ``"PreToolUse"``)."""
        return [e for e in self.hook_outputs if e.get("hook_event") == event]

    @property
    def journal_path(self) -> Path:
        """The session's journal (``smllm.journal.log_path``); may not exist."""
        with _smllm_home(self.smllm_home):
            try:
                return journal.log_path(self.session_id)
            except FileNotFoundError:
                return self.smllm_home / "sessions" / "by-id" / self.session_id / "missing"

    def journal(self, agent_id: str | None = None) -> list[dict[str, Any]]:
        """The records of this session's journal (or of one subagent's)."""
        with _smllm_home(self.smllm_home):
            try:
                path = journal.log_path(self.session_id, agent_id=agent_id)
            except FileNotFoundError:
                return []
            return list(journal.iter_records(path))

    def journal_kinds(self, agent_id: str | None = None) -> list[str]:
        """``(.payload.event.kind // .payload_type)`` of each record, as seed 000 reads it."""
        out = []
        for rec in self.journal(agent_id):
            ev = (rec.get("payload") or {}).get("event")
            out.append(str(ev["kind"]) if isinstance(ev, dict) and "kind" in ev
                       else str(rec.get("payload_type")))
        return out

    def model_saw(self, text: str) -> bool:
        """True if ``text`` is a substring of any string in the main requests' messages."""
        return any(text in s for body in self.requests for s in _strings(body.get("messages")))

    def tool_results(self) -> list[dict[str, Any]]:
        """Every distinct ``tool_result`` block the model received (by tool_use_id)."""
        seen: dict[str, dict[str, Any]] = {}
        for body in self.requests:
            for msg in body.get("messages") or []:
                content = msg.get("content") if isinstance(msg, dict) else None
                for block in content if isinstance(content, list) else []:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        seen.setdefault(str(block.get("tool_use_id")), block)
        return list(seen.values())

    def describe(self) -> str:
        """A short diagnostic for assertion messages."""
        res = self.result or {}
        return (f"rc={self.returncode} killed={self.killed} timed_out={self.timed_out} "
                f"result={res.get('result')!r} is_error={res.get('is_error')} "
                f"requests={len(self.requests)} journal={self.journal_kinds()}\n"
                f"stderr: {self.stderr[-1500:]}")


@contextlib.contextmanager
def _smllm_home(home: Path) -> Iterator[None]:
    old = os.environ.get("SMLLM_HOME")
    os.environ["SMLLM_HOME"] = str(home)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("SMLLM_HOME", None)
        else:
            os.environ["SMLLM_HOME"] = old


class MockServer:
    """One ``mock_anthropic.py`` process on 127.0.0.1 (port 0), killed by PID."""

    def __init__(self, workdir: Path) -> None:
        self.dir = workdir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.dir / "requests.jsonl"
        self.log_path.touch()
        port_file, self.pid_file = self.dir / "port", self.dir / "mock.pid"
        self.proc = subprocess.Popen(
            [PYTHON, str(MOCK), "--port", "0", "--port-file", str(port_file), "--pid-file",
             str(self.pid_file), "--max-lifetime", str(MOCK_LIFETIME), "--log",
             str(self.log_path)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=open(self.dir / "mock.err", "wb"),  # noqa: SIM115 - lives with the process
            start_new_session=True)
        deadline = time.monotonic() + 15
        while not port_file.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"mock server did not start: "
                                   f"{(self.dir / 'mock.err').read_text()[-1000:]}")
            time.sleep(0.02)
        self.port = int(port_file.read_text())
        self.url = f"http://127.0.0.1:{self.port}"

    def control(self, payload: Any) -> dict[str, Any]:
        req = urllib.request.Request(self.url + "/_mock/script", data=json.dumps(payload).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(req, timeout=10) as resp:
            out: dict[str, Any] = json.loads(resp.read())
            return out

    def state(self) -> dict[str, Any]:
        with urllib.request.urlopen(self.url + "/_mock/state", timeout=10) as resp:
            out: dict[str, Any] = json.loads(resp.read())
            return out

    def log_size(self) -> int:
        return self.log_path.stat().st_size

    def entries(self, offset: int = 0) -> list[dict[str, Any]]:
        return _jsonl(self.log_path, offset)

    def stop(self) -> None:
        pids = {self.proc.pid}
        with contextlib.suppress(OSError, ValueError):
            pids.add(int(self.pid_file.read_text().strip()))
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)


class Harness:
    """A scratch HOME + project + mock model, and the pinned ``claude`` binary."""

    def __init__(self, root: Path, binary: Path, smllm_home: Path,
                 wheels: Path | None = None) -> None:
        self.root = root
        self.binary = binary
        self.smllm_home = smllm_home
        self.wheels = wheels  # pip installs come from here, never from the network
        self.home = root / "home"
        self.project = root / "project"
        self.home.mkdir(parents=True, exist_ok=True)
        self.project.mkdir(parents=True, exist_ok=True)
        self._mock: MockServer | None = None
        self._groups: set[int] = set()
        self.runs: list[Run] = []
        subprocess.run(["git", "init", "-q", str(self.project)], check=True,
                       env=self.env(), capture_output=True)

    # ------------------------------------------------------------------ environment
    @property
    def mock(self) -> MockServer:
        if self._mock is None:
            self._mock = MockServer(self.root / "mock")
        return self._mock

    def env(self, extra: Mapping[str, str | None] | None = None) -> dict[str, str]:
        """The environment of real-client.md §3 (scratch HOME, mock URL, no outer Claude)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(_SCRUB_PREFIXES)}
        env.update({
            "HOME": str(self.home),
            "SMLLM_HOME": str(self.smllm_home),
            "ANTHROPIC_API_KEY": "sk-ant-test",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_MAX_RETRIES": "0",
            "GIT_CONFIG_NOSYSTEM": "1",
        })
        if self.wheels is not None:
            env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(self.wheels),
                       PIP_DISABLE_PIP_VERSION_CHECK="1")
        if self._mock is not None:
            env["ANTHROPIC_BASE_URL"] = self._mock.url
        for k, v in (extra or {}).items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v
        return env

    # ------------------------------------------------------------------ smllm + claude CLIs
    def smllm(self, *args: str, env: Mapping[str, str | None] | None = None,
              cwd: Path | None = None, timeout: float = 120,
              check: bool = False) -> subprocess.CompletedProcess[str]:
        """``python -m smllm ARGS`` with this repository's interpreter and the scratch env."""
        proc = subprocess.run([PYTHON, "-m", "smllm", *args], capture_output=True, text=True,
                              env=self.env(env), cwd=cwd or self.project, timeout=timeout,
                              stdin=subprocess.DEVNULL, check=False)
        if check and proc.returncode != 0:
            raise AssertionError(f"smllm {' '.join(args)} -> {proc.returncode}\n"
                                 f"{proc.stdout}\n{proc.stderr}")
        return proc

    def install_smllm(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """``smllm install --project <project> ARGS`` (hooks call this repo's venv python)."""
        return self.smllm("install", "--project", str(self.project), *args, check=check)

    def cli(self, *args: str, env: Mapping[str, str | None] | None = None,
            cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Any other ``claude`` subcommand (``plugin validate``, ``plugin install``...)."""
        return subprocess.run([str(self.binary), *args], capture_output=True, text=True,
                              env=self.env(env), cwd=cwd or self.project, timeout=timeout,
                              stdin=subprocess.DEVNULL, check=False)

    def write_settings(self, data: Mapping[str, Any], *, which: str = "project") -> Path:
        """Write a Claude Code settings file: ``project``, ``local`` or ``user``."""
        path = {"project": self.project / ".claude" / "settings.json",
                "local": self.project / ".claude" / "settings.local.json",
                "user": self.home / ".claude" / "settings.json"}[which]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=2) + "\n")
        return path

    # ------------------------------------------------------------------ a session
    def _argv(self, prompt: str, permission_mode: str | None, session_id: str | None,
              resume: str | None, extra_args: Sequence[str]) -> tuple[list[str], str, dict[str, str]]:
        argv = [str(self.binary), "-p", prompt, "--output-format", "stream-json", "--verbose",
                "--include-hook-events"]
        env: dict[str, str] = {}
        if permission_mode == "bypass":
            argv.append("--dangerously-skip-permissions")
            env["IS_SANDBOX"] = "1"
        elif permission_mode is not None:
            argv += ["--permission-mode", permission_mode]
        if resume is not None:
            argv += ["--resume", resume]
            sid = resume
        else:
            sid = session_id or str(uuid.uuid4())
            argv += ["--session-id", sid]
        return [*argv, *extra_args], sid, env

    def run(self, prompt: str, script: Sequence[Mapping[str, Any]] | None = None,
            judge: Sequence[Mapping[str, Any]] | None = None,
            permission_mode: str | None = "acceptEdits", session_id: str | None = None,
            resume: str | None = None, extra_args: Sequence[str] = (),
            env: Mapping[str, str | None] | None = None, timeout: float = 120,
            kill_after: KillAfter = None) -> Run:
        """Run ``claude -p PROMPT`` in the project; ``script``/``judge`` replace the mock's
        queues (None keeps what is left of them)."""
        mock = self.mock
        control: dict[str, Any] = {}
        if script is not None:
            control["script"] = list(script)
        if judge is not None:
            control["judge"] = list(judge)
        if control:
            mock.control(control)
        argv, sid, perm_env = self._argv(prompt, permission_mode, session_id, resume, extra_args)
        full_env = self.env({**perm_env, **(env or {})})
        n = len(self.runs)
        out_path, err_path = self.root / f"run{n}.stdout", self.root / f"run{n}.stderr"
        offset = mock.log_size()
        start = time.monotonic()
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen(argv, cwd=self.project, env=full_env,
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    start_new_session=True)
        self._groups.add(proc.pid)
        killed = timed_out = False
        while proc.poll() is None:
            elapsed = time.monotonic() - start
            if elapsed > timeout:
                timed_out = True
            elif kill_after is not None and self._due(kill_after, elapsed, sid, out_path,
                                                      err_path, offset, argv):
                killed = True
            if killed or timed_out:
                self._kill_group(proc.pid)
                proc.wait()
                break
            time.sleep(0.02)
        self._kill_group(proc.pid)  # stray hook processes of this run
        self._groups.discard(proc.pid)
        run = self._snapshot(proc.returncode, sid, out_path, err_path, offset, argv,
                             time.monotonic() - start)
        run.killed, run.timed_out = killed, timed_out
        run.extra["pgid"] = proc.pid
        self.runs.append(run)
        return run

    def drive(self, prompt: str, script: Sequence[Mapping[str, Any]] | None = None,
              judge: Sequence[Mapping[str, Any]] | None = None, *,
              answers: Sequence[str] = (), default: str = "allow", delay: float = 0.0,
              permission_mode: str | None = "default", extra_args: Sequence[str] = (),
              env: Mapping[str, str | None] | None = None, timeout: float = 120) -> Run:
        """Like :meth:`run`, but a person answers Claude Code's permission prompts: the
        stdio driver (``stdio_driver.py``) gives the i-th prompt ``answers[i]`` (later ones
        ``default``) after ``delay`` seconds. ``run.extra["prompts"]`` lists them."""
        from stdio_driver import drive  # only the driven tests need it

        mock = self.mock
        control: dict[str, Any] = {}
        if script is not None:
            control["script"] = list(script)
        if judge is not None:
            control["judge"] = list(judge)
        if control:
            mock.control(control)
        argv, sid, perm_env = self._argv(prompt, permission_mode, None, None, extra_args)
        argv = [argv[0], *argv[6:]]  # the driver passes -p and the stream formats itself
        full_env = self.env({**perm_env, **(env or {})})
        n = len(self.runs)
        out_path, err_path = self.root / f"run{n}.stdout", self.root / f"run{n}.stderr"
        offset = mock.log_size()
        start = time.monotonic()
        with open(out_path, "w", encoding="utf-8") as out, open(err_path, "wb") as err:
            driven = drive(argv, prompt=prompt, answers=answers, default=default, delay=delay,
                           out=out, stderr=err, env=full_env, cwd=self.project,
                           timeout=timeout, on_start=self._groups.add)
        for pgid in list(self._groups):  # stray hook processes of this run
            self._kill_group(pgid)
        self._groups.clear()
        run = self._snapshot(driven.returncode, sid, out_path, err_path, offset, argv,
                             time.monotonic() - start)
        run.timed_out = driven.timed_out
        run.extra.update(prompts=driven.prompts, cancelled=driven.cancelled)
        self.runs.append(run)
        return run

    def _due(self, kill_after: float | Callable[[Run], bool], elapsed: float, sid: str,
             out_path: Path, err_path: Path, offset: int, argv: list[str]) -> bool:
        if callable(kill_after):
            return bool(kill_after(self._snapshot(None, sid, out_path, err_path, offset, argv,
                                                  elapsed)))
        return elapsed >= kill_after

    def _snapshot(self, rc: int | None, sid: str, out_path: Path, err_path: Path, offset: int,
                  argv: list[str], duration: float) -> Run:
        events = _jsonl(out_path)
        for e in events:
            if e.get("type") in ("result", "system") and isinstance(e.get("session_id"), str):
                sid = e["session_id"]
        return Run(returncode=rc, events=events,
                   stderr=err_path.read_text(errors="replace") if err_path.exists() else "",
                   log=self.mock.entries(offset), session_id=sid, project=self.project,
                   home=self.home, smllm_home=self.smllm_home, argv=argv, duration=duration)

    @staticmethod
    def _kill_group(pgid: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)

    def bootstrap_pids(self) -> list[int]:
        """PIDs of plugin bootstraps our runs started (they detach, so they leave a pid file)."""
        pids = []
        for pid_file in (self.home / ".claude" / "plugins" / "data").glob("*/bootstrap.pid"):
            with contextlib.suppress(OSError, ValueError):
                pids.append(int(pid_file.read_text().strip()))
        return pids

    def close(self) -> None:
        """Kill every process group this harness started, then the mock (by PID)."""
        for pgid in list(self._groups):
            self._kill_group(pgid)
        self._groups.clear()
        for pid in self.bootstrap_pids():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)  # setsid made it a group leader
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if self._mock is not None:
            self._mock.stop()
            self._mock = None
