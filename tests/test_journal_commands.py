"""The agent's journal commands, run by the PreToolUse hook on its own session (issue 19:
confidentiality; issue 20 acceptance 5: they keep working inside the sandbox)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from tests.helpers import base, hook, hook_output, kind, records

from smllm.base.catalogue import ToolCall
from smllm.harness import journal_commands

SID = "3c1d9a52-6b1e-4f0a-8d2c-7e5f9b1a2c3d"
OTHER = "8f2e6c14-2d3b-4a5c-9e7f-1b2c3d4e5f60"


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    return project


def _start(project: Path, sid: str = SID) -> None:
    env = {"CLAUDE_PROJECT_DIR": str(project)}
    assert 0 == hook("SessionStart", base("SessionStart", sid, cwd=str(project),
                                          source="startup"), env=env).returncode


def _bash(project: Path, command: str, tid: str = "toolu_j1",
          sid: str = SID) -> dict[str, Any]:
    """One PreToolUse of a Bash call in ``project``; the hook's answer ({} when it leaves
    the call to Claude Code)."""
    payload = base("PreToolUse", sid, cwd=str(project), tool_name="Bash",
                   tool_input={"command": command}, tool_use_id=tid)
    proc = hook("PreToolUse", payload, env={"CLAUDE_PROJECT_DIR": str(project)})
    out = hook_output(proc)
    assert 0 == proc.returncode, proc.stderr
    return {} if out is None else dict(out["hookSpecificOutput"])


def _intents(sid: str = SID) -> list[dict[str, Any]]:
    return [r["payload"]["event"] for r in records(sid) if kind(r) == "side_effect_intent"]


def test_ledger_of_this_session_is_read_by_the_hook(tmp_path: Path) -> None:
    """`smllm ledger --last --plain`: the hook runs it on this session's journal and denies
    the call with its output, which names this session's own earlier call; the journal
    says smllm ran it (intent allow:policy, started and terminal ran_by smllm)."""
    project = _project(tmp_path)
    _start(project)
    _bash(project, "echo marker-4c1", tid="toolu_first")
    answer = _bash(project, "smllm ledger --last --plain")
    text = answer["permissionDecisionReason"]
    assert ("deny", True, True) == (answer["permissionDecision"],
                                    text.startswith(journal_commands.HEAD),
                                    "echo marker-4c1" in text), text
    last = _intents()[-1]
    assert ("allow:policy", "journal.command-in-hook", "smllm") == (
        last["policy_decision"], last["rule"], last["ran_by"])
    terminal = [r["payload"]["record"] for r in records(SID)
                if kind(r) == "tool_batch.effect.terminal"][-1]
    assert ("succeeded", "ledger", 0, "smllm") == (terminal["outcome"], terminal["command"],
                                                   terminal["exit_code"], terminal["ran_by"])


def test_verify_reads_this_session_only(tmp_path: Path) -> None:
    """`smllm verify` names this session's journal; `smllm verify OTHER` (another session
    that exists) is refused, journaled as smllm's deny, and shows nothing of it."""
    project = _project(tmp_path)
    _start(project, OTHER)
    _bash(project, "echo secret-of-the-other-7f3", tid="toolu_other", sid=OTHER)
    _start(project)
    ours = _bash(project, "smllm verify")["permissionDecisionReason"]
    assert (True, True, False) == ("unfinished: " in ours, SID in ours, OTHER in ours), ours
    theirs = _bash(project, f"smllm verify {OTHER}", tid="toolu_j2")
    assert ("deny", False) == (theirs["permissionDecision"],
                               "secret-of-the-other" in theirs["permissionDecisionReason"])
    assert theirs["permissionDecisionReason"].startswith(
        "smllm reads you only the journal of the session you run in")
    last = _intents()[-1]
    assert ("deny:policy", "journal.command-refused") == (last["policy_decision"],
                                                          last["rule"])


