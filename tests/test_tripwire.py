"""The tripwire (smllm.tripwire) and the file tools' check of links and folders made in the
session (gate/protect.py), through the real hooks and commands (subprocesses, as Claude
Code runs them): what the host writes unsandboxed is noticed, restored and journaled,
gated calls wait for a person's answer, and neither a person's edit between sessions nor
Claude Code's own write on a prompt answer is fought."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from helpers import base, hook, hook_output, kind, records, smllm
from smllm.base import protected

SID = "7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f"
OTHER = "0f9e8d7c-6b5a-4948-8372-6a5b4c3d2e1f"
POLICY = 'mode = "on-request"\n'


class Project:
    """An installed project (the tripwire armed) and the hooks of one session in it."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.home = tmp_path / "home"
        self.home.mkdir()
        monkeypatch.setenv("HOME", str(self.home))
        self.root = tmp_path / "p"
        (self.root / ".smllm").mkdir(parents=True)
        (self.root / ".git").mkdir()
        (self.root / ".smllm" / "policy.toml").write_text(POLICY)
        self.env = {"CLAUDE_PROJECT_DIR": str(self.root)}
        proc = smllm("install", "--project", str(self.root), "--no-sandbox", cwd=self.root)
        assert 0 == proc.returncode, proc.stderr
        self.n = 0

    def hook(self, event: str, sid: str = SID, **extra: Any) -> dict[str, Any] | None:
        proc = hook(event, base(event, sid, cwd=str(self.root), **extra), env=self.env,
                    cwd=self.root)
        assert 0 == proc.returncode, proc.stderr
        return hook_output(proc)

    def start(self, sid: str = SID) -> None:
        self.hook("SessionStart", sid, source="startup")

    def call(self, tool: str, tool_input: dict[str, Any], sid: str = SID) -> tuple[str, str]:
        """PreToolUse: (decision, reason)."""
        self.n += 1
        out = self.hook("PreToolUse", sid, tool_name=tool, tool_input=tool_input,
                        tool_use_id=f"toolu_{self.n}") or {}
        spec = out.get("hookSpecificOutput", {})
        return spec.get("permissionDecision", "none"), spec.get("permissionDecisionReason", "")

    def bash(self, command: str = "ls") -> tuple[str, str]:
        return self.call("Bash", {"command": command})

    def done(self, command: str = "ls") -> None:
        self.hook("PostToolUse", tool_name="Bash", tool_input={"command": command},
                  tool_use_id=f"toolu_{self.n}", tool_response={"stdout": ""})

    def kinds(self, prefix: str = "tripwire") -> list[dict[str, Any]]:
        return [r["payload"]["record"] | {"kind": kind(r)} for r in records(SID)
                if kind(r).startswith(prefix)]

    def cli(self, *args: str) -> str:
        proc = smllm(*args, "--project", str(self.root), cwd=self.root)
        assert 0 == proc.returncode, proc.stderr
        return proc.stdout


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    return Project(tmp_path, monkeypatch)


def test_a_change_outside_smllm_is_restored_journaled_and_gates_until_reverted(
        project: Project) -> None:
    """disableAllHooks lands in .claude/settings.local.json between two hooks (Claude
    Code's unsandboxed Write through a swapped folder): the next hook takes it away,
    journals the violation with the call before it, and every gated call is denied with
    how a person resolves it; `smllm tripwire revert` (a person) lets calls run again."""
    project.start()
    assert "none" == project.bash()[0]
    local = project.root / ".claude" / "settings.local.json"
    local.write_text('{"disableAllHooks": true}\n')
    project.done()
    assert not local.exists()
    decision, reason = project.bash()
    assert "deny" == decision
    assert reason.startswith(f"smllm's tripwire: {local} was created outside smllm after the "
                             "Bash call toolu_1, and smllm put its copy back. Every tool call "
                             "is denied until a person, outside this session, runs `smllm "
                             "tripwire revert`"), reason
    doctor = smllm("doctor", "--project", str(project.root), cwd=project.root).stdout
    assert f"error  tripwire: {local} was created outside smllm after the Bash call toolu_1" \
        in doctor, doctor
    violation = project.kinds()[0]
    assert ("tripwire.violation", str(local), "created", True, "PostToolUse",
            {"sequence": 2, "tool_name": "Bash", "tool_use_id": "toolu_1",
             "policy_decision": "defer:host"}) == (
        violation["kind"], violation["path"], violation["change"], violation["restored"],
        violation["observed_via"], violation["preceding"])
    assert "reverted" in project.cli("tripwire", "revert")
    assert ("none", False) == (project.bash()[0], local.exists())
    resolved = project.kinds()[-1]
    assert ("tripwire.resolved", "reverted", "person", None) == (
        resolved["kind"], resolved["resolution"], resolved["by"], resolved["kept"])
    verify = smllm("verify", SID)
    assert 0 == verify.returncode, verify.stdout


