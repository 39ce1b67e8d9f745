"""``smllm install|uninstall|doctor --harness codex`` (issue 21): the hooks in
``.codex/hooks.json``, each trusted by Codex's hash in ``$CODEX_HOME/config.toml``, removed
exactly; doctor fails when a hook is untrusted, edited or the project untrusted."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from helpers import PYTHON, smllm
from smllm.base import tomlread
from smllm.setup import codex_install, install

EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse",
          "Stop", "SubagentStart", "SubagentStop", "SessionEnd"]


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    return {"HOME": str(home), "CODEX_HOME": str(home / ".codex")}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    return root


def _config(env: dict[str, str]) -> Path:
    return Path(env["CODEX_HOME"]) / "config.toml"


def _trust_project(env: dict[str, str], project: Path, extra: str = "") -> None:
    _config(env).parent.mkdir(parents=True, exist_ok=True)
    _config(env).write_text(f'model = "gpt-5.5"\n{extra}\n[projects."{project}"]\n'
                            f'trust_level = "trusted"\n')


def _documented_hash(event_snake: str, matcher: str | None, hook: dict[str, Any]) -> str:
    """Codex 0.169's hook hash as shared/ref/codex-hooks.md §4 measured it, written out
    independently of smllm's code."""
    ident: dict[str, Any] = {"event_name": event_snake, "hooks": [{
        "type": "command", "command": hook["command"], "timeout": hook.get("timeout", 600),
        "async": False}]}
    if matcher is not None and event_snake not in ("user_prompt_submit", "stop"):
        ident["matcher"] = matcher
    blob = json.dumps(ident, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(blob.encode()).hexdigest()


def test_install_writes_and_trusts_exactly_smllms_hooks(env: dict[str, str],
                                                         project: Path) -> None:
    _trust_project(env, project)
    mine = {"type": "command", "command": "echo mine", "timeout": 5}
    (project / ".codex").mkdir()
    (project / ".codex" / "hooks.json").write_text(json.dumps(
        {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [mine]}]}}))
    proc = smllm("install", "--harness", "codex", cwd=project, env=env)
    assert 0 == proc.returncode, proc.stderr
    data = json.loads((project / ".codex" / "hooks.json").read_text())
    assert sorted(EVENTS) == sorted(data["hooks"])
    assert mine == data["hooks"]["PreToolUse"][0]["hooks"][0]
    state = tomlread.loads(_config(env).read_text())["hooks"]["state"]
    path = project / ".codex" / "hooks.json"
    expected = {}
    for event, groups in data["hooks"].items():
        for gi, group in enumerate(groups):
            for hi, hook in enumerate(group["hooks"]):
                if hook["command"] == "echo mine":
                    continue
                assert hook["command"].endswith(f"smllm-hook {event} --harness codex "
                                                f"--home {os.environ['SMLLM_HOME']}")
                name = codex_install.snake(event)
                expected[f"{path}:{name}:{gi}:{hi}"] = {
                    "trusted_hash": _documented_hash(name, group.get("matcher"), hook)}
    assert expected == state  # the user's own hook is not trusted by smllm
    assert 3 == data["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"]  # Codex's limit
    again = smllm("install", "--harness", "codex", cwd=project, env=env)
    assert "already installed" in again.stdout


def test_uninstall_restores_every_byte(env: dict[str, str], project: Path) -> None:
    _trust_project(env, project, extra='[hooks.state."/elsewhere:stop:0:0"]\n'
                                        'trusted_hash = "sha256:abc"\n')
    (project / ".codex").mkdir()
    hooks = project / ".codex" / "hooks.json"
    hooks.write_text('{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}}')
    before = (hooks.read_bytes(), _config(env).read_bytes())
    assert 0 == smllm("install", "--harness", "codex", cwd=project, env=env).returncode
    assert before != (hooks.read_bytes(), _config(env).read_bytes())
    proc = smllm("uninstall", "--harness", "codex", cwd=project, env=env)
    assert 0 == proc.returncode, proc.stderr
    assert before == (hooks.read_bytes(), _config(env).read_bytes())


