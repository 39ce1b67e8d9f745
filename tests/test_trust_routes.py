"""Issue 19, acceptance 1 routes without the CLI: hooks take no orders from the project (an
``SMLLM_*`` variable that the project's own settings set in their ``env`` is dropped before
any hook reads it), and `smllm fire` is not admitted where it would load a planted machine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers import base, hook, hook_output, records
from smllm.base import knobs

SID = "0b9a8c7d-6e5f-4a3b-9c2d-1e0f9a8b7c6d"


def _ship(project: Path, env: dict[str, str], name: str = "settings.json") -> None:
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / name).write_text(json.dumps({"env": env}))


def test_scrub_drops_only_what_the_project_settings_set(tmp_path: Path) -> None:
    _ship(tmp_path, {"SMLLM_FAULT": "locked", "PATH": "/x"})
    _ship(tmp_path, {"SMLLM_NOW": "1"}, "settings.local.json")
    env = {"CLAUDE_PROJECT_DIR": str(tmp_path), "SMLLM_FAULT": "locked", "SMLLM_NOW": "1",
           "SMLLM_HOME": "/mine", "PATH": "/x"}
    assert ["SMLLM_FAULT", "SMLLM_NOW"] == knobs.scrub(env)
    assert {"CLAUDE_PROJECT_DIR": str(tmp_path), "SMLLM_HOME": "/mine", "PATH": "/x"} == env


def test_a_hook_ignores_a_fault_point_the_repository_ships(tmp_path: Path) -> None:
    """SMLLM_FAULT=locked from the project's settings would SIGKILL the gate at the journal
    lock: the hook ignores it, says so on stderr, and decides as usual."""
    _ship(tmp_path, {"SMLLM_FAULT": "locked"})
    env = {"CLAUDE_PROJECT_DIR": str(tmp_path), "SMLLM_FAULT": "locked"}
    call = {"tool_name": "Read", "tool_input": {"file_path": str(tmp_path / "a.txt")},
            "tool_use_id": "toolu_k1"}
    proc = hook("PreToolUse", base("PreToolUse", SID, cwd=str(tmp_path), **call), env=env,
                cwd=tmp_path)
    assert 0 == proc.returncode, proc.stderr  # not killed at the lock
    out = hook_output(proc) or {}
    assert "deny" != out.get("hookSpecificOutput", {}).get("permissionDecision")
    assert records(SID), "the call was journaled"
    assert b"ignoring SMLLM_FAULT set by the project's settings" in proc.stderr
    # the same variable from the host's own environment (a test's fault point) still works
    (tmp_path / ".claude" / "settings.json").write_text("{}")
    killed = hook("PreToolUse", base("PreToolUse", SID, cwd=str(tmp_path), **call), env=env,
                  cwd=tmp_path)
    assert -9 == killed.returncode


def test_test_knobs_from_the_environment_need_smllms_own_switch(
        tmp_path: Path, smllm_home: Path) -> None:
    """A hook inherits its environment from whoever started Claude Code (a shell whose rc
    file or .envrc a repository or the agent may have written): without the switch in
    smllm's config folder, SMLLM_FAULT (which would SIGKILL the gate at the journal's
    lock) and SMLLM_NOW (a false clock) are ignored and the hook says so; with it, the
    fault point fires (the crash tests' knob)."""
    from helpers import allow_test_knobs

    allow_test_knobs(smllm_home, allow=False)
    env = {"CLAUDE_PROJECT_DIR": str(tmp_path), "SMLLM_FAULT": "locked",
           "SMLLM_NOW": "1577836800000"}
    call = {"tool_name": "Read", "tool_input": {"file_path": str(tmp_path / "a.txt")},
            "tool_use_id": "toolu_t1"}
    proc = hook("PreToolUse", base("PreToolUse", SID, cwd=str(tmp_path), **call), env=env,
                cwd=tmp_path)
    assert 0 == proc.returncode, proc.stderr  # not killed at the lock
    assert (b"smllm: ignoring the test knobs SMLLM_FAULT, SMLLM_NOW (smllm's config does not "
            b"allow them)") in proc.stderr
    assert [] == [r for r in records(SID) if r["recorded_at"].startswith("2020")]
    allow_test_knobs(smllm_home)
    killed = hook("PreToolUse", base("PreToolUse", SID, cwd=str(tmp_path), **call), env=env,
                  cwd=tmp_path)
    assert -9 == killed.returncode


def test_the_installed_command_pins_smllms_home(tmp_path: Path, smllm_home: Path) -> None:
    """`--home DIR` (what install writes) keeps the journal in DIR whatever SMLLM_HOME the
    hook's environment names; `--home platform` in the platform's folders."""
    import os
    import subprocess
    import sys

    elsewhere = tmp_path / "moved-home"
    payload = json.dumps(base("SessionStart", SID, cwd=str(tmp_path), source="startup"))
    entry = "from smllm.hooks import cli; cli()"
    for home, expected in ((str(smllm_home), smllm_home / "sessions"),
                           ("platform", tmp_path / "h" / ".local" / "share" / "smllm")):
        env = {**os.environ, "SMLLM_HOME": str(elsewhere), "HOME": str(tmp_path / "h")}
        proc = subprocess.run([sys.executable, "-c", entry, "SessionStart", "--home", home],
                              input=payload.encode(), capture_output=True, env=env,
                              check=False, timeout=30)
        assert 0 == proc.returncode, proc.stderr
        assert (True, False) == (any(expected.rglob("session.jsonl")), elsewhere.exists())
    # no SMLLM_* variable at all (a user's hooks: the knob module is not even loaded): the
    # pin still holds
    pinned = tmp_path / "pinned-home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SMLLM_")}
    env["HOME"] = str(tmp_path / "h2")
    proc = subprocess.run([sys.executable, "-c", entry, "SessionStart", "--home", str(pinned)],
                          input=payload.encode(), capture_output=True, env=env, check=False,
                          timeout=30)
    assert 0 == proc.returncode, proc.stderr
    assert (True, False) == (any((pinned / "sessions").rglob("session.jsonl")),
                             (tmp_path / "h2" / ".local" / "share" / "smllm").exists())