def test_the_sandboxs_empty_mcp_json_comes_and_goes_unnoticed(project: Project) -> None:
    """Claude Code's sandbox mounts a missing protected file read-only by creating it empty
    (measured on 2.1.332: ``.mcp.json`` after a sandboxed command) and removes it in a later
    session: neither says anything a missing file does not, so neither is a violation; a
    ``.mcp.json`` with content, created the same way, is one."""
    mcp = project.root / ".mcp.json"
    mcp.unlink(missing_ok=True)
    project.start()
    assert "none" == project.bash()[0]
    mcp.write_bytes(b"")
    project.done()
    assert ("none", True) == (project.bash()[0], mcp.exists())
    project.done()
    mcp.unlink()
    assert "none" == project.bash()[0]
    project.done()
    assert [] == project.kinds()
    mcp.write_text('{"mcpServers": {"x": {"command": "sh"}}}')
    project.done()
    assert ("deny", False) == (project.bash()[0], mcp.exists())
    assert ["tripwire.violation"] == [r["kind"] for r in project.kinds()]


def test_an_empty_file_is_no_file_only_for_a_document(project: Project) -> None:
    """The equivalence is the ``document`` view's (``.mcp.json``), not a rule for every
    file: an empty file planted in a watched tree (``.claude/hooks/``) is a change outside
    smllm, taken away and journaled, and gated calls wait for a person."""
    project.start()
    assert "none" == project.bash()[0]
    planted = project.root / ".claude" / "hooks" / "pre.sh"
    planted.parent.mkdir(parents=True, exist_ok=True)
    planted.write_bytes(b"")
    project.done()
    assert ("deny", False) == (project.bash()[0], planted.exists())
    assert [("tripwire.violation", str(planted), "created")] == [
        (r["kind"], r["path"], r["change"]) for r in project.kinds()]


def test_accept_keeps_the_change_and_makes_it_the_baseline(project: Project) -> None:
    """A person accepts: the changed bytes go back in place, calls run, and the same bytes
    are no longer a change."""
    project.start()
    policy = project.root / ".smllm" / "policy.toml"
    policy.write_text('mode = "on-request"\n# mine\n')
    assert "deny" == project.bash()[0]
    assert POLICY == policy.read_text()
    project.cli("tripwire", "accept")
    assert ('mode = "on-request"\n# mine\n', "none") == (policy.read_text(), project.bash()[0])
    assert ["tripwire.violation", "tripwire.resolved"] == [r["kind"] for r in project.kinds()]
    assert "accepted" == project.kinds()[-1]["resolution"]