def test_uninstall_removes_what_install_created(env: dict[str, str], project: Path) -> None:
    assert 0 == smllm("install", "--harness", "codex", cwd=project, env=env).returncode
    assert _config(env).exists()
    assert 0 == smllm("uninstall", "--harness", "codex", cwd=project, env=env).returncode
    assert not (project / ".codex").exists()
    assert not _config(env).exists()


def test_user_scope(env: dict[str, str], project: Path) -> None:
    proc = smllm("install", "--harness", "codex", "--user", "--json", cwd=project, env=env)
    assert 0 == proc.returncode, proc.stderr
    out = json.loads(proc.stdout)
    assert ("user", "codex") == (out["scope"], out["harness"])
    user_hooks = Path(env["CODEX_HOME"]) / "hooks.json"
    keys = set(tomlread.loads(_config(env).read_text())["hooks"]["state"])
    assert {f"{user_hooks}:{codex_install.snake(e)}:0:0" for e in EVENTS} == keys
    assert not (project / ".codex").exists()
    assert 0 == smllm("uninstall", "--harness", "codex", "--user", cwd=project, env=env).returncode
    assert not user_hooks.exists()


def test_claude_only_flags_are_refused(env: dict[str, str], project: Path) -> None:
    proc = smllm("install", "--harness", "codex", "--local", cwd=project, env=env)
    assert 2 == proc.returncode
    assert "--local applies to Claude Code" in proc.stderr


def test_the_permission_profile(env: dict[str, str], project: Path) -> None:
    """In a project, install writes smllm's permission profile into .codex/config.toml
    (the protected set read-only to the agent's commands) unless that file chooses a
    sandbox itself; uninstall takes it out again, byte for byte."""
    (project / ".smllm").mkdir()
    box = project / ".codex" / "config.toml"
    assert 0 == smllm("install", "--harness", "codex", cwd=project, env=env).returncode
    data = tomlread.loads(box.read_text())
    assert "smllm" == data["default_permissions"]
    fs = data["permissions"]["smllm"]["filesystem"]
    assert {".": "write", ".smllm": "read"} == fs[":project_roots"]
    own = {k: v for k, v in fs.items() if k.startswith(os.environ["SMLLM_HOME"])}
    assert own
    assert {"read"} == set(own.values())  # smllm's own folders, read-only too
    assert 0 == smllm("uninstall", "--harness", "codex", cwd=project, env=env).returncode
    assert not (project / ".codex").exists()
    (project / ".codex").mkdir()
    box.write_text('sandbox_mode = "danger-full-access"\n')
    proc = smllm("install", "--harness", "codex", cwd=project, env=env)
    assert "sets sandbox_mode itself" in proc.stdout
    assert 'sandbox_mode = "danger-full-access"\n' == box.read_text()
    assert 0 == smllm("uninstall", "--harness", "codex", cwd=project, env=env).returncode
    box.unlink()
    box.write_text('model = "gpt-5.5"\n[tui]\ntheme = "x"\n')
    before = box.read_bytes()
    assert 0 == smllm("install", "--harness", "codex", cwd=project, env=env).returncode
    assert tomlread.loads(box.read_text())["tui"] == {"theme": "x"}
    assert 0 == smllm("uninstall", "--harness", "codex", cwd=project, env=env).returncode
    assert before == box.read_bytes()
    no_box = smllm("install", "--harness", "codex", "--no-sandbox", cwd=project, env=env)
    assert 0 == no_box.returncode
    assert before == box.read_bytes()


def test_a_trust_written_in_another_form_is_refused(env: dict[str, str],
                                                    project: Path) -> None:
    """Two tables for one key make config.toml fail to load, and Codex does not start."""
    key = f"{project}/.codex/hooks.json:session_start:0:0"
    _trust_project(env, project, extra=f"[hooks.state.'{key}']\ntrusted_hash = 'sha256:0'\n")
    before = _config(env).read_bytes()
    proc = smllm("install", "--harness", "codex", cwd=project, env=env)
    assert 1 == proc.returncode
    assert "is written in a form smllm did not write" in proc.stderr
    assert before == _config(env).read_bytes()