def test_fire_from_a_subfolder_with_a_planted_machine_is_denied(tmp_path: Path) -> None:
    """Issue 19, acceptance 1: `smllm fire` runs outside the sandbox and loads the nearest
    .smllm/config.toml above the shell's folder. From a subfolder where the agent planted
    its own .smllm/ (a machine whose guard runs its program), the gate denies the plain
    form; from the project folder, with the project's own config, it admits it."""
    from helpers import protect_check

    project = tmp_path / "proj"
    (project / ".smllm").mkdir(parents=True)
    (project / ".smllm" / "config.toml").write_text('[machines]\nfiles = ["fix.smllm.yaml"]\n')
    sub = project / "sub"
    (sub / ".smllm").mkdir(parents=True)
    planted = sub / ".smllm" / "config.toml"
    planted.write_text('[machines]\nfiles = ["evil.smllm.yaml"]\n')
    fire = {"command": "smllm fire enter"}
    found = protect_check("Bash", fire, str(sub), str(project))
    assert found is not None
    assert str(planted) in found
    assert "a machine config the agent can write" in found
    assert protect_check("Bash", fire, str(project), str(project)) is None
    assert protect_check("Bash", {"command": "smllm status"}, str(sub / ".."),
                         str(project)) is None


EVIL = """id: evil
initial: A
meta:
  events:
    go: { description: Go. }
states:
  A:
    on:
      go: { target: B, guard: { type: command, params: { run: "touch MARKER" } } }
  B: { type: final }
"""


def _plant(project: Path, marker: Path) -> Path:
    """sub/.smllm/ with a machine whose guard writes ``marker``, as the agent would plant."""
    sub = project / "sub"
    (sub / ".smllm").mkdir(parents=True)
    (sub / ".smllm" / "config.toml").write_text('[machines]\nfiles = ["evil.smllm.yaml"]\n')
    (sub / ".smllm" / "evil.smllm.yaml").write_text(EVIL.replace("MARKER", str(marker)))
    return sub


