"""`smllm install` / `smllm uninstall` (issue 3 acceptance 4), through the real CLI."""


from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import smllm
from machine_project import Project
from smllm.base import paths
from smllm.setup import install

FIXTURES = Path(__file__).parent / "fixtures" / "settings"
#: how installed hooks start, as `smllm install` run by this interpreter writes it
LAUNCH = install.hook_command("", *install.interpreter()).split(" --home ")[0].rstrip()
LAUNCH_JSON = json.dumps(LAUNCH)[1:-1]


def _cmd(event: str) -> str:
    """The command install writes for ``event``: the hook and smllm's home, pinned."""
    return f"{LAUNCH} {event} --home {os.environ['SMLLM_HOME']}"


def _golden(case: str) -> str:
    text = (FIXTURES / case / "after.json").read_text()
    return re.sub(r"@LAUNCH@ (\w+)", lambda m: json.dumps(_cmd(m.group(1)))[1:-1], text)


CASES = sorted(p.name for p in FIXTURES.iterdir() if (p / "before.json").exists())
CANONICAL = ["empty-object", "user-hooks"]  # json.dumps(indent=2) layouts
MALFORMED = sorted(p.stem for p in (FIXTURES / "malformed").glob("*.json"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    p = tmp_path / "proj"
    p.mkdir()
    return p


def _settings(project: Path, name: str = "settings.json") -> Path:
    return project / ".claude" / name


def _place(project: Path, case: str) -> Path:
    path = _settings(project)
    path.parent.mkdir(exist_ok=True)
    shutil.copyfile(FIXTURES / case / "before.json", path)
    return path


def _install(project: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    """The hooks alone: these tests pin their layout (tests/test_sandbox.py: the sandbox)."""
    return smllm("install", "--project", str(project), "--no-sandbox", *flags)


def _uninstall(project: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return smllm("uninstall", "--project", str(project), *flags)


@pytest.mark.parametrize("case", CASES)
def test_install_writes_the_golden_file(project: Path, case: str) -> None:
    """Install merges smllm's hooks after the user's, keeping key order and layout."""
    path = _place(project, case)
    proc = _install(project)
    assert 0 == proc.returncode, proc.stderr
    golden = _golden(case)
    assert golden == path.read_text()


@pytest.mark.parametrize("case", CASES)
def test_install_twice_then_uninstall_is_byte_identical(project: Path, case: str) -> None:
    """install → install (no change) → uninstall leaves the original bytes."""
    path = _place(project, case)
    original = path.read_bytes()
    assert 0 == _install(project).returncode
    installed, stat = path.read_bytes(), path.stat()
    again = _install(project)
    assert (0, f"smllm is already installed in {path} (no change)") == (
        again.returncode, again.stdout.splitlines()[0])
    assert (installed, stat.st_mtime_ns, stat.st_ino) == (path.read_bytes(),
                                                          path.stat().st_mtime_ns,
                                                          path.stat().st_ino)
    gone = _uninstall(project)
    assert (0, f"removed smllm's hooks (10) from {path}; restored byte for byte\n"
            ) == (gone.returncode, gone.stdout)
    assert (original, [".claude"]) == (path.read_bytes(), os.listdir(project))


@pytest.mark.parametrize("case", CANONICAL)
def test_uninstall_without_record_still_byte_identical_for_canonical_files(
        project: Path, case: str, smllm_home: Path) -> None:
    """Even when the install record is lost, removal in the file's own layout round-trips."""
    path = _place(project, case)
    original = path.read_bytes()
    assert 0 == _install(project).returncode
    shutil.rmtree(smllm_home / "installs")
    gone = _uninstall(project)
    assert (0, f"removed smllm's hooks (10) from {path}; other content kept\n"
            ) == (gone.returncode, gone.stdout)
    assert original == path.read_bytes()


def test_uninstall_keeps_edits_made_after_install(project: Path) -> None:
    """A key added after install survives uninstall; only smllm's hooks go."""
    path = _place(project, "user-hooks")
    before = json.loads(path.read_text())
    assert 0 == _install(project).returncode
    data = json.loads(path.read_text())
    data["hooks"]["Stop"].insert(0, {"hooks": [{"type": "command", "command": "echo mine"}]})
    data["later"] = True
    path.write_text(json.dumps(data, indent=2) + "\n")
    assert 0 == _uninstall(project).returncode
    expected = dict(before, hooks=dict(before["hooks"], Stop=[
        {"hooks": [{"type": "command", "command": "echo mine"}]}]), later=True)
    assert expected == json.loads(path.read_text())


def test_absent_file_is_created_then_removed(project: Path) -> None:
    """No settings file: install creates .claude/settings.json; uninstall removes both."""
    path = _settings(project)
    proc = _install(project)
    assert (0, True) == (proc.returncode, path.is_file())
    assert sorted(install.EVENTS) == sorted(json.loads(path.read_text())["hooks"])
    assert [".claude"] == sorted(os.listdir(project))  # no machines here: no MCP server
    assert 0 == _uninstall(project).returncode
    assert [] == sorted(os.listdir(project))


def test_install_updates_an_older_interpreter_in_place(project: Path) -> None:
    """A reinstall with another interpreter replaces smllm's entries, no duplicates."""
    path = _place(project, "user-hooks")
    original = path.read_bytes()
    assert 0 == _install(project).returncode
    path.write_text(path.read_text().replace(LAUNCH_JSON, "/old/venv/bin/smllm-hook"))
    proc = _install(project)
    assert proc.stdout.startswith(f"updated smllm's hooks for 10 events in {path}\n")
    commands = [h["command"] for groups in json.loads(path.read_text())["hooks"].values()
                for g in groups for h in g["hooks"]]
    assert (0, 10) == (sum("/old/venv" in c for c in commands),
                       sum(c.startswith(LAUNCH + " ") for c in commands))
    assert 0 == _uninstall(project).returncode
    assert original == path.read_bytes()


JSON_FIX = "fix or remove the file"
MESSAGES = {
    "comment": ("3: not valid JSON at column 3, near '// a comment'", JSON_FIX),
    "event-object": ("3: hooks.PreToolUse must be a list of matcher groups", "fix it by hand"),
    "group-without-hooks": ("3: hooks.Stop[0] must be an object with a \"hooks\" list",
                            "fix it by hand"),
    "hooks-list": ("3: \"hooks\" must be an object of events", "fix it by hand"),
    "syntax": ("5: not valid JSON at column 3, near '}'", JSON_FIX),
    "top-array": ("1: the top level must be a JSON object", "fix the file"),
    "trailing-comma": ("3: not valid JSON at column 1, near '}'", JSON_FIX),
}


@pytest.mark.parametrize("case", MALFORMED)
@pytest.mark.parametrize("command", ["install", "uninstall"])
def test_malformed_file_is_refused_and_untouched(project: Path, case: str,
                                                 command: str) -> None:
    """A file Claude Code would ignore: exit 1, `file:line` message, not a byte changed."""
    path = _settings(project)
    path.parent.mkdir()
    shutil.copyfile(FIXTURES / "malformed" / f"{case}.json", path)
    before, mtime = path.read_bytes(), path.stat().st_mtime_ns
    proc = smllm(command, "--project", str(project))
    what, fix = MESSAGES[case]
    expected = (f"smllm: error: {path}:{what} ({fix}; Claude Code silently ignores "
                f"a malformed settings file: none of its hooks fire)\n")
    assert (1, "", expected) == (proc.returncode, proc.stdout, proc.stderr)
    assert (before, mtime) == (path.read_bytes(), path.stat().st_mtime_ns)
    assert ["settings.json"] == os.listdir(path.parent)  # no temp file left behind


@pytest.mark.parametrize("case", ["absent", "user-hooks"])
def test_dry_run_prints_the_diff_and_writes_nothing(project: Path, case: str,
                                                    smllm_home: Path) -> None:
    """--dry-run: a unified diff of the change on stdout; no file, no record written."""
    path = _settings(project)
    if case != "absent":
        _place(project, case)
    before = path.read_bytes() if path.exists() else None
    proc = _install(project, "--dry-run")
    header = (f"--- {path}\n+++ {path}\n" if before is not None
              else f"--- /dev/null\n+++ {path}\n")
    assert (0, True) == (proc.returncode, proc.stdout.startswith(header)), proc.stdout
    added = [line for line in proc.stdout.splitlines()
             if line.startswith("+") and f'"command": "{LAUNCH_JSON} ' in line]
    assert 10 == len(added)
    assert (f"dry run, nothing written: would have installed smllm's hooks for 10 events in "
            f"{path}\n") in proc.stdout
    assert before == (path.read_bytes() if path.exists() else None)
    assert not (smllm_home / "installs").exists()


def test_dry_run_uninstall_writes_nothing(project: Path) -> None:
    """uninstall --dry-run shows the removal and leaves the installed file alone."""
    path = _place(project, "user-hooks")
    assert 0 == _install(project).returncode
    installed = path.read_bytes()
    proc = _uninstall(project, "--dry-run")
    removed = [line for line in proc.stdout.splitlines()
               if line.startswith("-") and f'"command": "{LAUNCH_JSON} ' in line]
    assert (0, 10, installed) == (proc.returncode, len(removed), path.read_bytes())


def test_user_and_local_target_their_files(project: Path, tmp_path: Path) -> None:
    """--user → $HOME/.claude/settings.json (or $CLAUDE_CONFIG_DIR); --local → settings.local.json."""
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home)}
    assert 0 == smllm("install", "--user", env=env).returncode
    assert ["settings.json"] == os.listdir(home / ".claude")
    config = tmp_path / "cfg"
    assert 0 == smllm("install", "--user", env={**env, "CLAUDE_CONFIG_DIR": str(config)}).returncode
    assert ["settings.json"] == os.listdir(config)
    assert 0 == _install(project, "--local").returncode
    assert ["settings.local.json"] == os.listdir(project / ".claude")
    assert 0 == _uninstall(project, "--local").returncode
    assert 0 == smllm("uninstall", "--user", env=env).returncode
    assert [] == os.listdir(home)


@pytest.mark.parametrize(("args", "message"), [
    (["--user", "--local"], "smllm: error: --local applies to a project (use --project DIR "
                            "--local, or --user alone)\n"),
    (["--project", "/nonexistent/proj"], "smllm: error: project folder /nonexistent/proj does "
                                         "not exist (create it or fix the path)\n"),
])
def test_bad_targets_are_refused(args: list[str], message: str) -> None:
    """Contradictory or missing targets: one-line error, no traceback."""
    proc = smllm("install", *args)
    assert (message, "") == (proc.stderr, proc.stdout)


def test_user_and_project_together_is_a_usage_error() -> None:
    """--user and --project are mutually exclusive (argparse, exit 2)."""
    proc = smllm("install", "--user", "--project", ".")
    assert (2, True) == (proc.returncode, "not allowed with argument" in proc.stderr)


def test_uninstall_when_not_installed_changes_nothing(project: Path) -> None:
    """Uninstall of a file without smllm hooks says so and does not write."""
    path = _place(project, "user-hooks")
    mtime = path.stat().st_mtime_ns
    proc = _uninstall(project)
    assert (0, f"smllm is not installed in {path} (no change)\n") == (proc.returncode, proc.stdout)
    assert mtime == path.stat().st_mtime_ns


def test_installed_command_is_absolute_and_runs_the_hook(project: Path) -> None:
    """Each command is the absolute hook executable and its event and, run by a shell, is a
    real hook."""
    assert 0 == _install(project).returncode
    hooks = json.loads(_settings(project).read_text())["hooks"]
    for event, groups in hooks.items():
        (hook,) = groups[0]["hooks"]
        assert (_cmd(event),
                install.EVENTS[event]) == (
            hook["command"], hook["timeout"])
    payload = {"session_id": "c0ffee00-0000-4000-8000-000000000001", "cwd": str(project),
               "transcript_path": str(project / "t.jsonl"), "hook_event_name": "SessionStart",
               "source": "startup"}
    proc = subprocess.run(["/bin/sh", "-c", hooks["SessionStart"][0]["hooks"][0]["command"]],
                          input=json.dumps(payload), capture_output=True, text=True, cwd=project,
                          env={"PATH": "/usr/bin:/bin", "SMLLM_HOME": os.environ["SMLLM_HOME"]},
                          check=False)
    assert (0, "") == (proc.returncode, proc.stderr)
    from helpers import kind, records

    assert ["session.start"] == [kind(r) for r in records(payload["session_id"])][:1]


def test_tool_events_match_every_tool() -> None:
    """Tool events register with matcher '*'; the others without a matcher."""
    groups = install.desired("/py", [])
    assert sorted(install.TOOL_EVENTS) == sorted(e for e, g in groups.items()
                                                 if g.get("matcher") == "*")
    assert [] == [e for e, g in groups.items() if "matcher" in g and e not in install.TOOL_EVENTS]


def test_uninstall_waits_for_a_concurrent_install(project: Path) -> None:
    """An uninstall started while an install holds the lock waits for it, then removes what
    that install wrote: the original bytes come back (without the lock it would find
    nothing installed, and the install would land after it)."""
    path = _place(project, "user-hooks")
    original = path.read_bytes()
    target = install.resolve_target(str(project), False, False)
    with install.locked(target):
        plan = install.plan_install(target, *install.interpreter())
        other = subprocess.Popen([sys.executable, "-m", "smllm", "uninstall", "--project",
                                  str(project)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
        with contextlib.suppress(subprocess.TimeoutExpired):  # blocked on the lock, it must be
            other.wait(timeout=3)
        finished_early = other.returncode is not None
        install.apply(plan)
    out, err = other.communicate(timeout=60)
    assert (False, 0, "") == (finished_early, other.returncode, err)
    assert out.startswith(f"removed smllm's hooks (10) from {path}; restored byte for byte\n")
    assert (original, [".claude"]) == (path.read_bytes(), os.listdir(project))


def test_install_writes_no_allow_rules_and_registers_the_mcp_server(project: Path) -> None:
    """Project scope in a project with state machines: no permission rule (Claude Code
    ignores a project's allow rules until the folder is trusted, and says so on every
    `claude -p`), the MCP server's approval and its .mcp.json entry (this interpreter,
    -m smllm mcp); local and user scopes: neither."""
    Project(project)
    assert 0 == _install(project).returncode
    data = json.loads(_settings(project).read_text())
    mcp = json.loads((project / ".mcp.json").read_text())
    expected = (False, ["smllm"],
                {"mcpServers": {"smllm": {"command": sys.executable,
                                          "args": ["-I", "-m", "smllm", "mcp"]}}})
    assert expected == ("permissions" in data, data["enabledMcpjsonServers"], mcp)
    assert 0 == _uninstall(project).returncode
    assert 0 == _install(project, "--local").returncode
    local = json.loads(_settings(project, "settings.local.json").read_text())
    assert (False, False, False) == ("permissions" in local, "enabledMcpjsonServers" in local,
                                     (project / ".mcp.json").exists())


OLD_RULES = ["Bash(smllm fire *)", "Bash(smllm status)", "Bash(smllm status *)",
             "mcp__smllm__smllm"]


@pytest.mark.parametrize("record", [True, False])
def test_install_removes_the_allow_rules_an_earlier_install_added(project: Path,
                                                                  smllm_home: Path,
                                                                  record: bool) -> None:
    """An install of an earlier version (long hook commands, the four allow rules): a new
    install replaces its hooks and removes its rules (with the record, or without it),
    keeping the user's own rule; uninstall then restores the original."""
    path = _settings(project)
    path.parent.mkdir()
    path.write_text(json.dumps({"permissions": {"allow": ["Bash(make)"]}}, indent=2) + "\n")
    original = path.read_bytes()
    assert 0 == _install(project).returncode
    data = json.loads(path.read_text())
    python, flags = install.interpreter()
    for event, groups in data["hooks"].items():
        groups[-1]["hooks"][0]["command"] = install.inline_command(event, python, flags)
    data["permissions"]["allow"] += OLD_RULES
    path.write_text(json.dumps(data, indent=2) + "\n")
    rec = next(r for r in (smllm_home / "installs").glob("*.json")
               if json.loads(r.read_text())["path"] == str(path))
    saved = json.loads(rec.read_text())
    if record:
        saved["added"]["allow"] = OLD_RULES
        rec.write_text(json.dumps(saved))
    else:
        shutil.rmtree(smllm_home / "installs")
    proc = _install(project)
    after = json.loads(path.read_text())
    assert (0, ["Bash(make)"], {_cmd(e) for e in install.EVENTS}) == (
        proc.returncode, after["permissions"]["allow"],
        {g[-1]["hooks"][0]["command"] for g in after["hooks"].values()}), proc.stdout
    assert 0 == _uninstall(project).returncode
    left = json.loads(path.read_text())
    assert ({"allow": ["Bash(make)"]}, False) == (left["permissions"], "hooks" in left)
    if record:
        assert original == path.read_bytes()


def test_no_mcp_server_where_no_machine_is_configured(project: Path, smllm_home: Path) -> None:
    """Claude Code starts every registered MCP server at every session start (issue 25:
    about 140 ms a session): a project without machines, where nothing fires, gets none.
    Machines in the user's config count for every project."""
    (project / ".smllm").mkdir()
    (project / ".smllm" / "config.toml").write_text("# no machines here\n")
    proc = _install(project)
    data = json.loads(_settings(project).read_text())
    assert (0, False, False, False) == (proc.returncode, "permissions" in data,
                                        "enabledMcpjsonServers" in data,
                                        (project / ".mcp.json").exists())
    assert "MCP server" not in proc.stdout
    assert 0 == _uninstall(project).returncode
    user = Project(smllm_home / "user-machines")  # machine files the user's config names
    config = paths.user_config_file()
    Path(config).parent.mkdir(parents=True, exist_ok=True)
    fix = json.dumps(str(user.root / ".smllm" / "fix.smllm.yaml"))
    Path(config).write_text(f"[machines]\nfiles = [{fix}]\n")
    proc = _install(project)
    assert (0, True) == (proc.returncode, (project / ".mcp.json").exists()), proc.stderr
    assert f"MCP server smllm: in {project}/.mcp.json" in proc.stdout
    assert 0 == _install(project, "--local").returncode  # a local install leaves it alone
    assert (project / ".mcp.json").exists()


def test_reinstall_without_machines_removes_the_server_an_older_install_added(
        project: Path, smllm_home: Path) -> None:
    """An install from before this rule registered the server everywhere: installing again
    in a project without machines takes it out (the file install created goes), and the
    texts then name `smllm fire`; uninstall still restores the original bytes."""
    path = _place(project, "user-hooks")
    original = path.read_bytes()
    Project(project)
    assert 0 == _install(project).returncode
    assert (project / ".mcp.json").exists()
    shutil.rmtree(project / ".smllm")  # the project stops using machines
    again = _install(project)
    assert (0, False) == (again.returncode, (project / ".mcp.json").exists()), again.stderr
    assert (f"  removed the MCP server smllm from {project}/.mcp.json; removed the file install "
            "created (no state machine here uses it)") in again.stdout.splitlines()
    assert 0 == _uninstall(project).returncode
    assert (original, [".claude"]) == (path.read_bytes(), os.listdir(project))


def test_mcp_file_keeps_other_servers_and_refuses_a_foreign_smllm(project: Path) -> None:
    """Another server in .mcp.json stays (install and uninstall); a server named smllm that
    install did not write is refused, untouched."""
    Project(project)
    mcp = project / ".mcp.json"
    mine = {"mcpServers": {"docs": {"command": "docs-server"}}}
    mcp.write_text(json.dumps(mine, indent=2) + "\n")
    before = mcp.read_bytes()
    assert 0 == _install(project).returncode
    assert ["docs", "smllm"] == list(json.loads(mcp.read_text())["mcpServers"])
    assert 0 == _uninstall(project).returncode
    assert before == mcp.read_bytes()
    mcp.write_text(json.dumps({"mcpServers": {"smllm": {"command": "other"}}}))
    proc = _install(project)
    assert (1, f"smllm: error: {mcp} already has an MCP server named 'smllm' that smllm "
               "install did not write (rename or remove that server, then run smllm install "
               "again)\n") == (proc.returncode, proc.stderr)


def test_uninstall_keeps_the_users_own_copy_of_a_rule(project: Path) -> None:
    """A rule the user had before install is theirs: uninstall (record lost or not) keeps
    what the record says install did not add."""
    path = _settings(project)
    path.parent.mkdir()
    path.write_text(json.dumps({"permissions": {"allow": ["Bash(smllm status)"]}}) + "\n")
    assert 0 == _install(project).returncode
    data = json.loads(path.read_text())
    data["model"] = "opus"  # a later edit: no byte-for-byte restore
    path.write_text(json.dumps(data) + "\n")
    assert 0 == _uninstall(project).returncode
    assert {"permissions": {"allow": ["Bash(smllm status)"]}, "model": "opus"} == json.loads(
        path.read_text())
