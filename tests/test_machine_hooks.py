"""The hooks' view of machines: binding, locations, per-state tool rules, no leaks."""


from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from machine_project import REPO, Project
from smllm.machine import locations


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """machines/fix.smllm.yaml (TRIAGE may edit only tests) in a fresh project."""
    return Project(tmp_path / "project",
                   {"fix.smllm.yaml": (REPO / "machines" / "fix.smllm.yaml").read_text()})


def _bind(project: Project, host: str = "cc-1") -> str:
    project.hook("SessionStart", host=host, source="startup")
    key = locations.read_binding("claude", host)
    assert key is not None
    return key


def test_no_config_means_no_binding_and_no_output(tmp_path: Path) -> None:
    """Without .smllm/config.toml the hooks stay neutral: no bind, no block."""
    bare = tmp_path / "bare"
    bare.mkdir()
    p = Project.__new__(Project)
    p.root = bare
    outputs = [p.hook("SessionStart", source="startup"),
               p.hook("Stop", stop_hook_active=False)]
    assert ([None, None], None, []) == (outputs, locations.read_binding("claude", "cc-1"),
                                        locations.all_keys())


def test_resume_keeps_the_session_and_gives_the_location(project: Project) -> None:
    """A resumed host session keeps its smllm session and is told where it is."""
    key = _bind(project)
    project.fire(key, "enter", stateMachine="fix")
    out = project.hook("SessionStart", source="resume")
    context = out["hookSpecificOutput"]["additionalContext"] if out else ""
    assert (key, [key]) == (locations.read_binding("claude", "cc-1"), locations.all_keys())
    assert f"session {key} · fix › TRIAGE · bug " in context
    assert "<instructions>\nWrite a test that reproduces the bug" in context


def test_prompt_gets_the_location_only_inside_a_machine(project: Project) -> None:
    """UserPromptSubmit adds the location while an instance is active, nothing when idle."""
    key = _bind(project)
    idle = project.hook("UserPromptSubmit", prompt="hi", permission_mode="default")
    project.fire(key, "enter", stateMachine="fix")
    inside = project.hook("UserPromptSubmit", prompt="go", permission_mode="default")
    assert idle is None
    assert inside is not None
    assert inside["hookSpecificOutput"]["additionalContext"].startswith(
        f"<smllm>\nsession {key} · fix › TRIAGE · bug ")


TOOLS = [
    ("Edit", {"file_path": "src/app.py", "old_string": "a", "new_string": "b"}, "deny"),
    ("Write", {"file_path": "{root}/src/new.py", "content": "x"}, "deny"),
    ("Edit", {"file_path": "tests/test_app.py", "old_string": "a", "new_string": "b"}, None),
    ("Write", {"file_path": "{root}/tests/unit/test_new.py", "content": "x"}, None),
    ("Edit", {"file_path": "{root}/tests/../src/app.py", "old_string": "a",
              "new_string": "b"}, "deny"),
    ("Read", {"file_path": "src/app.py"}, None),
    ("Bash", {"command": "pytest -q"}, None),
    ("WebFetch", {"url": "https://example.com", "prompt": "x"}, "deny"),
    ("mcp__smllm__smllm", {"event": "reproduced"}, None),
    ("mcp__plugin_smllm_smllm__smllm", {"event": "reproduced"}, None),
    ("mcp__evil__smllm", {"event": "reproduced"}, "deny"),
]


@pytest.mark.parametrize(("tool", "tool_input", "expected"), TOOLS)
def test_triage_may_edit_only_tests(project: Project, tool: str,
                                    tool_input: dict[str, str], expected: str | None) -> None:
    """PreToolUse enforces TRIAGE's meta.tools: tests may change, sources may not."""
    key = _bind(project)
    project.fire(key, "enter", stateMachine="fix")
    filled = {k: v.replace("{root}", str(project.root)) for k, v in tool_input.items()}
    out = project.hook("PreToolUse", tool_name=tool, tool_input=filled,
                       tool_use_id="toolu_1", permission_mode="default")
    decision = (out or {}).get("hookSpecificOutput", {}).get("permissionDecision")
    assert expected == (decision if decision == "deny" else None)
    if expected == "deny":
        reason = out["hookSpecificOutput"]["permissionDecisionReason"]
        assert reason.startswith("smllm: bug i-")
        assert "is in TRIAGE, where " in reason


def test_fix_state_has_no_tool_rules(project: Project) -> None:
    """After reproduced, FIX has no meta.tools: editing sources is no longer denied."""
    key = _bind(project)
    project.fire(key, "enter", stateMachine="fix")
    project.fire(key, "reproduced", bugId="BUG-7")
    out = project.hook("PreToolUse", tool_name="Edit",
                       tool_input={"file_path": "src/app.py", "old_string": "a",
                                   "new_string": "b"},
                       tool_use_id="toolu_2", permission_mode="default")
    decision = (out or {}).get("hookSpecificOutput", {}).get("permissionDecision")
    assert decision != "deny"


