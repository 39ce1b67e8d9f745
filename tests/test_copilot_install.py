"""``smllm install|uninstall|doctor --harness copilot`` (issue 22): smllm's native hook file
in ``.github/hooks/smllm.json`` (or ``~/.copilot/hooks/smllm.json`` with ``--user``), the
project trusted in ``~/.copilot/config.json`` (Copilot skips a project's hooks silently
otherwise), removed exactly; doctor fails where Copilot would not run the hooks and says
which guarantees hold."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from helpers import smllm
from smllm.harness import copilot
from smllm.setup import copilot_install

#: Copilot's config.json as it writes it (JSON with comment lines), another folder trusted
CONFIG = ('// User settings belong in settings.json.\n// This file is managed automatically.\n'
          '{\n  "trustedFolders": [\n    "/elsewhere"\n  ],\n  "firstLaunchAt": "x"\n}\n')


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("COPILOT_HOME", raising=False)
    return {"HOME": str(home)}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    return root


def _home(env: dict[str, str]) -> Path:
    return Path(env["HOME"]) / ".copilot"


def test_install_writes_every_event_natively_and_trusts_the_project(
        env: dict[str, str], project: Path) -> None:
    proc = smllm("install", "--harness", "copilot", cwd=project, env=env)
    assert 0 == proc.returncode, proc.stderr
    data = json.loads((project / ".github" / "hooks" / "smllm.json").read_text())
    assert 1 == data["version"]
    assert set(copilot.EVENTS.values()) == set(data["hooks"])
    for event, native in copilot.EVENTS.items():
        [hook] = data["hooks"][native]
        assert hook["bash"].endswith(f"smllm-hook {event} --harness copilot "
                                     f"--home {env.get('SMLLM_HOME') or os.environ['SMLLM_HOME']}")
        exe = hook["bash"].split(" ")[0]
        assert os.access(exe, os.X_OK)
    # the gate's timeout is over smllm's own deadline (270 s): a timeout lets the tool run
    assert 300 == data["hooks"]["preToolUse"][0]["timeoutSec"]
    config = json.loads((_home(env) / "config.json").read_text())
    assert [str(project)] == config["trusted_folders"]
    again = smllm("install", "--harness", "copilot", cwd=project, env=env)
    assert "already installed" in again.stdout
    doctor = smllm("doctor", "--harness", "copilot", cwd=project, env=env)
    assert 0 == doctor.returncode, doctor.stdout
    assert f"project {project} trusted by Copilot" in doctor.stdout
    for name in ("journal before effect", "gate", "stop enforcement", "resume"):
        assert f"guarantee: {name}: holds" in doctor.stdout
    assert "guarantee: protected set: advisory" in doctor.stdout
    assert "sandbox: off" in doctor.stdout


def test_uninstall_gives_every_byte_back(env: dict[str, str], project: Path) -> None:
    home = _home(env)
    home.mkdir()
    (home / "config.json").write_text(CONFIG)
    (project / ".github").mkdir()
    (project / ".github" / "CODEOWNERS").write_text("* @me\n")
    assert 0 == smllm("install", "--harness", "copilot", cwd=project, env=env).returncode
    written = (home / "config.json").read_text()
    assert written.startswith("// User settings belong in settings.json.\n")
    assert ["/elsewhere", str(project)] == json.loads(
        written.split("automatically.\n", 1)[1])["trustedFolders"]
    proc = smllm("uninstall", "--harness", "copilot", cwd=project, env=env)
    assert 0 == proc.returncode, proc.stderr
    assert CONFIG == (home / "config.json").read_text()
    assert ["CODEOWNERS"] == sorted(p.name for p in (project / ".github").iterdir())
    # a home and project install made from nothing leave nothing
    (home / "config.json").unlink()
    home.rmdir()
    (project / ".github" / "CODEOWNERS").unlink()
    (project / ".github").rmdir()
    assert 0 == smllm("install", "--harness", "copilot", cwd=project, env=env).returncode
    assert 0 == smllm("uninstall", "--harness", "copilot", cwd=project, env=env).returncode
    assert [".git"] == sorted(p.name for p in project.iterdir())
    assert not (home / "config.json").exists()


def test_a_folder_trusted_before_stays_trusted(env: dict[str, str], project: Path) -> None:
    _home(env).mkdir()
    before = json.dumps({"trusted_folders": [str(project)]})
    (_home(env) / "config.json").write_text(before)
    assert 0 == smllm("install", "--harness", "copilot", cwd=project, env=env).returncode
    assert 0 == smllm("uninstall", "--harness", "copilot", cwd=project, env=env).returncode
    assert before == (_home(env) / "config.json").read_text()


def test_user_install_needs_no_trust(env: dict[str, str], project: Path) -> None:
    proc = smllm("install", "--harness", "copilot", "--user", cwd=project, env=env)
    assert 0 == proc.returncode, proc.stderr
    assert (_home(env) / "hooks" / "smllm.json").exists()
    assert not (_home(env) / "config.json").exists()
    doctor = smllm("doctor", "--harness", "copilot", cwd=project, env=env)
    assert 0 == doctor.returncode, doctor.stdout
    assert 0 == smllm("uninstall", "--harness", "copilot", "--user", cwd=project,
                      env=env).returncode
    assert not (_home(env) / "hooks").exists()


def test_a_hook_file_of_someone_else_is_left_alone(env: dict[str, str], project: Path) -> None:
    hooks = project / ".github" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "smllm.json").write_text('{"version": 1, "hooks": {"preToolUse": '
                                      '[{"type": "command", "bash": "./mine.sh"}]}}')
    proc = smllm("install", "--harness", "copilot", cwd=project, env=env)
    assert 1 == proc.returncode
    assert "holds hooks smllm did not write" in proc.stderr
    assert "./mine.sh" in (hooks / "smllm.json").read_text()


def test_doctor_fails_where_copilot_would_not_run_the_hooks(env: dict[str, str],
                                                            project: Path) -> None:
    assert 1 == smllm("doctor", "--harness", "copilot", cwd=project, env=env).returncode
    assert 0 == smllm("install", "--harness", "copilot", cwd=project, env=env).returncode
    # the trust taken away: Copilot skips the project's hooks silently
    (_home(env) / "config.json").write_text("{}")
    doctor = smllm("doctor", "--harness", "copilot", cwd=project, env=env)
    assert 1 == doctor.returncode
    assert "is not trusted by Copilot, which then skips" in doctor.stdout
    (_home(env) / "config.json").write_text(json.dumps({"trustedFolders": [str(project)]}))
    (_home(env) / "settings.json").write_text('{"disableAllHooks": true}')
    doctor = smllm("doctor", "--harness", "copilot", cwd=project, env=env)
    assert 1 == doctor.returncode
    assert "disableAllHooks is true" in doctor.stdout


def test_doctor_on_copilots_sandbox(env: dict[str, str], project: Path,
                                    smllm_home: Path) -> None:
    """Copilot's hooks run inside its sandbox: a store read-only there cannot journal
    (every call denied); a writable one is writable by the agent too (advisory)."""
    assert 0 == smllm("install", "--harness", "copilot", cwd=project, env=env).returncode
    settings = _home(env) / "settings.json"
    policy = {"sandbox": {"enabled": True, "userPolicy": {"filesystem": {
        "readonlyPaths": [str(smllm_home)]}}}}
    settings.write_text(json.dumps(policy))
    doctor = smllm("doctor", "--harness", "copilot", cwd=project, env=env)
    assert 1 == doctor.returncode
    assert "where smllm's hooks run too: they cannot journal" in doctor.stdout
    # smllm's code outside the home, the project and the listed folders: measured to be
    # absent inside the sandbox (the hooks could not start)
    code = str(Path(copilot_install.__file__).resolve().parents[2])
    fs = policy["sandbox"]["userPolicy"]["filesystem"]
    fs["readonlyPaths"] = [str(project / ".github")]
    fs["readwritePaths"] = [str(smllm_home)]
    settings.write_text(json.dumps(policy))
    doctor = smllm("doctor", "--harness", "copilot", cwd=project, env=env)
    if not code.startswith(env["HOME"]):
        assert "inside the sandbox it may not be there" in doctor.stdout
    fs["readonlyPaths"].append(code)
    fs["readonlyPaths"].append(sys.prefix)
    settings.write_text(json.dumps(policy))
    doctor = smllm("doctor", "--harness", "copilot", cwd=project, env=env)
    assert 0 == doctor.returncode, doctor.stdout
    assert "sandbox: on; smllm's hooks run inside it" in doctor.stdout, doctor.stdout


def test_flags_of_other_hosts_are_refused(env: dict[str, str], project: Path) -> None:
    for flag in ("--local", "--no-sandbox"):
        proc = smllm("install", "--harness", "copilot", flag, cwd=project, env=env)
        assert 2 == proc.returncode
        assert "--harness copilot" in proc.stderr


def test_the_modules_examples_hold() -> None:
    import doctest

    result = doctest.testmod(copilot_install)
    assert (result.failed, result.attempted > 0) == (0, True)
