"""The gate protects smllm itself: file tools through links, and smllm (un)install (issue 10)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tests.helpers import base, hook, hook_output, protect_check

from smllm import journal
from smllm.base import paths
from smllm.gate import protect


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    proj = tmp_path / "proj"
    (proj / ".claude").mkdir(parents=True)
    (proj / ".smllm").mkdir()
    os.symlink(".claude", proj / "cfg")
    os.symlink(proj / ".smllm", proj / "innocent")
    return proj


FILE_CASES = [
    ("Write", {"file_path": ".claude/settings.json"}, ".claude"),
    ("Write", {"file_path": "cfg/settings.json"}, ".claude"),
    ("Edit", {"file_path": "innocent/policy.toml"}, ".smllm"),
    ("MultiEdit", {"file_path": "sub/../.smllm/policy.toml"}, ".smllm"),
    ("NotebookEdit", {"notebook_path": ".smllm/n.ipynb"}, ".smllm"),
    ("Write", {"file_path": "~/.claude/settings.json"}, "home/.claude"),
    ("mcp__fs__write_file", {"path": "cfg/settings.local.json"}, ".claude"),
    ("mcp__fs__move_file", {"source": "a.txt", "destination": "innocent/policy.toml"}, ".smllm"),
    ("mcp__fs__read_file", {"path": ".claude/settings.json"}, None),
    # MCP tools as mcp.judge reads them: delete verbs, its path keys, lists of paths
    ("mcp__fs__unlink", {"path": "innocent/policy.toml"}, ".smllm"),
    ("mcp__fs__truncate", {"path": ".smllm/policy.toml"}, ".smllm"),
    ("mcp__fs__write_file", {"output_path": "cfg/settings.json"}, ".claude"),
    ("mcp__fs__write_file", {"files": ["src/a.py", ".smllm/policy.toml"]}, ".smllm"),
    ("mcp__fs__get_info", {"path": ".smllm/policy.toml"}, None),
    ("Write", {"file_path": "src/app.py"}, None),
    ("Read", {"file_path": ".smllm/policy.toml"}, None),
]


@pytest.mark.parametrize(("tool", "tool_input", "root"), FILE_CASES)
def test_file_tools_through_links(project: Path, tool: str, tool_input: dict[str, str],
                                  root: str | None) -> None:
    """A write naming the protected set, directly or through a link, is refused."""
    found = protect_check(tool, tool_input, str(project), str(project))
    where = str(project.parent / root) if root == "home/.claude" else str(project / (root or ""))
    expected = None if root is None else where
    changed = None if found is None else found.split(" would change ")[-1].split(", inside ")[-1]
    assert expected == (None if changed is None else changed.split(",")[0]), found


@pytest.mark.parametrize("tool_input", [
    {"command": "rm -f .smllm/policy.toml"},
    {"command": "sh", "args": ["-c", "echo x > cfg/settings.json"]},
    {"code": "open('.smllm/policy.toml', 'w').write('mode = \"yolo\"')", "language": "python"},
])
def test_commands_run_by_mcp_tools(project: Path, tool_input: dict[str, object]) -> None:
    """A command or code an MCP tool runs is checked as the same Bash command would be."""
    found = protect_check("mcp__shell__run_command", tool_input, str(project), str(project))
    assert (found or "").endswith(" (a command the MCP tool mcp__shell__run_command runs)"), found


def test_the_store_is_protected(project: Path) -> None:
    """smllm's own store is in the set, whatever SMLLM_HOME says."""
    target = os.path.join(paths.data_root(), "sessions", "x.jsonl")
    assert (f"smllm protects itself: Write of {target} would change {paths.data_root()}, "
            f"which the agent may not write") == protect_check(
        "Write", {"file_path": target}, str(project), str(project))