def test_two_host_sessions_never_leak(project: Project) -> None:
    """Two host sessions in one project get two smllm sessions with separate states."""
    one = _bind(project, "cc-1")
    two = _bind(project, "cc-2")
    project.fire(one, "enter", stateMachine="fix")
    stop_two = project.hook("Stop", host="cc-2", stop_hook_active=False)
    stop_one = project.hook("Stop", host="cc-1", stop_hook_active=False)
    assert one != two
    assert stop_two is None
    assert stop_one is not None
    assert "block" == stop_one["decision"]
    assert ["bind", "stop"] == [ln["call"] for ln in locations.read_audit(two)]


def test_subagent_hooks_do_not_drive_the_session(project: Project) -> None:
    """A subagent's hook events (agent_id set) neither bind nor block."""
    key = _bind(project)
    project.fire(key, "enter", stateMachine="fix")
    before = len(locations.read_audit(key))
    out = project.hook("PreToolUse", tool_name="Edit", agent_id="agent-1",
                       agent_type="general-purpose",
                       tool_input={"file_path": "tests/t.py", "old_string": "a",
                                   "new_string": "b"},
                       tool_use_id="toolu_3", permission_mode="default")
    decision = (out or {}).get("hookSpecificOutput", {}).get("permissionDecision")
    assert (before, True) == (len(locations.read_audit(key)), decision != "deny")


def test_stop_hook_blocks_once_then_runaway(project: Project) -> None:
    """Through the real Stop hook: block, then (no fire) allowed and audited runaway."""
    key = _bind(project)
    project.fire(key, "enter", stateMachine="fix")
    first = project.hook("Stop", stop_hook_active=False)
    second = project.hook("Stop", stop_hook_active=True)
    assert ("block", None) == ((first or {}).get("decision"), second)
    assert ["block", "runaway"] == [ln["outcome"] for ln in locations.read_audit(key)[-2:]]


BROKEN = ("error: the state machines cannot be loaded: {where}:3:3: key 'yes' is a boolean "
          "in YAML 1.1")


def _stop_reason(out: dict[str, Any] | None) -> str | None:
    return out["reason"] if out else None


def test_broken_machine_fails_closed_and_says_so(project: Project) -> None:
    """A machine file that cannot be loaded: SessionStart reports it, the Stop hook blocks
    with the error (file:line:col), and the stop after that block goes through (runaway)."""
    (project.root / ".smllm" / "fix.smllm.yaml").write_text("id: fix\non:\n  yes: DONE\n")
    start = project.hook("SessionStart", source="startup")
    stop = _stop_reason(project.hook("Stop", stop_hook_active=False))
    again = project.hook("Stop", stop_hook_active=True)
    context = start["hookSpecificOutput"]["additionalContext"] if start else ""
    assert context.startswith("smllm: the state machines cannot be loaded: ")
    assert "fix.smllm.yaml:3:3: key 'yes' is a boolean in YAML 1.1" in context
    where = ".smllm/fix.smllm.yaml"
    assert (True, True, None) == (stop is not None and stop.startswith("<smllm>\n"),
                                  stop is not None and BROKEN.format(where=where) in stop, again)


def test_machine_broken_after_the_bind_blocks_the_stop(project: Project) -> None:
    """A machine file edited into a broken state mid-session: the bound session's Stop
    blocks with the error too, once."""
    _bind(project, "cc-9")
    project.hook("UserPromptSubmit", host="cc-9", prompt="go")
    (project.root / ".smllm" / "fix.smllm.yaml").write_text("id: fix\non:\n  yes: DONE\n")
    stop = _stop_reason(project.hook("Stop", host="cc-9", stop_hook_active=False))
    again = project.hook("Stop", host="cc-9", stop_hook_active=True)
    assert (True, None) == (stop is not None and BROKEN.format(
        where=".smllm/fix.smllm.yaml") in stop, again)


def test_fire_finds_the_session_of_its_claude_session(project: Project) -> None:
    """Without SMLLM_SESSION, `smllm fire` uses the session bound to $CLAUDE_CODE_SESSION_ID."""
    key = _bind(project, "cc-7")
    proc = project.cli("fire", "enter", "--param", "stateMachine=fix",
                       env={"CLAUDE_CODE_SESSION_ID": "cc-7"})
    assert (0, ["bind", "fire"]) == (proc.returncode,
                                     [ln["call"] for ln in locations.read_audit(key)])
