"""Issue 24 acceptance 3: each installed hook is one short, readable command naming what it
runs (``<env>/bin/smllm-hook EVENT``), with today's fail-closed start and start-up cost."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import base, smllm
from smllm.setup import install, settings

#: where README command 1 (installer/install.sh) puts the environment
SHOWN_BIN = "/home/me/.local/share/smllm/venv/bin"
SID = "5e1f0c2a-3b4d-4e6f-8a9b-0c1d2e3f4a5b"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    p = tmp_path / "proj"
    p.mkdir()
    return p


def _commands(project: Path) -> dict[str, str]:
    hooks_ = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    return {event: groups[-1]["hooks"][0]["command"] for event, groups in hooks_.items()}


def test_each_installed_hook_is_one_short_command_naming_smllm_hook(project: Path,
                                                                     smllm_home: Path) -> None:
    """Every command is `<this env's bin>/smllm-hook EVENT --home HOME` (smllm's home,
    pinned): at most 120 characters with the installer's environment (whose home is the
    platform's), and the executable is in smllm's environment."""
    assert 0 == smllm("install", "--project", str(project)).returncode
    python, _ = install.interpreter()
    exe = Path(python).parent / "smllm-hook"
    commands = _commands(project)
    assert {e: f"{exe} {e} --home {smllm_home}" for e in install.EVENTS} == commands
    shown = {e: c.replace(str(exe.parent), SHOWN_BIN).replace(str(smllm_home), "platform")
             for e, c in commands.items()}
    commands = {e: c.replace(str(smllm_home), "platform") for e, c in commands.items()}
    assert [] == [c for c in [*commands.values(), *shown.values()] if len(c) > 120]
    script = install.python_hook(exe) if install.native_client() else exe
    assert (True, True) == (os.access(exe, os.X_OK), script.read_text().startswith(f"#!{python} "))
    if install.native_client():  # the native client in front of the Python hook
        assert b"\x7fELF" == exe.read_bytes()[:4]


def test_the_executable_runs_the_interpreter_isolated_without_site(project: Path) -> None:
    """The #! line is the absolute interpreter with -IS (one word, as the kernel passes it);
    the body is the guard, the import paths and the entry point, nothing else."""
    python, flags = install.interpreter()
    text = install.hook_script(python, flags)
    assert text is not None
    lines = [ln for ln in text.splitlines() if not ln.startswith("# ")]
    setup = ([f"sys.path[:0] = {json.dumps(install.import_paths())}"] if "-S" in flags else [])
    assert [f"#!{python} -{''.join(f[1:] for f in flags)}".rstrip(" -"),
            install.HOOK_GUARD.rstrip("; "), *setup, install.HOOK_ENTRY] == lines


def _importtime(exe: str, event: str, cwd: Path) -> set[str]:
    """The modules the executable imports, run as its #! line runs it (plus -X importtime)."""
    script = str(install.python_hook(Path(exe))) if install.native_client() else exe
    first = Path(script).read_text().splitlines()[0][2:].split(" ")
    payload = json.dumps(base(event, SID, cwd=str(cwd), source="startup",
                              stop_hook_active=False, reason="other")).encode()
    subprocess.run([exe, event], input=payload, capture_output=True, check=True, cwd=cwd)
    proc = subprocess.run([first[0], "-X", "importtime", *first[1:], script, event], input=payload,
                          capture_output=True, check=True, cwd=cwd)
    return {ln.rsplit("|", 1)[1].strip() for ln in proc.stderr.decode().splitlines()
            if ln.startswith("import time:") and "|" in ln}


@pytest.mark.parametrize("event", ["SessionStart", "Stop", "SessionEnd"])
def test_the_executable_keeps_the_start_up_cost(project: Path, event: str) -> None:
    """No runpy, no site, no re (what a pip console-script wrapper imports), no json: the
    executable starts like the inline `python -I -S -c` it replaces."""
    assert 0 == smllm("install", "--project", str(project)).returncode
    exe = shlex.split(_commands(project)[event])[0]
    names = _importtime(exe, event, project)
    assert "smllm.hooks" in names
    assert [] == sorted(n for n in names if n in ("runpy", "site", "re", "json", "importlib.metadata"))


def _poisoned(tmp_path: Path, files: dict[str, str]) -> Path:
    """A hook executable whose sys.path has a poisoned folder first."""
    poison = tmp_path / "poison"
    for rel, text in files.items():
        (poison / rel).parent.mkdir(parents=True, exist_ok=True)
        (poison / rel).write_text(text)
    python, flags = install.interpreter()
    text = install.hook_script(python, flags)
    assert text is not None
    guard = install.HOOK_GUARD.rstrip("; ")
    text = text.replace(guard, f"{guard}\nsys.path.insert(0, {str(poison)!r})")
    exe = tmp_path / "bin" / "smllm-hook"
    install.write_executable(exe, text)
    return exe