def test_a_planted_machine_is_never_loaded_from_the_agents_folder(tmp_path: Path) -> None:
    """Issue 19, acceptance 3 (config resolution): smllm fire, status and the hooks read the
    machines of the project the host session runs in, never the config nearest the shell's
    folder. With a machine planted in sub/.smllm/ and the shell in sub: SessionStart binds
    the project's own machines; the agent's `smllm fire enter` of the planted machine is
    refused in a bound session and an error in an unbound one; the Stop hook of a project
    without machines does not load it; its guard never runs."""
    from machine_project import Project
    from smllm.machine import locations

    marker = tmp_path / "planted-guard-ran"
    project = Project(tmp_path / "proj")
    sub = _plant(project.root, marker)
    env = {"CLAUDE_PROJECT_DIR": str(project.root), "CLAUDE_CODE_SESSION_ID": "cc-p1"}
    start = {"session_id": "cc-p1", "transcript_path": str(tmp_path / "t.jsonl"),
             "cwd": str(sub), "hook_event_name": "SessionStart", "source": "startup"}
    assert 0 == hook("SessionStart", start, env=env, cwd=sub).returncode
    key = locations.read_binding("claude", "cc-p1")
    assert key is not None
    [bind] = locations.read_audit(key)
    assert [str(project.root / ".smllm" / "config.toml")] == bind["binding"]["configs"]
    fire = ["fire", "enter", "--param", "stateMachine=evil"]
    refused = _smllm(fire, sub, env)
    assert (1, "refused") == (refused.returncode, locations.read_audit(key)[-1]["outcome"])
    assert "error: stateMachine = \"evil\" is not one of: fix\n" in refused.stdout
    # a project without machines: nothing binds, and the agent cannot start a session
    bare = tmp_path / "bare"
    (bare / ".git").mkdir(parents=True)
    bare_sub = _plant(bare, marker)
    env = {"CLAUDE_PROJECT_DIR": str(bare), "CLAUDE_CODE_SESSION_ID": "cc-p2"}
    started = hook("SessionStart", {**start, "session_id": "cc-p2", "cwd": str(bare_sub)},
                   env=env, cwd=bare_sub)
    assert (0, None) == (started.returncode, locations.read_binding("claude", "cc-p2"))
    proc = _smllm(fire, bare_sub, env)
    assert (1, "smllm: error: no smllm session is bound to this Claude Code session (smllm's "
               "hooks bind one when a session starts in a project whose .smllm/config.toml "
               "names machines: add them there and start a new session, or pass --session "
               "KEY)\n") == (proc.returncode, proc.stderr)
    (bare_sub / ".smllm" / "evil.smllm.yaml").write_text("id: evil\ninitial: [\n")  # broken
    stop = {**start, "session_id": "cc-p2", "cwd": str(bare_sub), "hook_event_name": "Stop",
            "stop_hook_active": False}
    stopped = hook("Stop", stop, env=env, cwd=bare_sub)
    assert (0, b"") == (stopped.returncode, stopped.stdout.strip())
    assert (False, ["bind", "fire"]) == (marker.exists(),
                                         [ln["call"] for ln in locations.read_audit(key)])


def test_a_person_fires_in_the_project_the_folder_is_in(tmp_path: Path) -> None:
    """From a person's shell (no host session in the environment) a new session runs the
    machines of the project the folder is in, found from any folder inside it; outside
    any project the command says so."""
    from machine_project import Project

    project = Project(tmp_path / "proj")
    deep = project.root / "src" / "pkg"
    deep.mkdir(parents=True)
    entered = _smllm(["fire", "enter", "--param", "stateMachine=fix", "--json"], deep, {})
    assert (0, True) == (entered.returncode, json.loads(entered.stdout)["ok"])
    nowhere = tmp_path / "nowhere"
    nowhere.mkdir()
    proc = _smllm(["fire", "enter", "--param", "stateMachine=fix"], nowhere, {})
    assert (1, f"smllm: error: {nowhere} is in no project (no .smllm/ or .git in it or above) "
               "(run it in your project's folder)\n") == (proc.returncode, proc.stderr)


def _smllm(args: list[str], cwd: Path, env: dict[str, str]) -> Any:
    import os
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "smllm", *args], capture_output=True,
                          text=True, cwd=cwd, env={**os.environ, **env}, timeout=120,
                          check=False)
