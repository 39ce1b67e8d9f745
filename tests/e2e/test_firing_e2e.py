"""Issue 12 acceptance 2 and 3, through the real Claude Code CLI in its DEFAULT permission
mode (``claude -p``: a call that would need approval is refused, nobody is asked).

* plugin route: the agent drives ``fix`` from idle to DONE with the plugin's MCP tool;
* settings route (``smllm install --project``, folder not trusted, as in CI): it enters
  and finishes with ``smllm fire`` in Bash and moves on with the MCP tool that install
  registered; in both, the Stop hook blocks half-way with a text naming that MCP tool;
* a broken machine file: the Stop hook blocks with the error (file:line:col), once.

SMLLM_HOME is unset, as for a user: hooks, the MCP server and ``smllm fire`` all find the
store under the scratch HOME.
"""


from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from harness import Harness, Run

from helpers import allow_test_knobs

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parent.parent.parent
SEED = REPO / "tests" / "golden" / "seed001"


def _project_machines(claude: Harness, fix: str | None = None) -> None:
    """The seed's machine in the project; the platform's config folder (the home of these
    runs) allows the test knobs (SMLLM_IDS: the session keys)."""
    config = claude.home / ".config" / "smllm"
    config.mkdir(parents=True, mode=0o700)
    allow_test_knobs(config)
    smllm_dir = claude.project / ".smllm"
    smllm_dir.mkdir()
    (smllm_dir / "config.toml").write_text((SEED / "config.toml").read_text())
    (smllm_dir / "fix.smllm.yaml").write_text(fix or (SEED / "fix.smllm.yaml").read_text())


def _state_home(claude: Harness) -> Path:
    return claude.home / ".local" / "state" / "smllm"


def _audit(claude: Harness, key: str) -> list[tuple[str, str | None, str]]:
    path = _state_home(claude) / "audit" / f"{key}.jsonl"
    return [(ln["call"], ln["event"], ln["outcome"])
            for ln in map(json.loads, path.read_text().splitlines())]


