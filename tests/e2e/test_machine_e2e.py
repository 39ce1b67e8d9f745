"""Issue 5 acceptance 2: a state machine drives a real Claude Code session (scripted model).

SessionStart binds the host session; the agent enters `fix` with Bash `smllm fire` and
fires `reproduced` through the MCP tool; its first stop in TRIAGE is blocked with the
events text, a second stop without a fire is allowed and audited `runaway`; once DONE
is reached it stops freely.
"""


from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from harness import Harness, Run

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parent.parent.parent
SEED = REPO / "tests" / "golden" / "seed001"
KEY = "sm-eoneab"


def _audit(claude: Harness) -> list[dict[str, Any]]:
    path = claude.smllm_home / "audit" / f"{KEY}.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()]


def _calls(claude: Harness) -> list[tuple[str, str | None, str]]:
    return [(ln["call"], ln["event"], ln["outcome"]) for ln in _audit(claude)]


def _setup(claude: Harness) -> tuple[dict[str, str], list[str]]:
    smllm_dir = claude.project / ".smllm"
    smllm_dir.mkdir()
    for name in ("config.toml", "fix.smllm.yaml"):
        (smllm_dir / name).write_text((SEED / name).read_text())
    # the agent runs smllm itself from Bash here: without the sandbox, which keeps smllm's
    # store read-only to commands (tests/e2e/test_trust_e2e.py; docs/security.md)
    claude.install_smllm("--no-sandbox")
    env = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "SMLLM_IDS": f"{KEY},i-100001"}
    mcp = {"mcpServers": {"smllm": {"command": sys.executable, "args": ["-m", "smllm", "mcp"],
                                    "env": {"SMLLM_HOME": str(claude.smllm_home)}}}}
    return env, ["--mcp-config", json.dumps(mcp)]


def _bash(command: str, tool_id: str) -> dict[str, Any]:
    """A Bash tool call; ids are unique across runs (a resumed transcript keeps the old)."""
    return {"id": tool_id, "tool_use": {"name": "Bash", "input": {
        "command": command, "description": "fire an smllm event"}}}


def _run(claude: Harness, prompt: str, script: list[dict[str, Any]], env: dict[str, str],
         extra: list[str], resume: str | None = None) -> Run:
    run = claude.run(prompt, script=script, permission_mode="bypass", env=env,
                     extra_args=extra, resume=resume, timeout=180)
    assert 0 == run.returncode, run.describe()
    return run


def test_fix_machine_through_claude_code(claude: Harness) -> None:
    """Bind, enter by Bash, block then runaway in TRIAGE, MCP fire, DONE stops freely."""
    env, extra = _setup(claude)
    first = _run(claude, "Fix BUG-7.", [
        _bash("smllm fire enter --param stateMachine=fix", "toolu_e2e_enter"),
        {"text": "I am done."},
        {"text": "Stopping anyway."},
    ], env, extra)
    events_text = (SEED / "stop.txt").read_text().replace("sm-nqvfvw", KEY).replace(
        "i-419405", "i-100001")
    assert [("bind", None, "accepted"), ("fire", "enter", "accepted"),
            ("stop", None, "block"), ("stop", None, "runaway")] == _calls(claude)
    assert ("claude", first.session_id) == (_audit(claude)[0]["binding"]["harness"],
                                            _audit(claude)[0]["binding"]["hostSession"])
    assert first.model_saw(f"session {KEY} · idle"), "SessionStart gave the bind text"
    assert first.model_saw("Arrived by: enter (new bug)"), "Bash fire used $SMLLM_SESSION"
    assert first.model_saw(events_text.rstrip("\n")), first.describe()
    assert 3 == len(first.requests), "one block only: the second stop was let through"

    second = _run(claude, "Go on.", [
        {"id": "toolu_e2e_mcp", "tool_use": {"name": "mcp__smllm__smllm",
                      "input": {"session": KEY, "event": "reproduced",
                                "params": {"bugId": "BUG-7"}}}},
        _bash("smllm fire fixed", "toolu_e2e_fixed"),
        {"text": "Fixed: the cause was an off-by-one."},
    ], env, extra, resume=first.session_id)
    assert [("fire", "reproduced", "accepted"), ("fire", "fixed", "accepted"),
            ("stop", None, "accepted")] == _calls(claude)[4:]
    assert second.model_saw(f"session {KEY} · fix › FIX · bug BUG-7\nArrived by: "
                            "reproduced from TRIAGE"), "the MCP tool's reply reached the model"
    assert second.model_saw("bug BUG-7 is done: DONE is final"), second.describe()
    assert 3 == len(second.requests), "no stop block once DONE is reached"


def test_plugin_ships_the_skill(claude: Harness, plugin_clone: Path) -> None:
    """Claude Code loads the plugin's smllm-machines skill (it teaches firing events)."""
    run = claude.run("hello", script=[{"text": "Hi."}],
                     extra_args=["--plugin-dir", str(plugin_clone)],
                     env={"SMLLM_PLUGIN_BOOTSTRAP": "0"}, permission_mode="default")
    assert 0 == run.returncode, run.describe()
    assert "smllm-machines" in json.dumps(run.init), json.dumps(run.init)[:2000]