def test_export_lands_in_the_project_and_nowhere_else(tmp_path: Path) -> None:
    """`smllm export --last --out t.json` writes this session's export into the project;
    an --out in the protected set, outside the project or through a linked folder is
    refused, and nothing is written there."""
    project = _project(tmp_path)
    _start(project)
    ok = _bash(project, "smllm export --last --out t.json")["permissionDecisionReason"]
    doc = json.loads((project / "t.json").read_text())
    assert (f"{project / 't.json'}" in ok, SID) == (True, doc["sessions"][0]["session_id"])
    assert 0o600 == (project / "t.json").stat().st_mode & 0o777
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (project / "linked").symlink_to(outside)
    (project / ".claude").mkdir()
    for i, out in enumerate((".claude/settings.local.json", "../elsewhere/t.json",
                             "linked/t.json")):
        text = _bash(project, f"smllm export --last --out {out}",
                     tid=f"toolu_x{i}")["permissionDecisionReason"]
        assert (True, True) == ("smllm: error: export" in text, "(exit status 1)" in text), text
    assert ([], []) == (list((project / ".claude").iterdir()), list(outside.iterdir()))


def test_an_option_the_hook_does_not_run_is_refused_with_the_forms(tmp_path: Path) -> None:
    """`smllm ledger --last --html x.html`: refused, the reason lists what the hook runs."""
    project = _project(tmp_path)
    _start(project)
    answer = _bash(project, "smllm ledger --last --html x.html")
    assert answer["permissionDecisionReason"].endswith(journal_commands.FORMS)
    assert not (project / "x.html").exists()


def test_a_long_output_is_cut_with_a_note() -> None:
    """An output over the limit is cut on a line boundary and says how to get the rest."""
    text = "\n".join(f"row {i:06d} " + "x" * 80 for i in range(1000))
    reason = journal_commands.reason(journal_commands.Ran(True, 0, text, None))
    assert (True, True) == (len(reason) <= journal_commands.LIMIT + 300,
                            "more characters not shown" in reason)


@pytest.mark.parametrize(("command", "expected"), [
    ("smllm ledger --last --json", ("ledger", "last", ("--json",), None, None)),
    ("smllm ledger --journal=abc --effects", ("ledger", "abc", ("--effects",), None, None)),
    ("smllm export", ("export", None, (), None, None)),
    ("smllm verify --store", ("verify", None, (), None, "--store")),
    ("smllm verify abc --json", ("verify", "abc", ("--json",), None, None)),
])
def test_parse(command: str, expected: tuple[Any, ...]) -> None:
    """The forms the hook reads, literally."""
    assert expected == tuple(journal_commands.parse(command) or ())


@pytest.mark.parametrize("command", [
    "smllm export --schema", "smllm ledger t.json --plain", "X=1 smllm verify",
    "smllm verify; cat /etc/passwd", "smllm verify $(id)", "python -m smllm verify",
    "smllm sessions",
])
def test_not_a_journal_command(command: str) -> None:
    """What reads a project file, or is not one plain command, is left to the gate."""
    assert journal_commands.parse(command) is None


def test_write_into_project_walks_no_link(tmp_path: Path) -> None:
    """A folder that is a link, anywhere on the way, fails the walk."""
    project = _project(tmp_path)
    (project / "a").mkdir()
    (project / "a" / "b").symlink_to(tmp_path)
    src = tmp_path / "src.json"
    src.write_text("{}")
    call = ToolCall("Bash", {"command": "x"}, cwd=str(project), project=str(project))
    with pytest.raises(Exception, match="follows no link"):
        journal_commands.write_into_project(str(src), "a/b/t.json", call)
    where = journal_commands.write_into_project(str(src), "a/t.json", call)
    assert (str(project / "a" / "t.json"), "{}") == (where, Path(where).read_text())
    assert not os.path.exists(tmp_path / "t.json")