def test_the_agent_may_not_answer_its_own_violation(project: Project) -> None:
    """`smllm tripwire accept` is a person's command: the gate denies it to the agent in
    any spelling, and the command refuses to run inside an agent CLI's session."""
    project.start()
    for command in ("smllm tripwire accept", "python3 -m smllm tripwire revert",
                    "bash -c 'smllm tripwire accept'"):
        decision, reason = project.bash(command)
        assert ("deny", "smllm protects itself: the agent may not run `smllm tripwire` (a "
                "person runs it outside the session)") == (decision, reason)
    for variable, host in (("CLAUDECODE", "Claude Code"),
                           ("COPILOT_AGENT_SESSION_ID", "Copilot"),
                           ("GEMINI_SESSION_ID", "Gemini CLI")):
        inside = smllm("tripwire", "accept", "--project", str(project.root), cwd=project.root,
                       env={variable: "1"})
        assert (2, f"smllm: error: smllm tripwire accept/revert is a person's answer and does "
                f"not run inside a {host} session (run it from a shell of your own)\n") == (
            inside.returncode, inside.stderr)


def test_a_persons_edit_between_sessions_is_adopted_and_journaled(project: Project) -> None:
    """Between sessions a person edits the policy: the next SessionStart (no other session
    of the project live) adopts it and says so in the journal; nothing is denied."""
    policy = project.root / ".smllm" / "policy.toml"
    policy.write_text('mode = "on-request"\n# tightened by a person\n')
    project.start()
    assert "# tightened" in policy.read_text()
    assert "none" == project.bash()[0]
    adopted = project.kinds()
    assert [("tripwire.adopted", "between-sessions", "SessionStart", [str(policy)])] == [
        (r["kind"], r["reason"], r["observed_via"], [p["path"] for p in r["paths"]])
        for r in adopted]


def test_a_prompt_hook_ahead_of_the_start_adopts_a_persons_edit_until_the_first_call(
        project: Project) -> None:
    """Copilot CLI runs sessionStart and the prompt's hook at once, so the prompt's may see
    a person's edit first: before any tool call of the session (its agent has not acted)
    it adopts it as the start would; once the session has made a call, an edit the prompt's
    hook sees is a violation."""
    policy = project.root / ".smllm" / "policy.toml"
    policy.write_text('mode = "on-request"\n# tightened by a person\n')
    project.hook("UserPromptSubmit", prompt="go")
    project.start()
    assert "# tightened" in policy.read_text()
    assert "none" == project.bash()[0]
    project.done()
    assert [("tripwire.adopted", "between-sessions", "UserPromptSubmit")] == [
        (r["kind"], r["reason"], r["observed_via"]) for r in project.kinds()]
    policy.write_text('mode = "yolo"\n')
    project.hook("UserPromptSubmit", prompt="again")
    assert ("deny", 'mode = "on-request"\n# tightened by a person\n') == (
        project.bash()[0], policy.read_text())
    assert ("tripwire.violation", "UserPromptSubmit") == (
        project.kinds()[-1]["kind"], project.kinds()[-1]["observed_via"])


def test_an_edit_while_another_session_is_live_is_not_adopted(project: Project) -> None:
    """Another session of the project is live (its agent may have made the change): the
    start of a second session restores the policy instead of adopting it; once that
    session has ended, a person's edit is adopted again."""
    project.start(OTHER)
    policy = project.root / ".smllm" / "policy.toml"
    policy.write_text('mode = "yolo"\n')
    project.start()
    assert POLICY == policy.read_text()
    assert "deny" == project.bash()[0]
    project.cli("tripwire", "revert")
    project.hook("SessionEnd", OTHER, reason="other")
    project.hook("SessionEnd", reason="other")
    policy.write_text('mode = "on-request"\n# later\n')
    project.start()
    assert ('mode = "on-request"\n# later\n', "none") == (policy.read_text(), project.bash()[0])


def test_claude_codes_answer_at_its_prompt_is_not_a_violation(project: Project) -> None:
    """What the pinned CLI writes on a person's "don't ask again" (measured on 2.1.332:
    `permissions.allow` in .claude/settings.local.json, the file created) is adopted and
    journaled as the host's; the same file gaining `hooks` is a violation."""
    project.start()
    local = project.root / ".claude" / "settings.local.json"
    answer = '{\n  "permissions": {\n    "allow": [\n      "Bash(touch x *)"\n    ]\n  }\n}\n'
    local.write_text(answer)
    assert "none" == project.bash()[0]
    grown = json.loads(answer)
    grown["permissions"]["allow"].append("Bash(ls *)")
    local.write_text(json.dumps(grown))
    assert "none" == project.bash()[0]
    assert ["host-prompt-answer", "host-prompt-answer"] == [r["reason"]
                                                            for r in project.kinds()]
    local.write_text(json.dumps({**grown, "hooks": {"Stop": []}}))
    assert "deny" == project.bash()[0]
    assert json.loads(local.read_text()) == grown


