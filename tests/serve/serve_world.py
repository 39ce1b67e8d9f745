"""The viewer's world: sessions journaled by the real hooks, and `smllm serve` running on them.

Built once per test run (session scope) in its own SMLLM_HOME:

* ``approved``: seed 000's sample through the real hook entry points, with ``rm -rf``
  escalated to the LLM judge (the scripted judge server on 127.0.0.1) and approved;
* ``hostile``: commands, outputs and a prompt made of an XSS and terminal-escape corpus;
* ``secret``: secrets planted in a prompt, a command, an output and a file edit;
* ``running``: a session with no end yet (the tests append to it);
* a state-machine session bound to ``approved``'s project, stopped mid-way (FIX).

Two viewers serve it (``smllm serve --port 0``, one with ``--raw``); they are stopped
by PID at the end.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from judge_server import judge_server

REPO = Path(__file__).resolve().parents[2]
SEED_FIX = REPO / "tests" / "golden" / "seed001" / "fix.smllm.yaml"
ARTIFACTS = REPO / "tests" / "artifacts" / "serve"

APPROVED = "5e7a0c11-aaaa-4bbb-8ccc-000000000001"
HOSTILE = "5e7a0c11-aaaa-4bbb-8ccc-000000000002"
SECRET = "5e7a0c11-aaaa-4bbb-8ccc-000000000003"
RUNNING = "5e7a0c11-aaaa-4bbb-8ccc-000000000004"
LONG = "5e7a0c11-aaaa-4bbb-8ccc-000000000005"
RESUMED = "5e7a0c11-aaaa-4bbb-8ccc-000000000006"
#: a session another agent CLI drove (Gemini CLI: session.start names its harness)
GEMINI = "5e7a0c11-aaaa-4bbb-8ccc-000000000007"
#: the command of RESUMED's approval: longer than any one line of a page
LONG_COMMAND = ("truncate -s 0 " + " ".join(f"generated/report-{i:03d}/run.log"
                                             for i in range(40)) + " last-of-the-long-command")
LONG_RECORDS = 450

#: the XSS and terminal-escape corpus: each must show as text and never act
XSS = [
    "<script>window.__xss = 'script'</script>",
    "<img src=x onerror=\"window.__xss='onerror'\">",
    "<svg onload=\"window.__xss='svg'\"></svg>",
    "<a href=\"javascript:window.__xss='href'\">click</a>",
    "javascript:window.__xss='url'",
    "\"><script>window.__xss='attr'</script>",
    "</pre></details></li></ol><script>window.__xss='close'</script>",
    "<iframe srcdoc=\"<script>parent.__xss='iframe'</script>\"></iframe>",
    "{{ 7*7 }} {% raw %}",
    "\x1b[31mred\x1b[0m \x1b]0;pwned title\x07 \x1b[2J",
    "\u202etxt.exe",
]
#: secrets planted in ``secret`` (each one a pattern smllm.base.secrets knows)
SECRETS = [
    "sk-ant-api03-Zq9wX8vY7uT6sR5qP4oN3mL2kJ1iH0gF9eD8cB7aZ6yX5",
    "AKIAIOSFODNN7EXAMPLF",
    "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "hunter2-correct-horse-battery",
]


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SMLLM_", "CLAUDE_")) and k != "CLAUDECODE"}
    env.update(SMLLM_HOME=str(home), **extra)
    return env


class World:
    """SMLLM_HOME with the journals, and helpers that run the real hooks in it."""

    def __init__(self, home: Path, project: Path) -> None:
        self.home = home
        self.project = project
        self.transcripts = home.parent / "transcripts"
        self.transcripts.mkdir(exist_ok=True)
        self.judge_bodies: list[bytes] = []
        self.machine_key = ""

    def hook(self, event: str, sid: str, env: dict[str, str] | None = None,
             **payload: Any) -> dict[str, Any] | None:
        body = {"session_id": sid, "transcript_path": str(self.transcripts / f"{sid}.jsonl"),
                "cwd": str(self.project), "hook_event_name": event, **payload}
        if event not in ("SessionStart", "SessionEnd"):
            body.setdefault("permission_mode", "default")
        proc = subprocess.run([sys.executable, "-c", "from smllm.hooks import cli; cli()", event],
                              input=(json.dumps(body) + "\n").encode(), capture_output=True,
                              env=_env(self.home, **(env or {})), cwd=self.project,
                              timeout=60, check=False)
        assert 0 == proc.returncode, proc.stderr.decode()
        out = proc.stdout.decode().strip()
        return json.loads(out) if out else None

    def transcript(self, sid: str, *lines: dict[str, Any]) -> None:
        with (self.transcripts / f"{sid}.jsonl").open("a") as fh:
            for line in lines:
                fh.write(json.dumps(line) + "\n")

    def assistant(self, sid: str, mid: str, text: str, tool: str | None = None) -> None:
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
        if tool:
            blocks.append({"type": "tool_use", "id": tool, "name": "Bash", "input": {}})
        self.transcript(sid, {"type": "assistant", "uuid": f"u-{mid}",
                              "timestamp": "2026-11-29T10:00:00.000Z",
                              "message": {"id": mid, "model": "claude-sonnet-4-5",
                                          "role": "assistant", "content": blocks,
                                          "stop_reason": "tool_use" if tool else "end_turn",
                                          "usage": {"input_tokens": 1200,
                                                    "output_tokens": 80}}})

    def bash(self, sid: str, tid: str, command: str, stdout: str = "",
             env: dict[str, str] | None = None) -> dict[str, Any] | None:
        """One Bash call: the model asks for it, PreToolUse, then PostToolUse if allowed."""
        self.assistant(sid, f"m-{tid}", f"running {tid}", tool=tid)
        tool = {"tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": tid}
        out = self.hook("PreToolUse", sid, env=env, **tool)
        decision = (out or {}).get("hookSpecificOutput", {}).get("permissionDecision")
        if decision in (None, "allow"):
            self.hook("PostToolUse", sid, env=env, **tool,
                      tool_response={"stdout": stdout, "stderr": "", "interrupted": False})
        return out

    def smllm(self, *args: str, env: dict[str, str] | None = None) -> str:
        proc = subprocess.run([sys.executable, "-m", "smllm", *args], capture_output=True,
                              text=True, env=_env(self.home, **(env or {})), cwd=self.project,
                              timeout=60, check=False)
        assert 0 == proc.returncode, proc.stderr
        return proc.stdout


def _approved(world: World) -> None:
    """Seed 000's sample: a read, an edit, a run, and rm -rf approved by the judge."""
    sid = APPROVED
    policy = world.project / ".smllm" / "policy.toml"
    policy.write_text('authority = "gate"\nreviewers = ["llm_judge"]\n'
                      '[llm_judge]\ntimeout = 5\n')
    with judge_server() as judge:
        judge.verdict("allow_once", "a stale cache file inside the project")
        env = {"ANTHROPIC_BASE_URL": judge.url, "ANTHROPIC_API_KEY": "sk-test"}
        world.hook("SessionStart", sid, source="startup")
        world.transcript(sid, {"type": "user", "message": {"role": "user", "content": "go"}})
        world.hook("UserPromptSubmit", sid, prompt="Add the Frobnitz-12 tier, run the "
                   "rollup, then delete the stale cache.")
        world.assistant(sid, "m-plan", "Let me look at the project first.")
        world.assistant(sid, "m-plan2", "I will run the rollup, then clean up.")
        world.bash(sid, "toolu_01", "python3 check_costs.py", "41.7\n", env=env)
        world.bash(sid, "toolu_02", "ls -la", "check_costs.py\nstale_cache.txt\n", env=env)
        world.bash(sid, "toolu_03", "rm -rf stale_cache.txt", env=env)
        world.assistant(sid, "m-end", "done")
        world.hook("Stop", sid, stop_hook_active=False, last_assistant_message="done")
        world.hook("SessionEnd", sid, reason="other")
        world.judge_bodies = list(judge.bodies)
    policy.unlink()


