"""Issue 24 acceptance 1, 4 and 5 through the real Claude Code CLI: every piece of advice
`smllm doctor` prints, followed literally, on the route in use (plugin, project settings,
user settings), ends with each hook registered once; the plugin route gets `smllm` on
PATH in one step; the documented way to allow a domain reaches the sandboxed commands; a
missing sandbox runtime is an error that says sessions will not start, and its fix works."""


from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from harness import Harness, Run

pytestmark = pytest.mark.e2e

ONE_TOOL = [{"tool_use": {"name": "Bash", "input": {"command": "echo hi",
                                                    "description": "say hi"}}},
            {"text": "Done."}]
#: the events one ONE_TOOL session fires: each must run exactly one hook (smllm's)
FIRED = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")
#: the plugin runs on this repository's interpreter (it has smllm's dependencies), never
#: bootstrapping its private environment from the package index
PLUGIN_ENV = {"SMLLM_PLUGIN_BOOTSTRAP": "0", "SMLLM_PYTHON": sys.executable}


def _each_hook_once(run: Run) -> None:
    assert 0 == run.returncode, run.describe()
    counts = {e: len(run.hook_responses(e)) for e in FIRED}
    assert dict.fromkeys(FIRED, 1) == counts, run.describe()
    assert "side_effect_intent" in run.journal_kinds(), run.describe()


def _advice(doctor: str) -> list[str]:
    """The commands doctor's warnings and errors tell the user to run, in order."""
    out = []
    for line in doctor.splitlines():
        if line.startswith(("warn", "error")):
            out += re.findall(r"`((?:smllm|claude) [^`]+)`", line)
            if "/smllm:cli" in line:
                out.append("/smllm:cli")
    return out


def _problems(doctor: str) -> list[str]:
    return [ln for ln in doctor.splitlines() if ln.startswith(("warn", "error"))]


def _follow(claude: Harness, command: str, env: dict[str, str] | None = None) -> None:
    """Run one piece of advice as written (a shell command, or a slash command in Claude)."""
    if command.startswith("/"):
        run = claude.run(command, script=[{"text": "Linked."}], permission_mode="default",
                         env=env)
        assert 0 == run.returncode, run.describe()
        return
    words = shlex.split(command)
    proc = (claude.smllm(*words[1:], env=env) if words[0] == "smllm"
            else claude.cli(*words[1:], env=env))
    assert 0 == proc.returncode, f"{command}\n{proc.stdout}\n{proc.stderr}"


def _doctor(claude: Harness) -> str:
    proc = claude.smllm("doctor", "--project", str(claude.project))
    return proc.stdout


# ---------------------------------------------------------------- the settings routes


def _drop_stop(path: Path) -> None:
    data = json.loads(path.read_text())
    del data["hooks"]["Stop"]
    path.write_text(json.dumps(data, indent=2) + "\n")


def _old_rules(claude: Harness, path: Path) -> None:
    """What an earlier version left: its four allow rules, in the file and its record."""
    rules = ["Bash(smllm fire *)", "Bash(smllm status)", "Bash(smllm status *)",
             "mcp__smllm__smllm"]
    data = json.loads(path.read_text())
    data.setdefault("permissions", {})["allow"] = rules
    path.write_text(json.dumps(data, indent=2) + "\n")
    for rec in (claude.smllm_home / "installs").glob("*.json"):
        saved = json.loads(rec.read_text())
        if saved["path"] == str(path):
            saved["added"]["allow"] = rules
            rec.write_text(json.dumps(saved))


SETTINGS_CASES = {
    # route, how it was installed, what went wrong afterwards
    "project, an event removed by hand": ("project", [], _drop_stop),
    "project, rules of an earlier version": ("project", [], None),
    "project, installed without the sandbox": ("project", ["--no-sandbox"], None),
    "user, an event removed by hand": ("user", [], _drop_stop),
    "user and project both": ("both", [], None),
}


