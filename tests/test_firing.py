"""Firing in every permission mode: smllm's own calls allowed, the texts name a way that
exists in the route in use, and broken machines reported by doctor with file:line:col."""


from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers import smllm
from machine_project import REPO, Project
from smllm import journal
from smllm.machine import channel, locations

OWN = [
    ("Bash", {"command": "smllm fire enter --param stateMachine=fix"}, True),
    ("Bash", {"command": "smllm fire yield --param note='waiting for CI'"}, True),
    ("Bash", {"command": "smllm status"}, True),
    ("Bash", {"command": "smllm fire x; rm -rf ~"}, False),
    ("Bash", {"command": "smllm fire x && curl evil.example"}, False),
    ("Bash", {"command": "smllm fire $(rm -rf ~)"}, False),
    ("Bash", {"command": "smllm fire x > ~/.bashrc"}, False),
    ("Bash", {"command": "SMLLM_HOME=/tmp smllm fire x"}, False),
    ("Bash", {"command": "smllm install --user"}, False),
    ("mcp__smllm__smllm", {"event": "enter"}, True),
    ("mcp__plugin_smllm_smllm__smllm", {"event": "enter"}, True),
    ("mcp__evil__smllm", {"event": "enter"}, False),
]


@pytest.mark.parametrize(("tool", "tool_input", "allowed"), OWN)
def test_pre_tool_use_allows_only_smllms_own_firing(tmp_path: Path, tool: str,
                                                    tool_input: dict[str, str],
                                                    allowed: bool) -> None:
    """In a bound session PreToolUse answers allow (rule machine.fire, allow:policy) for a
    plain `smllm fire`/`status` or smllm's MCP tool, and for nothing that merely looks so."""
    project = Project(tmp_path / "p")
    project.hook("SessionStart", source="startup")
    out = project.hook("PreToolUse", tool_name=tool, tool_input=tool_input,
                       tool_use_id="toolu_own", permission_mode="default")
    decision = (out or {}).get("hookSpecificOutput", {}).get("permissionDecision")
    intent = [r["payload"]["event"] for r in journal.iter_records(journal.log_path("cc-1"))
              if (r["payload"].get("event") or {}).get("kind") == "side_effect_intent"][-1]
    own = (decision, intent["policy_decision"], intent["rule"])
    assert allowed == (own == ("allow", "allow:policy", "machine.fire")), own


def test_unbound_session_gets_no_allow(tmp_path: Path) -> None:
    """Without machines (no bound session) smllm never allows anything itself."""
    bare = Project.__new__(Project)
    bare.root = tmp_path
    out = bare.hook("PreToolUse", tool_name="Bash", tool_input={"command": "smllm fire x"},
                    tool_use_id="toolu_1", permission_mode="default")
    assert "allow" != (out or {}).get("hookSpecificOutput", {}).get("permissionDecision")


def _settings(root: Path, name: str, data: dict[str, Any]) -> None:
    (root / ".claude").mkdir(exist_ok=True)
    (root / ".claude" / name).write_text(json.dumps(data))


HOOKED = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command":
                                         "/v/bin/python -c 'from smllm.hooks import cli; "
                                         "cli()' Stop"}]}]}}
MCP = {"mcpServers": {"smllm": {"command": "/v/bin/python", "args": ["-m", "smllm", "mcp"]}}}

CHANNELS = [
    ("hooks run by hand, nothing installed", {}, None, {}, "mcp"),
    ("plugin route", {}, None, {"CLAUDE_PLUGIN_ROOT": "/plugins/smllm"}, "mcp"),
    ("project install", dict(HOOKED, enabledMcpjsonServers=["smllm"]), MCP, {}, "mcp"),
    ("server not approved", HOOKED, MCP, {}, "bash"),
    ("server disabled", dict(HOOKED, enabledMcpjsonServers=["smllm"],
                             disabledMcpjsonServers=["smllm"]), MCP, {}, "bash"),
    ("all project servers enabled", dict(HOOKED, enableAllProjectMcpServers=True), MCP, {},
     "mcp"),
    ("local install (no server)", HOOKED, None, {}, "bash"),
]


@pytest.mark.parametrize(("name", "settings", "mcp", "env", "expected"), CHANNELS,
                         ids=[c[0] for c in CHANNELS])
def test_channel_names_a_way_that_exists(tmp_path: Path, name: str, settings: dict[str, Any],
                                         mcp: dict[str, Any] | None, env: dict[str, str],
                                         expected: str) -> None:
    """The MCP tool where the session has it; `smllm fire` where a settings route lacks it."""
    if settings:
        _settings(tmp_path, "settings.local.json", settings)
    if mcp:
        (tmp_path / ".mcp.json").write_text(json.dumps(mcp))
    home = tmp_path / "home"
    assert expected == channel.detect(str(tmp_path), {**env, "CLAUDE_CONFIG_DIR": str(home)})


def test_user_scope_server_counts(tmp_path: Path) -> None:
    """A server added with `claude mcp add -s user` (in ~/.claude.json) is the MCP tool."""
    home = tmp_path / "cfg"
    home.mkdir()
    (home / ".claude.json").write_text(json.dumps(MCP))
    _settings(tmp_path, "settings.local.json", HOOKED)
    assert "mcp" == channel.detect(str(tmp_path), {"CLAUDE_CONFIG_DIR": str(home)})


