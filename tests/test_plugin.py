"""The plugin's files: manifest, hooks.json, launcher, bootstrap, slash commands."""


from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import smllm
from helpers import REPO, kind, records
from smllm.setup import bootstrap, install

LAUNCHER = REPO / "hooks" / "launcher"

REQUIRED_COMMANDS = ["audit", "export", "ledger", "status"]


def _json(rel: str) -> dict:  # type: ignore[type-arg]
    return json.loads((REPO / rel).read_text())


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    keys = [k for k, _ in pairs]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise ValueError(f"duplicate keys: {', '.join(twice)}")
    return dict(pairs)


@pytest.mark.parametrize("rel", [".claude-plugin/plugin.json", ".claude-plugin/marketplace.json",
                                 "hooks/hooks.json"])
def test_plugin_json_files_have_no_duplicate_keys(rel: str) -> None:
    """A key given twice (plugin.json had `skills` twice) is silently collapsed by JSON
    readers; every plugin file has each key once."""
    json.loads((REPO / rel).read_text(), object_pairs_hook=_no_duplicates)


def test_hooks_json_registers_every_event_like_install() -> None:
    """hooks/hooks.json: the same events, matchers, timeouts and onFailure as `smllm
    install`."""
    hooks = _json("hooks/hooks.json")["hooks"]
    expected = {e: [{**g, "hooks": [{**h, "command": f'"${{CLAUDE_PLUGIN_ROOT}}/hooks/launcher" '
                                                     f"hook {e}"} for h in g["hooks"]]}]
                for e, g in install.desired("/py", []).items()}
    assert expected == hooks


def test_manifests_agree_on_name_and_version() -> None:
    """plugin.json and marketplace.json name `smllm` at the package's version."""
    plugin, market = _json(".claude-plugin/plugin.json"), _json(".claude-plugin/marketplace.json")
    entry = market["plugins"][0]
    assert ("smllm", smllm.VERSION) == (plugin["name"], plugin["version"])
    assert ("smllm", "smllm", "./", smllm.VERSION) == (market["name"], entry["name"],
                                                      entry["source"], entry["version"])
    assert {"command": "${CLAUDE_PLUGIN_ROOT}/hooks/launcher", "args": ["mcp"]} == \
        plugin["mcpServers"]["smllm"]
    assert "hooks" not in plugin  # hooks/hooks.json is loaded by default; declaring it twice fails
    assert [True, True] == [(REPO / plugin[k]).is_dir() for k in ("commands", "skills")]


def test_launcher_deps_key_matches_pyproject() -> None:
    """The launcher's DEPS_KEY is the hash of pyproject's runtime dependencies."""
    match = re.search(r"^DEPS_KEY=(\w+)$", LAUNCHER.read_text(), re.M)
    assert match is not None
    assert bootstrap.deps_key(bootstrap.dependencies(str(REPO))) == match.group(1)


@pytest.mark.parametrize("name", sorted(p.stem for p in (REPO / "plugin" / "commands").glob("*.md")))
def test_slash_command_runs_the_cli_through_the_launcher(name: str) -> None:
    """Each command: a description, permission for the launcher only, one `!` step via @show."""
    text = (REPO / "plugin" / "commands" / f"{name}.md").read_text()
    front, body = text.split("---\n")[1:3]
    meta = dict(line.split(": ", 1) for line in front.strip().splitlines())
    steps = re.findall(r"^!`(.*)`$", body, re.M)
    assert ("Bash(${CLAUDE_PLUGIN_ROOT}/hooks/launcher:*)", True, 1) == (
        meta["allowed-tools"], bool(meta["description"]), len(steps))
    assert steps[0].startswith('"${CLAUDE_PLUGIN_ROOT}/hooks/launcher" @show ')


def test_required_slash_commands_exist() -> None:
    """/smllm:status, /smllm:audit, /smllm:ledger and /smllm:export are shipped."""
    have = sorted(p.stem for p in (REPO / "plugin" / "commands").glob("*.md"))
    assert [] == [c for c in REQUIRED_COMMANDS if c not in have]


def _payload(sid: str, cwd: Path) -> str:
    return json.dumps({"session_id": sid, "transcript_path": str(cwd / "t.jsonl"),
                       "cwd": str(cwd), "hook_event_name": "SessionStart", "source": "startup"})


def _launch(args: list[str], env: dict[str, str], stdin: str = "",
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LAUNCHER), *args], input=stdin, capture_output=True, text=True,
                          env=env, cwd=cwd, check=False, timeout=60)


def _kill_bootstrap(data: Path) -> None:
    try:
        pid = int((data / "bootstrap.pid").read_text())
    except (OSError, ValueError):
        return
    for kill in (os.killpg, os.kill):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            kill(pid, signal.SIGKILL)