def _env(key: str) -> dict[str, str | None]:
    return {"SMLLM_HOME": None, "SMLLM_IDS": f"{key},i-200001",
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def _mcp(name: str, tool_id: str, key: str, event: str, **params: str) -> dict[str, Any]:
    return {"id": tool_id, "tool_use": {"name": name, "input": {
        "session": key, "event": event, "params": params}}}


def _bash(command: str, tool_id: str) -> dict[str, Any]:
    return {"id": tool_id, "tool_use": {"name": "Bash", "input": {
        "command": command, "description": "fire an smllm event"}}}


def _refused(run: Run) -> list[str]:
    """Tool results Claude Code refused for lack of permission."""
    return [str(r.get("content")) for r in run.tool_results()
            if "requires approval" in str(r.get("content"))
            or "haven't granted it yet" in str(r.get("content"))]


def _fire_line(key: str) -> str:
    return f'Fire one event: smllm({{ session: "{key}", event, params }})\n<events>\n'


def test_plugin_route_fires_idle_to_done_via_mcp(claude: Harness, plugin_clone: Path) -> None:
    """Plugin route, default mode: enter, (stop blocked in TRIAGE), reproduced, fixed — all
    through mcp__plugin_smllm_smllm__smllm, none refused."""
    key = "sm-plugin"
    _project_machines(claude)
    tool = "mcp__plugin_smllm_smllm__smllm"
    run = claude.run("Fix BUG-7.", permission_mode="default", timeout=180, env={
        **_env(key), "SMLLM_PLUGIN_BOOTSTRAP": "0", "SMLLM_PYTHON": sys.executable},
        extra_args=["--plugin-dir", str(plugin_clone)], script=[
            _mcp(tool, "toolu_p_enter", key, "enter", stateMachine="fix"),
            {"text": "I am done."},
            _mcp(tool, "toolu_p_repro", key, "reproduced", bugId="BUG-7"),
            _mcp(tool, "toolu_p_fixed", key, "fixed"),
            {"text": "Fixed: an off-by-one."}])
    assert (0, []) == (run.returncode, _refused(run)), run.describe()
    assert [("bind", None, "accepted"), ("fire", "enter", "accepted"), ("stop", None, "block"),
            ("fire", "reproduced", "accepted"), ("fire", "fixed", "accepted"),
            ("stop", None, "accepted")] == _audit(claude, key)
    assert run.model_saw(_fire_line(key)), "the stop block names the plugin's MCP tool"
    assert run.model_saw("bug BUG-7 is done: DONE is final"), run.describe()


def test_settings_route_fires_via_bash_and_mcp(claude: Harness) -> None:
    """Settings route, default mode, untrusted folder, no allow rule at all: `smllm fire`
    in Bash enters and finishes, the MCP tool install registered moves on, and the stop
    block half-way names that MCP tool."""
    key = "sm-setting"
    _project_machines(claude)
    claude.smllm("install", "--project", str(claude.project), check=True, env={"SMLLM_HOME": None})
    run = claude.run("Fix BUG-7.", permission_mode="default", timeout=180, env=_env(key), script=[
        _bash("smllm fire enter --param stateMachine=fix", "toolu_s_enter"),
        {"text": "I am done."},
        _mcp("mcp__smllm__smllm", "toolu_s_repro", key, "reproduced", bugId="BUG-7"),
        _bash("smllm fire fixed", "toolu_s_fixed"),
        {"text": "Fixed: an off-by-one."}])
    assert (0, []) == (run.returncode, _refused(run)), run.describe()
    settings = json.loads((claude.project / ".claude" / "settings.json").read_text())
    assert ("permissions", "") == ("permissions" if "permissions" not in settings else "rules",
                                   run.stderr), "no allow rule was in play, and none was ignored"
    assert [("bind", None, "accepted"), ("fire", "enter", "accepted"), ("stop", None, "block"),
            ("fire", "reproduced", "accepted"), ("fire", "fixed", "accepted"),
            ("stop", None, "accepted")] == _audit(claude, key)
    assert run.model_saw(_fire_line(key)), "the stop block names the MCP tool install registered"
    assert run.model_saw(f"session {key} · fix › FIX · bug BUG-7\nArrived by: reproduced")


BROKEN = "id: fix\ninitial: TRIAGE\nstates:\n  TRIAGE:\n    on:\n      yes: DONE\n"


def test_broken_machine_blocks_the_stop_with_its_error(claude: Harness) -> None:
    """Acceptance 3: a machine file that does not load; the agent is told at the start, its
    first stop is blocked with the error and its position, the stop after it goes through."""
    _project_machines(claude, BROKEN)
    claude.smllm("install", "--project", str(claude.project), check=True, env={"SMLLM_HOME": None})
    run = claude.run("Fix BUG-7.", permission_mode="default", timeout=120,
                     env=_env("sm-broken"), script=[{"text": "Done."}, {"text": "Told them."}])
    error = ("the state machines cannot be loaded: .smllm/fix.smllm.yaml:6:7: key 'yes' is a "
             "boolean in YAML 1.1")
    assert 0 == run.returncode, run.describe()
    assert (True, True, 2) == (run.model_saw(f"smllm: {error}"),
                               run.model_saw(f"<smllm>\nerror: {error}"),
                               len(run.requests)), run.describe()
    assert ["stop_blocked", "completed"] == [
        k for k in _kinds(claude, run.session_id) if k in ("stop_blocked", "completed")]


def _kinds(claude: Harness, session_id: str) -> list[str]:
    """Record kinds of a session's journal in the scratch HOME's store."""
    (log,) = (claude.home / ".local" / "share" / "smllm" / "sessions").glob(
        f"*/*/*/{session_id}/session.jsonl")
    out = []
    for line in log.read_text().splitlines():
        rec = json.loads(line)
        out.append(rec["payload"].get("event", {}).get("kind") or rec["payload_type"])
    return out