def test_a_folder_swapped_for_a_link_gets_its_folder_back(project: Project,
                                                          tmp_path: Path) -> None:
    """An agents folder of .claude replaced by a link elsewhere (a Claude Code agent file
    may declare hooks): the link goes, the folder and its file come back; a file planted
    beside them is taken away."""
    agents = project.root / ".claude" / "agents"
    agents.mkdir()
    (agents / "review.md").write_text("# reviewer\n")
    project.cli("install", "--no-sandbox")  # a person's change, re-armed by install
    project.start()
    elsewhere = tmp_path / "evil"
    elsewhere.mkdir()
    (elsewhere / "review.md").write_text("---\nhooks: {}\n---\n")
    (agents / "review.md").rename(tmp_path / "moved.md")
    agents.rmdir()
    agents.symlink_to(elsewhere)
    (project.root / ".claude" / "commands.md").write_text("planted\n")
    assert "deny" == project.bash()[0]
    assert (False, "# reviewer\n", False) == (
        agents.is_symlink(), (agents / "review.md").read_text(),
        (project.root / ".claude" / "commands.md").exists())
    assert "---\nhooks: {}\n---\n" == (elsewhere / "review.md").read_text()


def test_the_mcp_servers_of_claude_json_are_watched_and_the_rest_is_not(
        project: Project) -> None:
    """Claude Code rewrites ~/.claude.json all the time: a change outside its MCP servers
    is adopted silently; a server added there (it would start outside the sandbox) is
    taken out again, Claude Code's other state kept."""
    state = project.home / ".claude.json"
    state.write_text(json.dumps({"numStartups": 1, "projects": {}}))
    project.cli("install", "--no-sandbox")
    project.start()
    state.write_text(json.dumps({"numStartups": 2, "projects": {}}))
    assert ("none", []) == (project.bash()[0], project.kinds())
    evil = {"mcpServers": {"sh": {"command": "sh", "args": ["-c", "touch /tmp/x"]}}}
    state.write_text(json.dumps({"numStartups": 3, "projects": {str(project.root): evil}}))
    assert "deny" == project.bash()[0]
    assert {"numStartups": 3, "projects": {str(project.root): {}}} == json.loads(
        state.read_text())


def test_a_damaged_record_fails_closed(project: Project, smllm_home: Path) -> None:
    """The tripwire's record is not JSON: gated calls are denied (fail closed) until a
    person re-records it with `smllm tripwire accept`."""
    project.start()
    (manifest,) = (smllm_home / "tripwire").glob("p-*.json")
    manifest.write_text("{")
    decision, reason = project.bash()
    assert "deny" == decision
    assert "smllm's tripwire cannot read its record of the protected files" in reason
    project.cli("tripwire", "accept")
    assert "none" == project.bash()[0]


def test_an_unarmed_project_is_not_watched(tmp_path: Path) -> None:
    """Without `smllm install` there is no record: a change is nobody's business here."""
    root = tmp_path / "bare"
    (root / ".smllm").mkdir(parents=True)
    env = {"CLAUDE_PROJECT_DIR": str(root)}
    hook("SessionStart", base("SessionStart", SID, cwd=str(root), source="startup"), env=env)
    (root / ".smllm" / "policy.toml").write_text('mode = "yolo"\n')
    out = hook_output(hook("PreToolUse", base("PreToolUse", SID, cwd=str(root),
                                              tool_name="Bash", tool_input={"command": "ls"},
                                              tool_use_id="t1"), env=env))
    assert out is None or out["hookSpecificOutput"]["permissionDecision"] != "deny"