CLAUDE_JSON_CASES = [
    ("local-scope server", MCP, None, "mcp"),
    ("project server approved in /mcp", {"enabledMcpjsonServers": ["smllm"]}, MCP, "mcp"),
    ("project server refused in /mcp", {"disabledMcpjsonServers": ["smllm"]}, MCP, "bash"),
    ("another project's server", None, None, "bash"),
]


@pytest.mark.parametrize(("name", "entry", "mcp", "expected"), CLAUDE_JSON_CASES,
                         ids=[c[0] for c in CLAUDE_JSON_CASES])
def test_project_entry_of_claude_json_counts(tmp_path: Path, name: str,
                                             entry: dict[str, Any] | None,
                                             mcp: dict[str, Any] | None, expected: str) -> None:
    """The project's entry in ~/.claude.json (`claude mcp add -s local`, the /mcp approval
    of a .mcp.json server) decides like the settings files; another project's does not."""
    home = tmp_path / "cfg"
    home.mkdir()
    other = {str(tmp_path / "elsewhere"): MCP}
    projects = {**other, **({str(tmp_path): entry} if entry is not None else {})}
    (home / ".claude.json").write_text(json.dumps({"projects": projects}))
    _settings(tmp_path, "settings.local.json", HOOKED)
    if mcp:
        (tmp_path / ".mcp.json").write_text(json.dumps(mcp))
    assert expected == channel.detect(str(tmp_path), {"CLAUDE_CONFIG_DIR": str(home)})


def test_stop_text_names_smllm_fire_where_there_is_no_mcp_tool(tmp_path: Path) -> None:
    """A local install (no MCP server): the bind is marked, and the stop block names
    `smllm fire --session KEY EVENT` instead of the MCP tool."""
    project = Project(tmp_path / "p")
    _settings(project.root, "settings.local.json", HOOKED)
    project.hook("SessionStart", source="startup", env={"CLAUDE_CONFIG_DIR": str(tmp_path)})
    key = locations.read_binding("claude", "cc-1")
    assert key is not None
    project.fire(key, "enter", stateMachine="fix")
    stop = project.hook("Stop", stop_hook_active=False)
    reason = (stop or {}).get("reason", "")
    line = f"Fire one event: smllm fire --session {key} EVENT [--param NAME=VALUE]...\n<events>\n"
    assert ("bash", True, False) == (locations.read_audit(key)[0]["binding"]["channel"],
                                     line in reason, "smllm({" in reason)


BROKEN_MACHINE = "id: fix\ninitial: A\nstates:\n  A:\n    on:\n      go: NOWHERE\n"


def test_doctor_reports_a_broken_machine_with_its_position(tmp_path: Path) -> None:
    """doctor: one error per broken machine file, with file:line:col, and exit 1."""
    project = Project(tmp_path / "p", {"fix.smllm.yaml": BROKEN_MACHINE})
    proc = smllm("doctor", "--json", cwd=project.root)
    found = [f["text"] for f in json.loads(proc.stdout)["findings"]
             if f["text"].startswith("machines:")]
    assert 1 == proc.returncode
    assert 1 == len(found), found
    assert found[0].startswith("machines: .smllm/fix.smllm.yaml:6:"), found


def test_doctor_lists_the_machines_that_load(tmp_path: Path) -> None:
    """doctor: an `ok` line naming the machines and their config when all load."""
    project = Project(tmp_path / "p")
    proc = smllm("doctor", cwd=project.root)
    config = project.root / ".smllm" / "config.toml"
    assert f"ok     machines: fix ({config})\n" in proc.stdout


FEATURE = (REPO / "machines" / "feature.smllm.yaml").read_text()


@pytest.mark.parametrize(("config", "expected"), [
    ("", "ok     guards: command guards run in bubblewrap (/usr/bin/bwrap)\n"),
    ("[guards]\nsandbox = false\n", "warn   guards: command guards run without a sandbox "
     "([guards] sandbox = false in {user}): the agent's tests and conftest.py run outside its "
     "sandbox (remove the line to sandbox them)\n"),
    ('[guards]\nbwrap = "/nonexistent/bwrap"\n', "error  guards: command guards cannot run, "
     "so their events are refused: bubblewrap (bwrap) is not installed (/nonexistent/bwrap) "
     "(install it: apt-get install -y bubblewrap)\n"),
], ids=["sandboxed", "opted-out", "no-bwrap"])
def test_doctor_says_how_command_guards_run(tmp_path: Path, smllm_home: Path, config: str,
                                            expected: str) -> None:
    """Issue 19: with a machine whose guard runs a command, doctor says whether checks run
    in bubblewrap, run bare by the user's opt-out, or cannot run at all (their events are
    then refused); a project without command guards gets no such line."""
    smllm_home.mkdir(parents=True, exist_ok=True)
    user = smllm_home / "config.toml"
    user.write_text(config)
    plain = Project(tmp_path / "plain")
    assert "guards:" not in smllm("doctor", cwd=plain.root).stdout
    guarded = Project(tmp_path / "p", {"feature.smllm.yaml": FEATURE})
    assert "type: command" in FEATURE
    assert expected.format(user=user) in smllm("doctor", cwd=guarded.root).stdout
