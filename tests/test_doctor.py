"""`smllm doctor` (issue 3 acceptance 5): where smllm is, which interpreter the hooks use,
whether each settings file parses, and the malformed file Claude Code would ignore."""


from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

import smllm as smllm_pkg
from helpers import REPO, smllm
from smllm.setup import install

PKG = Path(smllm_pkg.__file__).parent


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    return {"HOME": str(home)}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    p = tmp_path / "proj"
    p.mkdir()
    return p


def _doctor(project: Path, env: dict[str, str]) -> tuple[int, list[str]]:
    proc = smllm("doctor", "--project", str(project), env=env)
    assert "" == proc.stderr
    return proc.returncode, proc.stdout.splitlines()


def _paths(project: Path, env: dict[str, str]) -> dict[str, Path]:
    return {"user": Path(env["HOME"]) / ".claude" / "settings.json",
            "project": project / ".claude" / "settings.json",
            "local": project / ".claude" / "settings.local.json"}


def test_nothing_installed(project: Path, env: dict[str, str]) -> None:
    """A bare machine: where smllm is, three absent files, and a hint to install."""
    rc, lines = _doctor(project, env)
    p = _paths(project, env)
    expected = [
        f"ok     smllm {smllm_pkg.VERSION} at {PKG} (python {sys.executable})",
        f"info   user settings {p['user']}: not present",
        f"info   project settings {p['project']}: not present",
        f"info   local settings {p['local']}: not present",
        f"warn   smllm is not installed for {project} (run `smllm install --project {project}` "
        f"or add the plugin)",
        "info   plugin smllm: not enabled in these settings",
        "info   tripwire: not armed for this project (`smllm install` arms it: changes to the "
        "protected files are then noticed)",
    ]
    assert (0, expected) == (rc, [line for line in lines if not line.startswith(
        ("ok     policy", "info   machines", "error  policy", "ok     store folders",
         "warn   sandbox", "ok     sandbox"))][:-1])
    assert lines[-1].endswith("warning(s)")


def test_installed_project_names_the_interpreter(project: Path, env: dict[str, str]) -> None:
    """After install: the file parses, all events are registered, the interpreter imports smllm."""
    assert 0 == smllm("install", "--project", str(project), env=env).returncode
    rc, lines = _doctor(project, env)
    p = _paths(project, env)
    assert f"ok     project settings {p['project']}: parses; smllm hooks for 10/10 events" in lines
    python, flags = install.interpreter()
    exe = install.hook_executable(python)
    expected = (f"ok       hooks run {exe} ({' '.join([python, *flags])}): smllm "
                f"{smllm_pkg.VERSION} from {PKG}")
    # each executable once (it was printed once per event: ten identical lines)
    assert (0, 1) == (rc, lines.count(expected)), lines
    # what each hook runs, one line per event
    width = max(map(len, install.EVENTS)) + 1
    home = env.get("SMLLM_HOME") or os.environ["SMLLM_HOME"]
    native = "info     hooks run through the native client"
    assert [f"info     {e + ':':<{width}} {exe} {e} --home {home}" for e in install.EVENTS] == [
        ln for ln in lines if ln.startswith("info     ") and not ln.startswith(native)], lines
    # where install built the native client, the worker it hands the hooks to
    assert [exe.read_bytes()[:4] == b"\x7fELF"] == [any(ln.startswith(native) for ln in lines)]


def test_malformed_local_file_is_an_error(project: Path, env: dict[str, str]) -> None:
    """A settings file Claude Code would silently ignore is flagged with file:line; exit 1."""
    assert 0 == smllm("install", "--project", str(project), env=env).returncode
    local = _paths(project, env)["local"]
    local.write_text('{\n  "env": {"A": "1"},\n  oops\n}\n')
    rc, lines = _doctor(project, env)
    expected = (f"error  local settings {local}:3: not valid JSON at column 3, near 'oops' "
                f"(fix or remove the file; Claude Code silently ignores a malformed settings "
                f"file: none of its hooks fire)")
    assert (1, True) == (rc, expected in lines), lines
    assert "1 error(s), 0 warning(s)" == lines[-1]