@pytest.mark.parametrize("files", [
    {"smllm/__init__.py": "raise ImportError('broken smllm')\n"},
    {"smllm/__init__.py": "", "smllm/hooks/__init__.py": "def (:\n"},
    {"_json.py": "raise RuntimeError('poisoned _json')\n"},
], ids=["smllm-broken", "hooks-syntax-error", "json-raises"])
def test_the_executable_fails_closed_when_smllm_cannot_start(tmp_path: Path,
                                                             files: dict[str, str]) -> None:
    """smllm cannot be imported: PreToolUse still denies (exit 2 with the reason, or a deny
    JSON), an observing event passes quietly; never exit 1 with a traceback."""
    exe = _poisoned(tmp_path, files)
    payload = json.dumps(base("PreToolUse", SID, cwd=str(tmp_path), tool_name="Bash",
                              tool_input={"command": "rm -rf ~/"}, tool_use_id="t1"))
    gate = subprocess.run([str(exe), "PreToolUse"], input=payload, capture_output=True,
                          text=True, timeout=60, check=False, cwd=tmp_path)
    assert "Traceback" not in gate.stderr
    if gate.returncode == 2:
        assert "the call is denied" in gate.stderr
    else:
        out = json.loads(gate.stdout)["hookSpecificOutput"]
        assert (0, "deny") == (gate.returncode, out["permissionDecision"])
    stop = subprocess.run([str(exe), "Stop"], input=payload, capture_output=True, text=True,
                          timeout=60, check=False, cwd=tmp_path)
    assert (0, "", False) == (stop.returncode, stop.stdout, "Traceback" in stop.stderr)


def test_the_executable_denies_when_its_deadline_passes(project: Path, tmp_path: Path) -> None:
    """A PreToolUse hook that never gets its input ends with a deny before Claude Code's own
    timeout (which would let the call run), as the inline form did."""
    assert 0 == smllm("install", "--project", str(project)).returncode
    exe = shlex.split(_commands(project)["PreToolUse"])[0]
    proc = subprocess.Popen([exe, "PreToolUse"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=project,
                            env={**os.environ, "SMLLM_HOOK_DEADLINE": "1"})
    try:
        out, _ = proc.communicate(timeout=60)  # stdin stays open: the read blocks
    finally:
        if proc.poll() is None:
            proc.kill()
    decision = json.loads(out)["hookSpecificOutput"]["permissionDecision"]
    assert (0, "deny") == (proc.returncode, decision)


def test_uninstall_and_doctor_know_the_long_forms_of_earlier_versions(project: Path) -> None:
    """A settings file written by an earlier version (python -I -S -c '…' EVENT, and
    python -m smllm hook EVENT): doctor counts its hooks, uninstall removes them all."""
    assert 0 == smllm("install", "--project", str(project), "--no-sandbox").returncode
    path = project / ".claude" / "settings.json"
    data = json.loads(path.read_text())
    python, flags = install.interpreter()
    for i, (event, groups) in enumerate(data["hooks"].items()):
        groups[-1]["hooks"][0]["command"] = (install.inline_command(event, python, flags)
                                             if i % 2 else f"{python} -I -m smllm hook {event}")
    path.write_text(json.dumps(data, indent=2) + "\n")
    doctor = smllm("doctor", "--project", str(project))
    assert (f"ok     project settings {path}: parses; smllm hooks for 10/10 events"
            in doctor.stdout.splitlines()), doctor.stdout
    gone = smllm("uninstall", "--project", str(project))
    assert (0, True) == (gone.returncode, gone.stdout.startswith(
        f"removed smllm's hooks (10) from {path}")), gone.stdout


@pytest.mark.parametrize(("command", "event"), [
    ("/v/bin/smllm-hook PreToolUse", "PreToolUse"),
    ("'/my dir/bin/smllm-hook' Stop", "Stop"),
    ("smllm-hook Stop", None),  # not absolute: not what install writes
    ("/v/bin/smllm-hook", None),
    ("/v/bin/smllm-hook-other Stop", None),
    ("echo /v/bin/smllm-hook Stop", None),
])
def test_the_short_form_is_the_mark(command: str, event: str | None) -> None:
    """`<absolute folder>/smllm-hook EVENT`, quoted or not, is an smllm hook; nothing else is."""
    assert event == settings.smllm_event_of({"type": "command", "command": command})


def test_the_executable_is_written_by_install_not_by_a_plan(tmp_path: Path,
                                                           project: Path) -> None:
    """Planning (what --dry-run does) writes no executable; applying the plan writes it
    beside the interpreter, and a plan after that has nothing more to write."""
    python = tmp_path / "env" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.symlink_to(sys.executable)
    _, flags = install.interpreter()
    target = install.resolve_target(str(project), False, False)
    plan = install.plan_install(target, str(python), flags)
    exe = python.parent / "smllm-hook"
    assert (exe, False) == ((plan.executable or (None,))[0], exe.exists())
    install.apply(plan)
    assert (True, None) == (os.access(exe, os.X_OK),
                            install.plan_install(target, str(python), flags).executable)


def test_every_name_of_the_interpreter_writes_the_same_hooks(monkeypatch: pytest.MonkeyPatch) -> None:
    """`smllm install` run as `smllm` (its #! names python3) or as `python -m smllm` writes
    the same hook executable: one name for one program, so two installs never rewrite
    each other's hooks (nor does smllm's tripwire take one for a change outside smllm)."""
    folder = Path(sys.executable).parent
    names = [folder / n for n in ("python", "python3") if (folder / n).exists()]
    assert len(names) == 2, names
    scripts = set()
    for name in names:
        monkeypatch.setattr(sys, "executable", str(name))
        python, flags = install.interpreter()
        assert str(folder / "python") == python
        scripts.add(install.hook_script(python, flags))
    assert 1 == len(scripts)