# ------------------------------------------------- file tools through links and new folders


def test_a_file_tool_through_a_folder_made_in_the_session_is_denied(project: Project) -> None:
    """The race's usual form: the agent's command makes d/ in the session, then asks to
    Write d/settings.local.json (a background process would swap d for a link to .claude
    once approved): denied outright. A folder from before the session, a link the user
    made long before (node_modules/.bin), and a folder Claude Code's own Write created
    pass; a link made in the session does not."""
    old = project.root / "src"
    old.mkdir()
    (project.root / "node_modules" / "pkg").mkdir(parents=True)
    (project.root / "node_modules" / ".bin").symlink_to("pkg")
    project.start()
    (project.root / "d").mkdir()  # the agent's mkdir
    (project.root / "ln").symlink_to(old)  # the agent's ln -s
    write = {"content": "{}"}
    decision, reason = project.call("Write", {"file_path": str(project.root / "d" / "s.json"),
                                              **write})
    assert ("deny", f"smllm protects itself: Write of {project.root / 'd' / 's.json'} goes "
            f"through {project.root / 'd'}, a folder made in this session by a command: "
            "Claude Code writes outside the sandbox") == (decision, reason[:len(
                f"smllm protects itself: Write of {project.root / 'd' / 's.json'} goes "
                f"through {project.root / 'd'}, a folder made in this session by a command: "
                "Claude Code writes outside the sandbox")])
    assert "deny" == project.call("Edit", {"file_path": str(project.root / "ln" / "x.py"),
                                           "old_string": "a", "new_string": "b"})[0]
    assert "deny" == project.call("mcp__fs__write_file",
                                  {"path": str(project.root / "d" / "x")})[0]
    for path in (old / "a.py", project.root / "node_modules" / ".bin" / "tool",
                 project.root / "new" / "pkg" / "a.py"):
        assert "deny" != project.call("Write", {"file_path": str(path), **write})[0], path
    (project.root / "new" / "pkg").mkdir(parents=True)  # what Claude Code's Write did
    assert "deny" != project.call("Write", {"file_path": str(project.root / "new" / "pkg" /
                                                             "b.py"), **write})[0]


def test_without_a_session_start_the_folder_check_is_off(tmp_path: Path) -> None:
    """No SessionStart was seen (no session to measure against): a new folder is not held
    against the call (`smllm policy explain` has no session either)."""
    root = tmp_path / "p"
    (root / ".smllm").mkdir(parents=True)
    (root / "d").mkdir()
    out = hook_output(hook("PreToolUse", base(
        "PreToolUse", SID, cwd=str(root), tool_name="Write",
        tool_input={"file_path": str(root / "d" / "x"), "content": ""}, tool_use_id="t1"),
        env={"CLAUDE_PROJECT_DIR": str(root)}))
    assert out is None or "made in this session" not in json.dumps(out)


# ------------------------------------------------------------------ the protected set


def test_the_protected_set_holds_the_recorded_link_hook_executable_and_managed_settings(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """install records the smllm link the installer made in SMLLM_BIN_DIR (not on PATH, not
    ~/.local/bin): it is in the protected set and the sandbox's denyWrite; so are the hook
    executable and Claude Code's managed settings."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    bindir = tmp_path / "tools-bin"
    bindir.mkdir()
    (bindir / "smllm").symlink_to(Path(os.__file__))
    root = tmp_path / "p"
    root.mkdir()
    env = {"SMLLM_BIN_DIR": str(bindir), "PATH": "/usr/bin:/bin"}
    assert 0 == smllm("install", "--project", str(root), cwd=root, env=env).returncode
    guarded = protected.protected_set(str(root))
    assert {str(bindir / "smllm"), protected.hook_executable(),
            "/etc/claude-code/managed-settings.json"} <= set(guarded)
    settings = json.loads((root / ".claude" / "settings.json").read_text())
    assert f"/{bindir / 'smllm'}" in settings["sandbox"]["filesystem"]["denyWrite"]