def test_missing_interpreter_is_an_error(project: Path, env: dict[str, str]) -> None:
    """Hooks pointing at a deleted venv would fail on every event: doctor says so, for the
    hook executable, the interpreter it names, and the long form of earlier versions."""
    assert 0 == smllm("install", "--project", str(project), env=env).returncode
    path = _paths(project, env)["project"]
    text = path.read_text()
    exe = str(install.hook_executable(install.interpreter()[0]))
    path.write_text(text.replace(exe, "/gone/venv/bin/smllm-hook"))
    rc, lines = _doctor(project, env)
    expected = ("error    hooks run /gone/venv/bin/smllm-hook: not an executable file (re-run "
                f"`smllm install --project {project}` with the Python smllm lives in)")
    assert (1, True) == (rc, expected in lines), lines
    stale = Path(env["HOME"]) / "bin" / "smllm-hook"
    stale.parent.mkdir()
    script = install.python_hook(Path(exe)) if install.native_client() else Path(exe)
    stale.write_text(script.read_text().replace(sys.executable, "/gone/venv/bin/python", 1))
    stale.chmod(0o755)
    path.write_text(text.replace(exe, str(stale)))
    rc, lines = _doctor(project, env)
    expected = (f"error    hooks run {stale}, whose interpreter /gone/venv/bin/python is not "
                f"an executable file (re-run `smllm install --project {project}` with the "
                "Python smllm lives in)")
    assert (1, True) == (rc, expected in lines), lines
    python, flags = install.interpreter()
    old = json.dumps(install.inline_command("E", python, flags)[:-2])[1:-1]
    path.write_text(text.replace(exe, old.replace(sys.executable, "/gone/venv/bin/python")))
    rc, lines = _doctor(project, env)
    expected = ("error    hooks run /gone/venv/bin/python: not an executable file (re-run "
                f"`smllm install --project {project}` with the Python smllm lives in)")
    assert (1, True) == (rc, expected in lines), lines


def test_interpreter_without_smllm_is_an_error(project: Path, env: dict[str, str],
                                               tmp_path: Path) -> None:
    """An interpreter that exists but cannot import smllm is reported with its error."""
    assert 0 == smllm("install", "--project", str(project), env=env).returncode
    path = _paths(project, env)["project"]
    launch = str(install.hook_executable(install.interpreter()[0]))
    other = json.dumps("/usr/bin/python3 -I -c 'from smllm.hooks import cli; cli()'")[1:-1]
    path.write_text(path.read_text().replace(launch, other))
    rc, lines = _doctor(project, env)
    expected = ("error    hooks run /usr/bin/python3: it cannot import smllm "
                "(ModuleNotFoundError: No module named 'smllm'); reinstall smllm into it or "
                f"re-run `smllm install --project {project}`")
    assert (1, True) == (rc, expected in lines), lines


def test_double_registration_warnings(project: Path, env: dict[str, str]) -> None:
    """smllm in two settings files, or in settings and the plugin: each event would run twice."""
    assert 0 == smllm("install", "--project", str(project), env=env).returncode
    assert 0 == smllm("install", "--user", env=env).returncode
    p = _paths(project, env)
    _, lines = _doctor(project, env)
    assert (f"warn   double registration: smllm's hooks are in {p['user']}, {p['project']}, so "
            f"every event runs more than once (keep one: `smllm uninstall --user` leaves those "
            f"of {p['project']})") in lines
    data = json.loads(p["user"].read_text())
    data["enabledPlugins"] = {"smllm@smllm": True}
    p["user"].write_text(json.dumps(data))
    assert 0 == smllm("uninstall", "--user", env=env).returncode
    _, lines = _doctor(project, env)
    assert "ok     plugin smllm@smllm: enabled" in lines
    assert (f"warn   double registration: smllm's hooks are in {p['project']} and in the plugin "
            f"smllm@smllm, so every event runs twice (keep one route: `smllm uninstall "
            f"--project {project}`, or `claude plugin uninstall smllm@smllm`)") in lines


@pytest.mark.parametrize(("edit", "expected"), [
    ("disable", "error  {path}: disableAllHooks: turns every hook off: smllm neither gates nor "
                "journals a call (remove it)"),
    ("partial", "warn   {label}: parses; smllm hooks for 9/10 events (missing: Stop; re-run "
                "`smllm install --project {project}`)"),
])
def test_settings_that_stop_hooks_firing_are_warned(project: Path, env: dict[str, str],
                                                    edit: str, expected: str) -> None:
    """disableAllHooks is an error (smllm is off), an smllm event removed by hand a warning."""
    assert 0 == smllm("install", "--project", str(project), env=env).returncode
    path = _paths(project, env)["project"]
    data = json.loads(path.read_text())
    if edit == "disable":
        data["disableAllHooks"] = True
    else:
        del data["hooks"]["Stop"]
    path.write_text(json.dumps(data))
    _, lines = _doctor(project, env)
    assert expected.format(label=f"project settings {path}", project=project,
                           path=path) in lines, lines


