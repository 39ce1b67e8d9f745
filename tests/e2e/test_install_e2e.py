"""Issue 3 acceptance 1, 4 and 7 through the real Claude Code CLI: install routes."""


from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from harness import REPO, Harness, Run

pytestmark = pytest.mark.e2e

TWO_TOOLS: list[dict[str, Any]] = [
    {"tool_use": {"name": "Bash", "input": {"command": "echo hi > a.txt",
                                            "description": "write a.txt"}}},
    {"tool_use": {"name": "Bash", "input": {"command": "cat a.txt", "description": "read it"}}},
    {"text": "Both done."},
]

#: the record kinds acceptance 1 names, in the order they must first appear
LIFECYCLE = ["session.start", "proposed", "side_effect_intent", "tool_batch.effect.terminal",
             "completed", "session.end"]


def _base_python() -> str:
    """The interpreter this venv was made from (a fresh machine's python3)."""
    return os.path.realpath(getattr(sys, "_base_executable", sys.executable))


def _first_positions(kinds: list[str], wanted: list[str]) -> list[int]:
    return [kinds.index(k) if k in kinds else -1 for k in wanted]


def assert_journaled(run: Run) -> None:
    kinds = run.journal_kinds()
    positions = _first_positions(kinds, LIFECYCLE)
    assert (True, sorted(positions)) == (-1 not in positions, positions), run.describe()
    assert (2, 2) == (kinds.count("side_effect_intent"),
                      kinds.count("tool_batch.effect.terminal")), kinds
    assert "session.end" == kinds[-1]
    assert "hi\n" == (run.project / "a.txt").read_text()  # the tools really ran


def test_fresh_clone_installer_then_claude_runs_two_tools(claude: Harness, tmp_path: Path) -> None:
    """Fresh clone → installer/install.sh PROJECT → claude -p with two tools → journal + verify."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True,
                   capture_output=True)
    venv = tmp_path / "venv"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(claude.home), "PYTHON": _base_python(),
           "SMLLM_VENV": str(venv), "SMLLM_HOME": str(claude.smllm_home),
           "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(claude.wheels)}
    proc = subprocess.run(["bash", str(clone / "installer" / "install.sh"), str(claude.project)],
                          env=env, capture_output=True, text=True, timeout=600, check=False)
    assert 0 == proc.returncode, proc.stdout + proc.stderr
    settings = json.loads((claude.project / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    exe = venv / "bin" / "smllm-hook"
    # the Python hook: smllm-hook itself, or smllm-hook.py behind the native client (a C
    # compiler on this machine: smllm.worker)
    script = exe.with_name("smllm-hook.py") if exe.read_bytes()[:4] == b"\x7fELF" else exe
    assert (f"{exe} PreToolUse --home {claude.smllm_home}",
            f"#!{venv / 'bin' / 'python'} -IS") == (
        command, script.read_text().splitlines()[0])
    run = claude.run("write a.txt then read it", script=TWO_TOOLS)
    assert (0, "Both done.") == (run.returncode, (run.result or {}).get("result")), run.describe()
    assert_journaled(run)
    assert run.model_saw("hi")
    verify = subprocess.run([str(venv / "bin" / "smllm"), "verify", run.session_id], env=env,
                            capture_output=True, text=True, check=False)
    assert (0, "ok: ") == (verify.returncode, verify.stdout[:4]), verify.stdout + verify.stderr


@pytest.mark.parametrize("flags", [(), ("--local",)], ids=["project", "local"])
def test_project_and_local_installs_fire(claude: Harness, flags: tuple[str, ...]) -> None:
    """smllm install --project DIR [--local]: Claude Code runs the hooks from that file."""
    claude.install_smllm(*flags)
    name = "settings.local.json" if flags else "settings.json"
    assert [name] == sorted(p.name for p in (claude.project / ".claude").iterdir())
    run = claude.run("go", script=TWO_TOOLS)
    assert 0 == run.returncode, run.describe()
    assert_journaled(run)


def test_user_install_fires(claude: Harness) -> None:
    """smllm install --user writes ~/.claude/settings.json and Claude Code runs those hooks."""
    proc = claude.smllm("install", "--user", check=True)
    assert (claude.home / ".claude" / "settings.json").is_file(), proc.stdout
    assert not (claude.project / ".claude").exists()
    run = claude.run("go", script=TWO_TOOLS)
    assert 0 == run.returncode, run.describe()
    assert_journaled(run)


OTHER_HOOK = r'''
import json, os, sys, time
data = json.load(sys.stdin)
log = os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "other-hook.jsonl")
start = time.time()
time.sleep(1.0)
with open(log, "a") as fh:
    fh.write(json.dumps({"tool_use_id": data.get("tool_use_id"), "start": start,
                         "end": time.time()}) + "\n")
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                  "additionalContext": "OTHER-HOOK-CONTEXT for " + data["tool_name"]}}))
'''


def _add_other_hook(claude: Harness) -> None:
    script = claude.project / "other_hook.py"
    script.write_text(OTHER_HOOK)
    path = claude.project / ".claude" / "settings.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data.setdefault("hooks", {}).setdefault("PreToolUse", []).insert(0, {
        "matcher": "Bash", "hooks": [{"type": "command", "timeout": 30,
                                      "command": f"{sys.executable} {script}"}]})
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def assert_ran_side_by_side(run: Run, project: Path) -> None:
    """Both PreToolUse hooks started before either answered, and both did their job."""
    pre = [e for e in run.hook_events if e.get("hook_event") == "PreToolUse"]
    first_round = [e["subtype"] for e in pre[:4]]
    assert ["hook_started", "hook_started"] == first_round[:2], first_round
    other = [json.loads(line) for line in (project / "other-hook.jsonl").read_text().splitlines()]
    assert 2 == len(other)
    assert run.model_saw("OTHER-HOOK-CONTEXT for Bash")
    intents = [r for r in run.journal() if (r["payload"].get("event") or {}).get("kind")
               == "side_effect_intent"]
    assert [o["tool_use_id"] for o in other] == [i["payload"]["event"]["tool_use_id"]
                                                 for i in intents]
    # smllm's intent was durable while the other (1 s) hook was still running
    stamps = [i["recorded_at"] for i in intents]
    from datetime import datetime

    for o, stamp in zip(other, stamps, strict=True):
        at = datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
        assert o["start"] - 0.5 < at < o["end"], (o, stamp)


def test_smllm_and_a_project_hook_share_an_event(claude: Harness) -> None:
    """Acceptance 7: smllm and another PreToolUse hook both run, in parallel, unharmed."""
    claude.install_smllm()
    _add_other_hook(claude)
    run = claude.run("go", script=TWO_TOOLS)
    assert (0, "Both done.") == (run.returncode, (run.result or {}).get("result")), run.describe()
    assert_journaled(run)
    assert_ran_side_by_side(run, claude.project)
    assert "hi\n" == (claude.project / "a.txt").read_text()