@pytest.mark.parametrize("case", sorted(SETTINGS_CASES))
def test_settings_route_doctor_advice_followed_literally(claude: Harness, case: str) -> None:
    """Doctor's every warning names a command; run as written, it leaves no warning and a
    session in which each event runs one smllm hook (never two)."""
    route, flags, damage = SETTINGS_CASES[case]
    project_file = claude.project / ".claude" / "settings.json"
    user_file = claude.home / ".claude" / "settings.json"
    if route in ("project", "both"):
        claude.smllm("install", "--project", str(claude.project), *flags, check=True)
    if route in ("user", "both"):
        claude.smllm("install", "--user", *flags, check=True)
    path = user_file if route == "user" else project_file
    if damage is not None:
        damage(path)
    if case.endswith("earlier version"):
        _old_rules(claude, path)
        before = claude.run("go", script=ONE_TOOL, permission_mode="default")
        assert "not been trusted" in before.stderr, before.stderr
    doctor = _doctor(claude)
    advice = _advice(doctor)
    assert advice, doctor
    for command in advice:
        _follow(claude, command)
    after = _doctor(claude)
    assert ([], []) == (_problems(after), _advice(after)), after
    run = claude.run("go", script=ONE_TOOL, permission_mode="default")
    _each_hook_once(run)
    assert "" == run.stderr, run.stderr  # no "Ignoring … permissions.allow entries"


# ---------------------------------------------------------------- the plugin route