def _hostile(world: World) -> None:
    sid = HOSTILE
    world.hook("SessionStart", sid, source="startup")
    world.hook("UserPromptSubmit", sid, prompt=" ".join(XSS))
    for i, text in enumerate(XSS):
        world.bash(sid, f"toolu_x{i:02d}", f"echo '{text}'", stdout=text + "\n")
    world.hook("SessionEnd", sid, reason="other")


def _secret(world: World) -> None:
    sid = SECRET
    key, aws, gh, pw = SECRETS
    world.hook("SessionStart", sid, source="startup")
    world.hook("UserPromptSubmit", sid, prompt=f"use the key {key} to call the API")
    world.bash(sid, "toolu_s1", f"curl -H 'Authorization: Bearer {key}' https://api.example",
               stdout=f"AWS_ACCESS_KEY_ID={aws}\n")
    world.bash(sid, "toolu_s2", f"git push https://x:{gh}@github.com/o/r.git", stdout="ok\n")
    world.bash(sid, "toolu_s3", f"export DB_PASSWORD={pw}", stdout="")
    world.hook("SessionEnd", sid, reason="other")


def _running(world: World) -> None:
    sid = RUNNING
    world.hook("SessionStart", sid, source="startup")
    world.hook("UserPromptSubmit", sid, prompt="keep going")
    world.bash(sid, "toolu_r1", "make test", stdout="ok\n")