@pytest.mark.parametrize(("config_dir", "path", "root"), [
    (None, "~/.claude.json", "home/.claude.json"),
    (None, "~/.claude/settings.json", "home/.claude"),
    ("cc", "~/cc/.claude.json", "home/cc"),
    ("cc", "~/cc/settings.json", "home/cc"),
    ("cc", "~/.claude.json", None),  # Claude Code no longer reads it
])
def test_claude_codes_own_files_follow_claude_config_dir(
        project: Path, monkeypatch: pytest.MonkeyPatch, config_dir: str | None, path: str,
        root: str | None) -> None:
    """Claude Code's user folder and state file are protected where Claude Code reads them:
    ``$CLAUDE_CONFIG_DIR`` (and the ``.claude.json`` inside it) when set, else ``~``."""
    home = project.parent / "home"
    if config_dir is None:
        monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    else:
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / config_dir))
    found = protect_check("Write", {"file_path": path}, str(project), str(project))
    expected = None if root is None else (
        f"smllm protects itself: Write of {path} would change "
        f"{project.parent / root}, which the agent may not write")
    assert expected == found


@pytest.mark.parametrize(("command", "which"), [
    ("smllm uninstall", "uninstall"),
    ("smllm install --user", "install"),
    ("/home/u/.venv/bin/smllm uninstall --project .", "uninstall"),
    ("python3 -m smllm uninstall --project .", "uninstall"),
    ('bash -c "smllm uninstall"', "uninstall"),
    ("cd /tmp && ~/.claude/plugins/cache/smllm/hooks/launcher uninstall", "uninstall"),
    ("smllm export --last", None),
    ("echo install", None),
    ("pip install smllm", None),
])
def test_smllm_install_and_uninstall_are_refused(command: str, which: str | None) -> None:
    """The agent may not (un)install smllm, however it spells the command."""
    assert which == protect.self_command(command)


def test_hook_denies_in_yolo_mode(project: Path) -> None:
    """Even with mode = "yolo", a Write through a link into .claude is denied and journaled."""
    (project / ".smllm" / "policy.toml").write_text('mode = "yolo"\n')
    payload = base("PreToolUse", "protect-1", tool_name="Write", tool_use_id="toolu_1",
                   cwd=str(project), tool_input={"file_path": "cfg/settings.json",
                                                 "content": "{}"})
    proc = hook("PreToolUse", json.dumps(payload), cwd=project,
                env={"CLAUDE_PROJECT_DIR": str(project), "HOME": os.environ["HOME"]})
    out = hook_output(proc)
    assert out is not None
    intents = [journal.body_of(r) for r in journal.iter_records(
        journal.locate("protect-1", project=str(project)))
        if journal.kind_of(r) == "side_effect_intent"]
    assert (["deny"], ["deny:policy"], ["protect.self"]) == (
        [out["hookSpecificOutput"]["permissionDecision"]],
        [i["policy_decision"] for i in intents], [i["rule"] for i in intents])


@pytest.mark.parametrize(("command", "refused"), [
    ("smllm fire enter --param stateMachine=fix", False),
    ("smllm status", False),
    ("smllm fire done; python3 -c \"open('.smllm/policy.toml','w')\"", True),
    ("echo hi && smllm fire done", True),
    ("X=1 smllm fire done", True),
    ("smllm fire $(cat /tmp/x)", True),
    ("smllm fire done > .smllm/policy.toml", True),
    ("bash -c 'smllm status | sh'", True),
    ("ls -la", False),
])
def test_unsandboxed_fire_must_be_plain(command: str, refused: bool) -> None:
    """smllm fire/status run outside the sandbox, so only their plain form passes."""
    assert refused == protect.unsandboxed_fire(command)