def _login(claude: Harness, script: str) -> subprocess.CompletedProcess[str]:
    """A new login shell of the scratch HOME (its ~/.profile read), in the project."""
    env = {"HOME": str(claude.home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
           "TERM": "dumb", "SHELL": "/bin/bash", "SMLLM_HOME": str(claude.smllm_home),
           **PLUGIN_ENV}
    return subprocess.run(["bash", "-l", "-c", script], cwd=claude.project, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def test_plugin_route_from_a_fresh_home(claude: Harness, plugin_clone: Path) -> None:
    """Marketplace add + install (fresh HOME, through the real CLI); `claude plugin list`
    and doctor agree on the folder Claude Code reads; /smllm:cli (the documented step)
    puts `smllm` on PATH of a new login shell; doctor's advice from there (the sandbox,
    written without a second registration of the hooks) followed literally; each event
    then runs one hook, the plugin's."""
    env = {"PATH": "/usr/bin:/bin", **PLUGIN_ENV}
    assert 0 == claude.cli("plugin", "marketplace", "add", str(plugin_clone), env=env).returncode
    assert 0 == claude.cli("plugin", "install", "smllm@smllm", env=env).returncode
    listed = claude.cli("plugin", "list", env=env).stdout
    assert f"Read from: {plugin_clone}" in listed, listed  # what docs/plugin.md says
    page = (Path(__file__).resolve().parents[2] / "docs" / "plugin.md").read_text()
    assert "`Read from: /path/to/smllm`" in page

    before = _login(claude, "command -v smllm")
    assert (1, "") == (before.returncode, before.stdout)  # the plugin brings none
    linked = claude.run("/smllm:cli", script=[{"text": "Linked."}], permission_mode="default",
                        env=env)
    link = claude.home / ".local" / "bin" / "smllm"
    assert (0, True) == (linked.returncode, linked.model_saw(f"linked {link} -> ")), \
        linked.describe()

    doctor = _login(claude, "smllm doctor")
    assert f"smllm command: {link} runs this plugin" in doctor.stdout, doctor.stdout
    assert (f"this smllm runs from the plugin at {plugin_clone} (installed as smllm@smllm, "
            "its marketplace folder read in place)") in doctor.stdout, doctor.stdout
    assert "--plugin-dir" not in doctor.stdout
    advice = _advice(doctor.stdout)
    assert [f"smllm install --sandbox-only --project {claude.project}"] == advice, doctor.stdout
    for command in advice:
        done = _login(claude, command)
        assert 0 == done.returncode, done.stdout + done.stderr
    after = _login(claude, "smllm doctor")
    assert ([], []) == (_problems(after.stdout), _advice(after.stdout)), after.stdout
    settings = json.loads((claude.project / ".claude" / "settings.json").read_text())
    assert (["sandbox"], True) == (list(settings), settings["sandbox"]["enabled"])
    _each_hook_once(claude.run("go", script=ONE_TOOL, permission_mode="default", env=env))


def test_plugin_and_settings_together_advice_keeps_one(claude: Harness,
                                                       plugin_clone: Path) -> None:
    """The plugin and a project install at once: doctor's advice (uninstall the settings
    route) followed literally leaves one hook per event."""
    env = {"PATH": "/usr/bin:/bin", **PLUGIN_ENV}
    assert 0 == claude.cli("plugin", "marketplace", "add", str(plugin_clone), env=env).returncode
    assert 0 == claude.cli("plugin", "install", "smllm@smllm", env=env).returncode
    claude.smllm("install", "--project", str(claude.project), check=True)
    twice = claude.run("go", script=ONE_TOOL, permission_mode="default", env=env)
    assert 2 == len(twice.hook_responses("SessionStart")), twice.describe()
    advice = _advice(_doctor(claude))
    undo = f"smllm uninstall --project {claude.project}"
    assert undo in advice, advice
    _follow(claude, undo)  # the first way doctor names; the other is claude plugin uninstall
    _each_hook_once(claude.run("go", script=ONE_TOOL, permission_mode="default", env=env))


# ---------------------------------------------------------------- the sandbox


def test_allowing_a_domain_the_documented_way(claude: Harness) -> None:
    """Install's summary names the network rule and the one way to allow a domain; applied
    as written, the project's settings (what Claude Code reads) list the domain, a later
    install keeps it, doctor says so, and Claude Code starts a sandboxed session on them
    without a word on stderr."""
    installed = claude.install_smllm()
    (rule,) = [ln for ln in installed.stdout.splitlines() if ln.startswith("  network: ")]
    (way,) = re.findall(r"to allow one: (smllm install --allow-domain DOMAIN)$", rule)
    path = claude.project / ".claude" / "settings.json"
    assert [] == json.loads(path.read_text())["sandbox"]["network"]["allowedDomains"]
    claude.smllm(*shlex.split(way.replace("DOMAIN", "pypi.org"))[1:], "--project",
                 str(claude.project), check=True)
    box = json.loads(path.read_text())["sandbox"]
    assert (True, ["pypi.org"]) == (box["enabled"], box["network"]["allowedDomains"])
    again = claude.install_smllm()  # a later install keeps it
    assert again.stdout.endswith("(no change)\n"), again.stdout
    assert ["pypi.org"] == json.loads(path.read_text())["sandbox"]["network"]["allowedDomains"]
    doctor = _doctor(claude)
    assert ("info   network: the agent's commands may reach pypi.org and no other host; to "
            "allow one more: smllm install --allow-domain DOMAIN") in doctor.splitlines()
    run = claude.run("go", script=ONE_TOOL, permission_mode="default")
    _each_hook_once(run)
    assert "" == run.stderr, run.stderr


def _path_without_bwrap(claude: Harness) -> str:
    """A PATH with everything of /usr/bin and /bin but bubblewrap and socat."""
    folder = claude.root / "no-bwrap"
    folder.mkdir()
    for d in ("/usr/bin", "/bin"):
        for name in os.listdir(d):
            if name not in ("bwrap", "socat") and not (folder / name).exists():
                os.symlink(os.path.join(d, name), folder / name)
    return str(folder)


def test_missing_bubblewrap_after_install_is_an_error_with_a_fix(claude: Harness) -> None:
    """bwrap gone after install: Claude Code refuses to start (failIfUnavailable); doctor
    says so as an error, and its fix (install again) lets sessions start."""
    claude.install_smllm()
    path = _path_without_bwrap(claude)
    refused = claude.run("go", script=ONE_TOOL, env={"PATH": path})
    assert (1, True) == (refused.returncode, "Refusing to start" in refused.stderr), \
        refused.describe()
    doctor = claude.smllm("doctor", "--project", str(claude.project), env={"PATH": path})
    fix = f"`smllm install --project {claude.project}`"
    expected = (f"error  sandbox: required (failIfUnavailable) but it cannot run here "
                f"(bubblewrap, socat missing), so Claude Code will not start a session in "
                f"this project: install it (apt-get install -y bubblewrap socat), or run {fix} "
                f"again to let sessions start without it (the trust boundary is then advisory "
                f"only)")
    assert (1, True) == (doctor.returncode, expected in doctor.stdout.splitlines()), \
        doctor.stdout
    claude.smllm("install", "--project", str(claude.project), env={"PATH": path}, check=True)
    started = claude.run("go", script=ONE_TOOL, env={"PATH": path})
    _each_hook_once(started)