def test_hot_path_runs_without_deps_and_never_waits_for_bootstrap(tmp_path: Path) -> None:
    """Before the private env exists: python3 without smllm or deps journals the hook at once,
    a bootstrap starts in the background, and a failed one is not retried at every call."""
    data = tmp_path / "data"
    empty = tmp_path / "no-wheels"
    empty.mkdir()
    env = {"PATH": "/usr/bin:/bin", "SMLLM_HOME": os.environ["SMLLM_HOME"],
           "CLAUDE_PLUGIN_DATA": str(data), "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(empty),
           "HOME": str(tmp_path)}
    try:
        proc = _launch(["hook", "SessionStart"], env, _payload("aa11bb22-0000-4000-8000-"
                                                               "000000000001", tmp_path))
        assert (0, "") == (proc.returncode, proc.stdout)
        assert [] == list(data.glob("venv/.smllm-ready-*"))
        assert ["session.start"] == [kind(r) for r in records("aa11bb22-0000-4000-8000-"
                                                             "000000000001")][:1]
        deadline = time.monotonic() + 120
        while not (data / "bootstrap.failed").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert (data / "bootstrap.failed").exists(), (data / "bootstrap.log").read_text()
        again = _launch(["hook", "SessionStart"], env, _payload("aa11bb22-0000-4000-8000-"
                                                               "000000000002", tmp_path))
        time.sleep(0.5)
        starts = (data / "bootstrap.log").read_text().count(" bootstrap ")
        assert (0, 1) == (again.returncode, starts)
    finally:
        _kill_bootstrap(data)


def test_launcher_uses_the_private_env_once_ready(tmp_path: Path) -> None:
    """With the stamp for the current DEPS_KEY, the launcher execs DATA/venv/bin/python."""
    data = tmp_path / "data"
    (data / "venv" / "bin").mkdir(parents=True)
    marker = tmp_path / "used"
    fake = data / "venv" / "bin" / "python"
    fake.write_text(f'#!/bin/sh\ntouch "{marker}"\nexec "{sys.executable}" "$@"\n')
    fake.chmod(0o755)
    key = bootstrap.deps_key(bootstrap.dependencies(str(REPO)))
    env = {"PATH": "/usr/bin:/bin", "SMLLM_HOME": os.environ["SMLLM_HOME"],
           "CLAUDE_PLUGIN_DATA": str(data)}
    proc = _launch(["--version"], {**env, "SMLLM_PLUGIN_BOOTSTRAP": "0"})
    assert (0, f"smllm {smllm.VERSION}\n", False) == (proc.returncode, proc.stdout,
                                                      marker.exists())
    (data / "venv" / f".smllm-ready-{key}").write_text("")
    proc = _launch(["--version"], env)
    assert (0, f"smllm {smllm.VERSION}\n", True) == (proc.returncode, proc.stdout,
                                                     marker.exists())
    assert [] == list(data.glob("bootstrap.*"))  # a ready env starts no bootstrap


def test_launcher_takes_no_interpreter_from_the_project(tmp_path: Path) -> None:
    """SMLLM_PYTHON from the project's settings (Claude Code passes their env to the hooks)
    would run a program of the project outside the sandbox: the launcher ignores it and says
    so; the same variable from the user's own environment is still honoured."""
    marker = tmp_path / "ran"
    fake = tmp_path / "proj" / "py"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\ntouch "{marker}"\nexec "{sys.executable}" "$@"\n')
    fake.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "SMLLM_HOME": os.environ["SMLLM_HOME"],
           "SMLLM_PLUGIN_BOOTSTRAP": "0", "SMLLM_PYTHON": str(fake),
           "CLAUDE_PROJECT_DIR": str(fake.parent)}
    (fake.parent / ".claude").mkdir()
    settings = fake.parent / ".claude" / "settings.local.json"
    settings.write_text(json.dumps({"env": {"SMLLM_PYTHON": str(fake)}}))
    proc = _launch(["--version"], env)
    assert (0, False, "smllm: ignoring SMLLM_PYTHON set by the project's settings\n") == (
        proc.returncode, marker.exists(), proc.stderr)
    settings.write_text("{}")
    proc = _launch(["--version"], env)
    assert (0, True) == (proc.returncode, marker.exists())


def test_show_always_exits_zero_and_reports_the_status(tmp_path: Path) -> None:
    """@show: a failing command's error text and exit status, with exit 0 (slash commands)."""
    env = {"PATH": "/usr/bin:/bin", "SMLLM_HOME": os.environ["SMLLM_HOME"],
           "SMLLM_PLUGIN_BOOTSTRAP": "0"}
    proc = _launch(["@show", "verify", "no-such-session"], env, cwd=tmp_path)
    assert (0, "(exit status 1)\n") == (proc.returncode, proc.stdout), proc.stderr
    assert proc.stderr.startswith("smllm: error: no session 'no-such-session' in ")
