"""``smllm install|uninstall|doctor --harness gemini`` (issue 22): the hooks in Gemini CLI's
settings with their timeouts in milliseconds, its tool sandbox on and .geminiignore keeping
.gemini/ and .smllm/ from it, smllm's hooks recorded as announced; removed exactly; doctor
fails where Gemini would skip smllm's hooks or let a call run, and says which guarantees
hold."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from helpers import smllm
from smllm.harness import gemini
from smllm.setup import gemini_doctor, gemini_install
from smllm.tripwire import keeper


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    monkeypatch.delenv("GEMINI_CLI_TRUST_WORKSPACE", raising=False)
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    return root


def _settings(project: Path) -> dict[str, object]:
    data = json.loads((project / ".gemini" / "settings.json").read_text())
    assert isinstance(data, dict)
    return data


def _run(*args: str, project: Path) -> tuple[int, str]:
    proc = smllm(*args, cwd=project)
    return proc.returncode, proc.stdout + proc.stderr


def test_install_writes_smllms_hooks_under_geminis_event_names(home: Path, project: Path) -> None:
    """One named group per Gemini event, each running ``smllm-hook EVENT --harness gemini``
    with a timeout in milliseconds (past the hook's own deadline: Gemini kills a hook at its
    timeout and runs the tool); the tool sandbox on; .geminiignore and Gemini's list of
    announced project hooks written."""
    code, out = _run("install", "--harness", "gemini", project=project)
    assert 0 == code, out
    hooks = _settings(project)["hooks"]
    assert isinstance(hooks, dict)
    assert [host for _, host in gemini.EVENTS] == list(hooks)
    for event, host in gemini.EVENTS:
        (group,) = hooks[host]
        (hook,) = group["hooks"]
        assert (f"smllm-{event}", f"{event} --harness gemini --home "
                f"{os.environ['SMLLM_HOME']}") == (
            hook["name"], hook["command"].split("smllm-hook ", 1)[1])
        assert hook["timeout"] >= gemini_doctor.min_timeout_ms(event) > 1000
        assert (".*" if event in ("PreToolUse", "PostToolUse") else None) == group.get("matcher")
    assert {"toolSandboxing": True} == _settings(project)["security"]
    assert ".gemini/\n.smllm/\n" in (project / ".geminiignore").read_text()
    trusted = json.loads((home / ".gemini" / "trusted_hooks.json").read_text())
    assert [f"smllm-{e}" for e, _ in gemini.EVENTS] == [
        k.split(":", 1)[0] for k in trusted[str(project)]]
    assert "already installed" in _run("install", "--harness", "gemini", project=project)[1]


def test_uninstall_restores_every_byte(home: Path, project: Path) -> None:
    """What was there before (settings with comments-free JSON of the user's own, a
    .geminiignore, Gemini's trusted hooks of another project) comes back byte for byte."""
    (project / ".gemini").mkdir()
    mine = ('{\n    "ui": {"theme": "GitHub"},\n    "hooks": {"BeforeTool": [{"matcher": '
            '"write_file", "hooks": [{"type": "command", "command": "echo mine"}]}]}\n}')
    (project / ".gemini" / "settings.json").write_text(mine)
    (project / ".geminiignore").write_text("build/")
    (home / ".gemini").mkdir()
    other = json.dumps({"/elsewhere": ["a:b"]}, indent=2)
    (home / ".gemini" / "trusted_hooks.json").write_text(other)
    assert 0 == _run("install", "--harness", "gemini", project=project)[0]
    data = _settings(project)
    assert {"theme": "GitHub"} == data["ui"]
    assert ["echo mine", "smllm-PreToolUse"] == [
        h.get("name", h["command"]) for g in data["hooks"]["BeforeTool"] for h in g["hooks"]]
    assert "    " in (project / ".gemini" / "settings.json").read_text()  # its indent kept
    code, out = _run("uninstall", "--harness", "gemini", project=project)
    assert (0, "uninstalled: 6 smllm hook(s)") == (code, out.split(" from ")[0])
    assert mine == (project / ".gemini" / "settings.json").read_text()
    assert "build/" == (project / ".geminiignore").read_text()
    assert other == (home / ".gemini" / "trusted_hooks.json").read_text()


def test_uninstall_removes_what_install_created(home: Path, project: Path) -> None:
    """A fresh project and home: nothing of smllm's (or empty of Gemini's) is left."""
    assert 0 == _run("install", "--harness", "gemini", project=project)[0]
    assert 0 == _run("uninstall", "--harness", "gemini", project=project)[0]
    assert [".git"] == sorted(p.name for p in project.iterdir())
    assert [] == list(home.iterdir())


def test_a_sandbox_choice_of_the_user_is_kept(home: Path, project: Path) -> None:
    """A file that turns the tool sandbox off keeps it off (and uninstall leaves it), and
    --no-sandbox writes neither the setting nor .geminiignore."""
    (project / ".gemini").mkdir()
    (project / ".gemini" / "settings.json").write_text('{"security": {"toolSandboxing": false}}')
    code, out = _run("install", "--harness", "gemini", project=project)
    assert (0, True) == (code, "turns Gemini's tool sandbox off itself" in out), out
    assert {"toolSandboxing": False} == _settings(project)["security"]
    assert 0 == _run("uninstall", "--harness", "gemini", project=project)[0]
    assert '{"security": {"toolSandboxing": false}}' == (
        project / ".gemini" / "settings.json").read_text()
    other = project.parent / "other"
    (other / ".git").mkdir(parents=True)
    assert 0 == _run("install", "--harness", "gemini", "--no-sandbox", project=other)[0]
    assert "security" not in json.loads((other / ".gemini" / "settings.json").read_text())
    assert not (other / ".geminiignore").exists()


def test_user_scope(home: Path, project: Path) -> None:
    """--user writes ~/.gemini/settings.json (kept private from the sandboxed tools) and
    touches no project file."""
    assert 0 == _run("install", "--harness", "gemini", "--user", project=project)[0]
    data = json.loads((home / ".gemini" / "settings.json").read_text())
    assert 6 == sum(len(g["hooks"]) for groups in data["hooks"].values() for g in groups)
    assert [".git"] == sorted(p.name for p in project.iterdir())
    assert 0 == _run("uninstall", "--harness", "gemini", "--user", project=project)[0]
    assert not (home / ".gemini" / "settings.json").exists()


def test_a_file_with_comments_is_left_alone(home: Path, project: Path) -> None:
    """Gemini CLI reads settings with comments; smllm does not rewrite such a file."""
    (project / ".gemini").mkdir()
    text = '{\n  // mine\n  "ui": {}\n}\n'
    (project / ".gemini" / "settings.json").write_text(text)
    code, out = _run("install", "--harness", "gemini", project=project)
    assert 1 == code
    assert f"smllm: error: {project}/.gemini/settings.json:2: not plain JSON" in out
    assert text == (project / ".gemini" / "settings.json").read_text()


def test_dry_run_writes_nothing(home: Path, project: Path) -> None:
    code, out = _run("install", "--harness", "gemini", "--dry-run", project=project)
    assert 0 == code
    assert "+++ " + str(project / ".gemini" / "settings.json") in out
    assert [".git"] == sorted(p.name for p in project.iterdir())


def _doctor(project: Path) -> tuple[int, str]:
    return _run("doctor", "--harness", "gemini", project=project)


def test_doctor_says_which_guarantees_hold(home: Path, project: Path) -> None:
    """Installed with the sandbox: no error, one line per guarantee, the protected set
    enforced within a session and advisory with the tripwire across sessions; without the
    sandbox, advisory with the tripwire; advisory alone where the tripwire is not armed."""
    assert 0 == _run("install", "--harness", "gemini", project=project)[0]
    code, out = _doctor(project)
    assert 0 == code, out
    lines = [ln for ln in out.splitlines() if "guarantee:" in ln]
    assert ["journal before effect", "gate", "stop enforcement", "protected set", "resume"] == [
        ln.split("guarantee: ", 1)[1].split(":", 1)[0] for ln in lines]
    assert "protected set: advisory + tripwire across sessions, enforced by the OS within a " \
           "session" in out
    assert f"{project} is not a trusted folder of Gemini CLI" in out
    (home / ".gemini" / "trustedFolders.json").write_text(
        json.dumps({str(project): "TRUST_FOLDER"}))
    assert "trusted by Gemini CLI" in _doctor(project)[1]
    settings = _settings(project)
    settings["security"] = {"toolSandboxing": False}
    (project / ".gemini" / "settings.json").write_text(json.dumps(settings))
    assert "protected set: advisory + tripwire: Gemini's tool sandbox is off" in \
        _doctor(project)[1]
    keeper.disarm(str(project), "gemini")
    assert "protected set: advisory: Gemini's tool sandbox is off" in _doctor(project)[1]


def test_doctor_fails_where_gemini_would_skip_or_outrun_smllms_hooks(home: Path,
                                                                     project: Path) -> None:
    """A gating hook's timeout in seconds (what Gemini's own Claude migrator keeps: 30 is
    30 ms), hooks switched off by the project's file, one of smllm's disabled by name, and
    no install at all are errors."""
    assert 0 == _run("install", "--harness", "gemini", project=project)[0]
    settings = _settings(project)
    settings["hooks"]["BeforeTool"][0]["hooks"][0]["timeout"] = 300  # type: ignore[index]
    settings["hooksConfig"] = {"enabled": False, "disabled": ["smllm-Stop"]}
    (project / ".gemini" / "settings.json").write_text(json.dumps(settings))
    code, out = _doctor(project)
    assert 1 == code
    assert "PreToolUse hook: timeout 300 ms is shorter than its own deadline: Gemini CLI " \
           "kills it and runs the tool" in out
    assert "hooksConfig.enabled is false: Gemini CLI runs no hook at all" in out
    assert "hooksConfig.disabled turns off smllm-Stop" in out
    other = project.parent / "other"
    other.mkdir()
    code, out = _doctor(other)
    assert (1, True) == (code, f"smllm is not installed for Gemini CLI in {other}" in out)


def test_the_start_up_guard_blocks_gemini_when_smllm_cannot_import() -> None:
    """The installed command keeps the event first, so the guard that exits 2 (a block on
    Gemini CLI, stderr its reason) when smllm cannot even be imported sees PreToolUse."""
    command = gemini_install.command("PreToolUse", "/venv/bin/python", ["-I"])
    assert command.endswith(f"smllm-hook PreToolUse --harness gemini --home "
                            f"{os.environ['SMLLM_HOME']}")
    assert "PreToolUse" == gemini_install.smllm_event_of({"command": command})
    assert gemini_install.smllm_event_of({"command": "echo PreToolUse --harness gemini"}) is None