def _resumed(world: World) -> None:
    """A session in its own folder that crashed, was resumed and then ended cleanly; its
    one tool call (before the crash) a long truncate that Claude Code asked the user about."""
    sid = RESUMED
    folder = world.project.parent / "resumed_demo"
    (folder / ".git").mkdir(parents=True)
    (folder / "generated").mkdir()
    where = {"cwd": str(folder)}
    world.hook("SessionStart", sid, source="startup", **where)
    world.hook("UserPromptSubmit", sid, prompt="clear the generated reports", **where)
    tool = {"tool_name": "Bash", "tool_input": {"command": LONG_COMMAND},
            "tool_use_id": "toolu_long"}
    world.hook("PreToolUse", sid, **tool, **where)
    world.hook("PostToolUse", sid, **tool, **where,
               tool_response={"stdout": "", "stderr": "", "interrupted": False})
    # killed here: no Stop, no SessionEnd; then `claude --resume`
    world.hook("SessionStart", sid, source="resume", **where)
    world.hook("UserPromptSubmit", sid, prompt="go on", **where)
    world.hook("Stop", sid, stop_hook_active=False, **where)
    world.hook("SessionEnd", sid, reason="other", **where)


def write_session(home: Path, sid: str, entries: list[Any]) -> None:
    """Session ``sid``'s journal in ``home`` (with its by-id entry): ``entries`` written
    with the journal's own encoder, all at 2026-08-02T10:00:00Z."""
    from smllm import journal

    folder = home / "sessions" / "2026" / "08" / "02" / sid
    folder.mkdir(parents=True)
    by_id = home / "sessions" / "by-id"
    by_id.mkdir(parents=True, exist_ok=True)
    (by_id / sid).write_text("2026/08/02\n")
    prev = journal.GENESIS
    with open(folder / journal.LOG_NAME, "wb") as fh:
        for seq, entry in enumerate(entries, 1):
            line, _, prev = journal.encode_record(entry, sequence=seq, prev=prev,
                                                  recorded_at="2026-08-02T10:00:00.000Z",
                                                  skipped=0)
            fh.write(line)


def _long(world: World) -> None:
    """A session longer than one timeline page."""
    from smllm import journal

    entries = [journal.fact("session.start", {"session_id": LONG, "cwd": "/work/long"})]
    entries += [journal.event("proposed", turn=i, prompt=f"step {i}")
                for i in range(1, LONG_RECORDS - 1)]
    entries.append(journal.fact("session.end", {"exit_reason": "clean", "uptime_ms": 1}))
    write_session(world.home, LONG, entries)


def _gemini(world: World) -> None:
    """A short session Gemini CLI drove, in a folder of its own."""
    from smllm import journal

    write_session(world.home, GEMINI, [
        journal.fact("session.start", {"session_id": GEMINI, "cwd": "/work/gemini",
                                       "host": "gemini", "harness": "gemini"}),
        journal.fact("session.end", {"exit_reason": "clean", "uptime_ms": 1})])