def _doctor(project: Path, env: dict[str, str]) -> tuple[int, list[dict[str, str]]]:
    proc = smllm("doctor", "--harness", "codex", "--json", cwd=project, env=env)
    return proc.returncode, json.loads(proc.stdout)["findings"]


def _errors(findings: list[dict[str, str]]) -> list[str]:
    return [f["text"] for f in findings if f["status"] == "error"]


def test_doctor_passes_then_fails_when_a_hook_is_edited(env: dict[str, str],
                                                        project: Path) -> None:
    _trust_project(env, project)
    assert 0 == smllm("install", "--harness", "codex", cwd=project, env=env).returncode
    code, findings = _doctor(project, env)
    assert (0, []) == (code, _errors(findings))
    assert [("ok", "sandbox: smllm's permission profile")] == [
        (f["status"], f["text"].split(" in ")[0]) for f in findings if "sandbox" in f["text"]]
    hooks = project / ".codex" / "hooks.json"
    data = json.loads(hooks.read_text())
    data["hooks"]["PreToolUse"][0]["hooks"][0]["command"] += " --verbose"
    hooks.write_text(json.dumps(data))
    code, findings = _doctor(project, env)
    assert 1 == code
    assert ["PreToolUse hook modified since it was trusted: Codex skips it silently"] == [
        e.split(" (")[0] for e in _errors(findings)]
    assert 0 == smllm("install", "--harness", "codex", cwd=project, env=env).returncode
    assert (0, []) == (_doctor(project, env)[0], _errors(_doctor(project, env)[1]))


def test_doctor_fails_untrusted_and_uninstalled(env: dict[str, str], project: Path) -> None:
    code, findings = _doctor(project, env)
    assert 1 == code
    assert any("not installed for Codex" in e for e in _errors(findings))
    assert 0 == smllm("install", "--harness", "codex", cwd=project, env=env).returncode
    errors = _errors(_doctor(project, env)[1])
    assert [f"project {project} is not trusted by Codex"] == [e.split(",")[0] for e in errors]
    _config(env).write_text(f'[projects."{project}"]\ntrust_level = "trusted"\n')  # trust gone
    errors = _errors(_doctor(project, env)[1])
    assert len(EVENTS) == sum("untrusted: Codex skips it silently" in e for e in errors)


def test_the_start_up_guard_blocks_codex_when_smllm_cannot_import() -> None:
    """The event stays first in a Codex hook's command, so the installed hook's guard still
    ends a gating hook that cannot import smllm with exit 2 and a reason (Codex blocks on
    exit 2 with stderr; exit 1 would let the tool run)."""
    code = install.HOOK_GUARD + "import smllm_is_not_here"
    for args, rc in ((["PreToolUse", "--harness", "codex"], 2), (["Stop", "--harness", "codex"], 0)):
        proc = subprocess.run([PYTHON, "-c", code, *args], capture_output=True, timeout=30,
                              check=False, env=dict(os.environ))
        assert rc == proc.returncode
        assert b"the call is denied" in proc.stderr


def test_hash_vector() -> None:
    """One vector of Codex's algorithm, computed by hand: a SessionEnd default (1 s), a
    Stop whose matcher is left out."""
    hook = {"type": "command", "command": "x"}
    blob = '{"event_name":"session_end","hooks":[{"async":false,"command":"x","timeout":1,"type":"command"}]}'
    assert "sha256:" + hashlib.sha256(blob.encode()).hexdigest() == codex_install.trust_hash(
        "SessionEnd", None, hook)
    assert codex_install.trust_hash("Stop", "*", hook) == codex_install.trust_hash(
        "Stop", None, hook)