def test_installed_plugin_and_its_private_environment(project: Path, env: dict[str, str]) -> None:
    """An installed plugin: its install folder, launcher, and a failed bootstrap are reported."""
    plugins = Path(env["HOME"]) / ".claude" / "plugins"
    root = plugins / "cache" / "smllm" / "smllm" / "0.1.0"
    (root / "hooks").mkdir(parents=True)
    (plugins / "installed_plugins.json").write_text(json.dumps({"version": 2, "plugins": {
        "smllm@smllm": [{"scope": "user", "installPath": str(root), "version": "0.1.0"}]}}))
    (Path(env["HOME"]) / ".claude" / "settings.json").write_text(
        json.dumps({"enabledPlugins": {"smllm@smllm": True}}))
    (plugins / "known_marketplaces.json").write_text(json.dumps({"smllm": {
        "source": {"source": "directory", "path": "/src/smllm"},
        "installLocation": "/src/smllm"}}))
    data = plugins / "data" / "smllm-smllm"
    data.mkdir(parents=True)
    (data / "bootstrap.failed").write_text("pip could not reach the index\n")
    rc, lines = _doctor(project, env)
    assert [
        "ok     plugin smllm@smllm: enabled",
        "error    user install, version 0.1.0: Claude Code runs it from /src/smllm, the "
        "marketplace folder itself (read in place: edits apply from the next session): "
        "/src/smllm/hooks/launcher is missing; run `claude plugin marketplace update smllm`",
        f"warn     private environment: the bootstrap failed (pip could not reach the index); "
        f"hooks run on python3 from PATH meanwhile; see {data}/bootstrap.log",
    ] == lines[lines.index("ok     plugin smllm@smllm: enabled"):][:3]
    assert 1 == rc


def test_doctor_run_from_the_plugin_says_so(project: Path, env: dict[str, str]) -> None:
    """Run by the launcher (a slash command), doctor names the plugin and no install is missing."""
    root = PKG.parent.parent
    _, lines = _doctor(project, {**env, "CLAUDE_PLUGIN_ROOT": str(root)})
    assert (f"ok     plugin: this smllm runs from the plugin at {root} (the folder itself, "
            "loaded with --plugin-dir (no copy))") in lines
    assert [] == [line for line in lines if "is not installed" in line]


def test_doctor_after_a_marketplace_install_of_a_folder(project: Path, env: dict[str, str]) -> None:
    """A plugin installed from a local-folder marketplace: Claude Code reads that folder in
    place (`claude plugin list`: "Read from"), so doctor says so, not --plugin-dir."""
    home = Path(env["HOME"])
    root = PKG.parent.parent
    plugins = home / ".claude" / "plugins"
    copy = plugins / "cache" / "smllm" / "smllm" / "0.1.0"
    copy.mkdir(parents=True)
    (plugins / "installed_plugins.json").write_text(json.dumps({"version": 2, "plugins": {
        "smllm@smllm": [{"scope": "user", "installPath": str(copy), "version": "0.1.0"}]}}))
    (plugins / "known_marketplaces.json").write_text(json.dumps({"smllm": {
        "source": {"source": "directory", "path": str(root)}}}))
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"enabledPlugins": {"smllm@smllm": True}}))
    _, lines = _doctor(project, {**env, "CLAUDE_PLUGIN_ROOT": str(root)})
    assert [f"ok       user install, version 0.1.0: Claude Code runs it from {root}, the "
            "marketplace folder itself (read in place: edits apply from the next session): "
            "launcher present",
            f"ok     plugin: this smllm runs from the plugin at {root} (installed as "
            "smllm@smllm, its marketplace folder read in place)"] == [ln for ln in lines if ln.startswith(
                ("ok     plugin: this", "ok       user install"))]