@pytest.mark.parametrize(("command", "refused"), [
    ("curl -sf -o .smllm/policy.toml http://127.0.0.1:9/", True),
    ("ln -sf /dev/null .claude/settings.json", True),
    ("tar -xf /tmp/evil.tar -C .claude", True),
    ("cd .smllm && echo 'mode = \"yolo\"' > policy.toml", True),
    ("python3 -c \"open('.smllm/policy.toml','w')\"", True),
    ("D=.claude; echo x > $D/settings.json", True),
    ("cp cfg/settings.json backup.json", False),
    ("echo hi > out.txt && cp out.txt copy.txt", False),
    ("echo x > \"$OUT\"", False),
])
def test_shell_writes_into_the_set(project: Path, command: str, refused: bool) -> None:
    """Writes the analyser resolves into the set (any program, cd, variables) are refused;
    everyday writes are not."""
    found = protect_check("Bash", {"command": command}, str(project), str(project))
    assert refused == (found is not None), found


RECONCILE_CASES = [
    ("smllm reconcile 504 --outcome not-applied --evidence 'ledger has 7 lines'", "allow"),
    ("smllm reconcile 504 --outcome applied", "allow"),
    ("smllm reconcile 504 --outcome applied; rm -rf src", "deny"),
    ("CLAUDECODE= smllm reconcile 504 --outcome applied", "deny"),
    ("env -u CLAUDECODE smllm reconcile 504 --outcome applied", "deny"),
    ("smllm reconcile 504 --outcome applied --evidence \"$(cat ~/.ssh/id_rsa)\"", "deny"),
]


@pytest.mark.parametrize(("command", "answer"), RECONCILE_CASES)
def test_the_agent_may_reconcile_in_the_plain_form_only(tmp_path: Path, command: str,
                                                        answer: str) -> None:
    """The plain `smllm reconcile` is smllm's own (run outside the sandbox, recorded as the
    agent's claim) and allowed in any mode; anything else naming it is refused, so no
    variable or wrapper can change who the journal says verified the outcome."""
    from smllm.base.catalogue import ToolCall
    from smllm.gate import World, decide, policy

    project = str(tmp_path)
    call = ToolCall("Bash", {"command": command}, cwd=project, project=project)
    verdict = decide(call, World(policy.load(project)))
    rule = "reconcile.agent-claim" if answer == "allow" else "protect.self"
    assert (answer, rule) == (verdict.decision, verdict.rule)


HIDDEN_CASES = [
    ("Read", "file_path", "{home}/sessions/2026/01/01/other/session.jsonl", True),
    ("Read", "file_path", "{home}/key/journal.key", True),
    ("Read", "file_path", "linked/2026/01/01/other/session.jsonl", True),
    ("Read", "file_path", "~/.claude/projects/-work-other/t.jsonl", True),
    ("Grep", "path", "{home}", True),
    ("Grep", "path", "~", True),
    ("Glob", "path", "{home}/locks", True),
    ("Read", "file_path", "notes.txt", False),
    ("Glob", "path", "~", False),
    ("Read", "file_path", "{home}/config.toml", False),
]


@pytest.mark.parametrize(("tool", "key", "path", "denied"), HIDDEN_CASES)
def test_read_tools_cannot_read_what_the_sandbox_hides(
        project: Path, smllm_home: Path, tool: str, key: str, path: str, denied: bool) -> None:
    """Claude Code's Read, Grep and Glob run outside the sandbox: one that names another
    session's journal, smllm's key or locks, or Claude Code's transcripts (directly, or
    through a link the agent planted in the project), or a Grep of a folder holding them,
    is denied before any policy (yolo mode here); a project file, smllm's config and a Glob
    of the home folder are not."""
    (project / ".smllm" / "policy.toml").write_text('mode = "yolo"\n')
    os.symlink(smllm_home / "sessions", project / "linked")
    payload = base("PreToolUse", "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", cwd=str(project),
                   tool_name=tool, tool_use_id="toolu_h1",
                   tool_input={key: path.format(home=smllm_home)})
    out = hook_output(hook("PreToolUse", payload, env={"CLAUDE_PROJECT_DIR": str(project)}))
    decision = (out or {}).get("hookSpecificOutput", {})
    assert (denied, denied) == (decision.get("permissionDecision") == "deny",
                                "not for the agent to read" in decision.get(
                                    "permissionDecisionReason", "")), decision
