"""A new user's first hour, as the README tells it (issue 2 acceptance 7, issue 12
acceptance 1, issue 24 acceptance 2).

A fresh clone, an empty HOME, README command 1 (the installer), then a **new login
shell** (``bash -l``: /etc/profile, then the ~/.profile the installer wrote) that runs
the README's "A first look" transcript as written, paths replaced: ``smllm`` must be on
PATH, a real ``claude -p`` session (scripted model on 127.0.0.1) is journaled by the
installed hooks under ~/.local/share/smllm with private modes, and every command prints
exactly the lines the README shows (stderr included; ids, times and durations aside), so
no warning of Claude Code or smllm can appear that the README does not show.
"""


from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from harness import REPO, Harness

pytestmark = pytest.mark.e2e


def _readme() -> str:
    return (REPO / "README.md").read_text()


def _readme_command_1() -> str:
    """The first shell command in the README's first code block."""
    block = _readme().split("```bash\n", 1)[1].split("```", 1)[0]
    return block.strip().splitlines()[0]


def _first_look() -> str:
    return _readme().split("## A first look", 1)[1].split("\n## ", 1)[0]


def _first_look_transcript() -> list[tuple[str, list[str]]]:
    """(command, the output lines the README shows) of the section's console block."""
    (block,) = re.findall(r"```console\n(.*?)```", _first_look(), re.S)
    steps: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


def _first_look_blocks() -> list[str]:
    """The ```bash blocks of the README's "A first look" section (the state machine)."""
    return re.findall(r"```bash\n(.*?)```", _first_look(), re.S)


#: what varies from one run to the next: session ids, times, durations, Python's version
_VARIES = [(re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<id>"),
           (re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d"), "<time>"),
           (re.compile(r"/\d{4}/\d\d/\d\d/"), "/<date>/"),
           (re.compile(r"\+ +[\d.]+s"), "+ <t>"),
           (re.compile(r"python3\.\d+"), "python3.N"),
           (re.compile(r"\s+"), " ")]


def _normal(line: str) -> str:
    for pattern, repl in _VARIES:
        line = pattern.sub(repl, line)
    return line.strip()


def _login_shell(script: str, home: Path, extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``bash -l -e -c SCRIPT`` with only what a login on this machine would have."""
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TERM": "dumb",
           "USER": "me", "LOGNAME": "me", "SHELL": "/bin/bash", **extra}
    return subprocess.run(["bash", "-l", "-e", "-c", script], cwd=home, env=env,
                          capture_output=True, text=True, timeout=300, check=False,
                          stdin=subprocess.DEVNULL)


def test_fresh_clone_readme_then_first_look_in_a_login_shell(tmp_path: Path, claude_bin: Path,
                                                             wheelhouse: Path) -> None:
    """Clone → README command 1 → `bash -l`: smllm is on PATH, a real session is journaled
    privately under ~/.local/share/smllm, and every first-look command succeeds as written."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True, capture_output=True)
    h = Harness(tmp_path / "e2e", claude_bin, tmp_path / "unused-smllm-home", wheelhouse)
    try:
        _first_hour(h, clone, wheelhouse)
    finally:
        h.close()


def _first_hour(h: Harness, clone: Path, wheelhouse: Path) -> None:
    home, project = h.home, h.project
    command = _readme_command_1()
    assert command.startswith("./installer/install.sh ")
    install_env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
                   "PYTHON": os.path.realpath(getattr(sys, "_base_executable", sys.executable)),
                   "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse)}
    proc = subprocess.run(["bash", "-c", command.split(" ", 1)[0] + ' "$0"', str(project)],
                          cwd=clone, env=install_env, capture_output=True, text=True, timeout=600,
                          check=False)
    assert 0 == proc.returncode, proc.stdout + proc.stderr
    link = home / ".local" / "bin" / "smllm"
    said = [ln for ln in proc.stdout.splitlines() if "PATH" in ln or "linked" in ln]
    assert [f"smllm-installer: linked {link} -> {home}/.local/share/smllm/venv/bin/smllm",
            f"smllm-installer: added {home}/.local/bin to PATH in: ~/.profile (new login "
            'shells); for this shell run: export PATH="$HOME/.local/bin:$PATH"'] == said

    # Claude Code's own installer puts `claude` in ~/.local/bin too
    os.symlink(h.binary, home / ".local" / "bin" / "claude")
    h.mock.control({"script": [
        {"id": "toolu_first_ls", "tool_use": {"name": "Bash", "input": {
            "command": "ls", "description": "List the files"}}},
        {"text": "Two files."}]})
    claude_env = {k: v for k, v in h.env().items()
                  if k.startswith(("ANTHROPIC_", "CLAUDE_CODE_", "DISABLE_"))}
    steps = _first_look_transcript()
    assert steps[0][0] == "cd /home/me/project"
    (answer,) = next(out for cmd, out in steps if cmd.startswith("claude -p "))
    h.mock.control({"script": [
        {"id": "toolu_first_ls", "tool_use": {"name": "Bash", "input": {
            "command": "ls", "description": "List the files"}}},
        {"text": answer}]})
    script = "exec 2>&1\ncommand -v smllm\n" + "".join(
        f"printf '\\n@@@ %s\\n' {i}\n{cmd}\n" for i, (cmd, _) in enumerate(steps))
    script = script.replace("/home/me/project", str(project)).replace("/home/me", str(home))
    run = _login_shell(script, home, claude_env)
    assert 0 == run.returncode, f"{script}\n--- output\n{run.stdout}"
    first, *parts = run.stdout.split("\n@@@ ")
    assert f"{link}" == first.strip()
    shown = {cmd: [_normal(ln) for ln in out] for cmd, out in steps}
    printed = {}
    for (cmd, _), part in zip(steps, parts, strict=True):
        lines = part.split("\n")[1:]  # after the marker's own number
        printed[cmd] = [_normal(ln.replace(str(project), "/home/me/project")
                                .replace(str(home), "/home/me")) for ln in lines if ln.strip()]
    assert shown == printed  # every line printed is one the README shows, and in order

    blocks = _first_look_blocks()
    assert 1 == len(blocks)
    machine_run = _login_shell(f"cd {project}\n" + blocks[0].replace(
        "/path/to/smllm", str(clone)), home, claude_env)
    machine = machine_run.stdout
    assert 0 == machine_run.returncode, f"{machine}\n--- stderr\n{machine_run.stderr}"
    assert re.search(r"^fix  \d+ states  ", machine, re.M), machine
    assert "Arrived by: enter (new bug)" in machine

    data = home / ".local" / "share" / "smllm"
    (log,) = data.glob("sessions/*/*/*/*/session.jsonl")
    kinds = [json.loads(line)["payload"].get("event", {}).get("kind")
             or json.loads(line)["payload_type"] for line in log.read_text().splitlines()]
    assert ("session.start", "session.end", 1) == (kinds[0], kinds[-1],
                                                   kinds.count("side_effect_intent"))
    for p in [data, data / "sessions", *(data / "sessions").rglob("*")]:
        mode = stat.S_IMODE(p.stat().st_mode)
        assert (str(p), 0o700 if p.is_dir() else 0o600) == (str(p), mode)