def test_plugin_page_shows_what_doctor_prints(project: Path, env: dict[str, str],
                                             tmp_path: Path) -> None:
    """docs/plugin.md's doctor lines (an install from a folder marketplace, which Claude Code
    reads in place) are what doctor prints for such an install."""
    home = Path(env["HOME"])
    plugins = home / ".claude" / "plugins"
    clone = tmp_path / "smllm"
    (clone / "hooks").mkdir(parents=True)
    (clone / "hooks" / "launcher").write_text("#!/bin/sh\n")
    (clone / "hooks" / "launcher").chmod(0o755)
    root = plugins / "cache" / "smllm" / "smllm" / "0.1.0"
    root.mkdir(parents=True)
    (plugins / "installed_plugins.json").write_text(json.dumps({"version": 2, "plugins": {
        "smllm@smllm": [{"scope": "user", "installPath": str(root), "version": "0.1.0"}]}}))
    (plugins / "known_marketplaces.json").write_text(json.dumps({"smllm": {
        "source": {"source": "directory", "path": str(clone)}}}))
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"enabledPlugins": {"smllm@smllm": True}}))
    _, lines = _doctor(project, env)
    page = (REPO / "docs" / "plugin.md").read_text()
    shown = page.split("```text\nok     plugin smllm@smllm", 1)[1].split("```", 1)[0]
    expected = ("ok     plugin smllm@smllm" + shown).strip().splitlines()
    assert expected == [ln.replace(str(clone), "/path/to/smllm") for ln in lines
                        if ln.startswith(("ok     plugin smllm", "ok       user install"))]


def test_allow_rules_of_an_earlier_install_are_warned(project: Path, env: dict[str, str],
                                                     smllm_home: Path) -> None:
    """An install from before this version (its four allow rules): doctor says Claude Code
    ignores them and warns on every `claude -p`, and that re-running install removes them."""
    assert 0 == smllm("install", "--project", str(project), env=env).returncode
    path = _paths(project, env)["project"]
    data = json.loads(path.read_text())
    rules = ["Bash(smllm fire *)", "Bash(smllm status)", "Bash(smllm status *)",
             "mcp__smllm__smllm"]
    data["permissions"] = {"allow": rules}
    path.write_text(json.dumps(data))
    _, lines = _doctor(project, env)
    warning = (f"warn   project settings {path}: allow rules an earlier smllm install added, no "
               "longer needed (Claude Code ignores them until you trust this folder, and prints "
               "\"Ignoring 4 permissions.allow entries\" on every claude -p): "
               f"{', '.join(rules)}; re-run `smllm install --project {project}` to remove them")
    assert warning in lines, lines
    for rec in (smllm_home / "installs").glob("*.json"):  # as the earlier install recorded it
        saved = json.loads(rec.read_text())
        if saved["path"] == str(path):
            saved["added"]["allow"] = rules
            rec.write_text(json.dumps(saved))
    assert 0 == smllm("install", "--project", str(project), env=env).returncode
    _, lines = _doctor(project, env)
    assert ([], False) == ([ln for ln in lines if "allow rules" in ln],
                           "permissions" in json.loads(path.read_text()))


def test_sandbox_runtime_gone_after_install_is_an_error(project: Path, env: dict[str, str],
                                                        tmp_path: Path) -> None:
    """Installed with bubblewrap, run where it is missing (a PATH without bwrap): Claude Code
    would refuse to start (failIfUnavailable), so doctor says sessions will not start, how to
    fix it, and exits 1; re-running the install it names there turns that into a warning."""
    assert 0 == smllm("install", "--project", str(project), env=env).returncode
    bare = tmp_path / "bare-bin"
    bare.mkdir()
    no_bwrap = {**env, "PATH": str(bare)}
    rc, lines = _doctor(project, no_bwrap)
    fix = f"`smllm install --project {project}`"
    assert (1, [f"error  sandbox: required (failIfUnavailable) but it cannot run here "
                f"(bubblewrap, socat missing), so Claude Code will not start a session in "
                f"this project: install it (apt-get install -y bubblewrap socat), or run {fix} "
                f"again to let sessions start without it (the trust boundary is then advisory "
                f"only)"]) == (rc, [ln for ln in lines if "sandbox:" in ln])
    assert 0 == smllm("install", "--project", str(project), env=no_bwrap).returncode
    rc, lines = _doctor(project, no_bwrap)
    assert (0, [f"warn   sandbox: cannot run here (bubblewrap, socat missing), so the trust "
                f"boundary is advisory only (install it: apt-get install -y bubblewrap socat; "
                f"then run {fix} again, so that sessions refuse to start without it)"]) == (
        rc, [ln for ln in lines if "sandbox:" in ln])
