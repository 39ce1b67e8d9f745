"""Issue 19, acceptance 1 routes without the CLI: hooks take no orders from the project (an
``SMLLM_*`` variable that the project's own settings set in their ``env`` is dropped before
any hook reads it), and `smllm fire` is not admitted where it would load a planted machine."""

from __future__ import annotations

import json
from pathlib import Path

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