def _machine(world: World) -> None:
    """fix bound to the approved session's host id, stopped in FIX (mid-way)."""
    smllm_dir = world.project / ".smllm"
    (smllm_dir / "fix.smllm.yaml").write_text(SEED_FIX.read_text())
    (smllm_dir / "config.toml").write_text('[machines]\nfiles = ["fix.smllm.yaml"]\n')
    host = "5e7a0c11-aaaa-4bbb-8ccc-0000000000ff"
    world.hook("SessionStart", host, source="startup")
    env = {"CLAUDE_CODE_SESSION_ID": host}
    world.smllm("fire", "enter", "--param", "stateMachine=fix", env=env)
    world.smllm("fire", "reproduced", "--param", "bugId=BUG-7", env=env)
    state_audit = world.home / "audit"
    keys = [k[:-6] for k in os.listdir(state_audit) if k.endswith(".jsonl")]
    assert 1 == len(keys), keys
    world.machine_key = keys[0]


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    """Journals of the real hooks (built once) under their own SMLLM_HOME."""
    root = tmp_path_factory.mktemp("serve-world")
    project = root / "billing_demo"
    (project / ".git").mkdir(parents=True)
    (project / ".smllm").mkdir()
    (project / "stale_cache.txt").write_text("cached rollup 2026-07-01\n")
    (project / "check_costs.py").write_text("print(round(1000 * 0.0417, 2))\n")
    w = World(root / "smllm-home", project)
    _approved(w)
    _hostile(w)
    _secret(w)
    _running(w)
    _long(w)
    _gemini(w)
    _resumed(w)
    _machine(w)
    return w


@dataclass
class Viewer:
    """A running ``smllm serve``: its URL (with the token), base and token."""

    proc: subprocess.Popen[str]
    url: str
    base: str
    token: str

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def start_viewer(home: Path, *args: str) -> Viewer:
    """``smllm serve --port 0 ARGS`` on ``home``; waits for the URL it prints."""
    proc = subprocess.Popen([sys.executable, "-m", "smllm", "serve", "--port", "0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_env(home), stdin=subprocess.DEVNULL)
    assert proc.stdout is not None
    first = proc.stdout.readline()
    if not first.startswith("smllm serve: http://"):
        proc.kill()
        raise AssertionError(f"smllm serve did not start: {first}{proc.communicate()[1]}")
    url = first.split()[2]
    base, token = url.split("/?token=")
    return Viewer(proc, url, base, token)


@pytest.fixture(scope="session")
def viewer(world: World) -> Iterator[Viewer]:
    """The default viewer (redacted) on the world."""
    v = start_viewer(world.home)
    try:
        yield v
    finally:
        v.stop()


@pytest.fixture(scope="session")
def raw_viewer(world: World) -> Iterator[Viewer]:
    """A viewer started with --raw."""
    v = start_viewer(world.home, "--raw")
    try:
        yield v
    finally:
        v.stop()


SHOTS: list[Path] = []


@pytest.fixture(scope="session")
def store_viewer(world: World, postgres: Any) -> Iterator[Viewer]:
    """The world shipped to a team store on the real PostgreSQL (host ``host-w``, user
    ``alice``), and a viewer started with ``--store`` on it, as the auditor ``carol``."""
    name = f"serve_world_{os.getpid()}"
    with postgres.connect() as conn:
        conn.execute(f"CREATE DATABASE {name}")
    admin = postgres.url(name)
    env = {"SMLLM_STORE_HOST": "host-w", "USER": "alice", "LOGNAME": "alice"}
    world.smllm("store", "init", "--url", admin)
    world.smllm("store", "grant", "alice", "--writer", "--url", admin)
    world.smllm("store", "grant", "carol", "--auditor", "--url", admin)
    world.smllm("ship", "--to", postgres.url(name, "alice"), "--all", env=env)
    v = start_viewer(world.home, "--store", postgres.url(name, "carol"))
    try:
        yield v
    finally:
        v.stop()
        with postgres.connect() as conn:
            conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Where screenshots are kept (gitignored); the run's summary lists them."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Name the screenshots the browser tests kept."""
    if SHOTS:
        terminalreporter.write_line(f"smllm serve screenshots ({len(SHOTS)}): {ARTIFACTS}/")
        for shot in SHOTS:
            terminalreporter.write_line(f"  {shot}")
