"""A new user's first hour, as the README tells it (issue 2 acceptance 7, issue 12 acceptance 1).

A fresh clone, an empty HOME, README command 1 (the installer), then a **new login
shell** (``bash -l``: /etc/profile, then the ~/.profile the installer wrote) that runs
the README's "A first look" blocks as written, placeholders replaced: ``smllm`` must be on
PATH, a real ``claude -p`` session (scripted model on 127.0.0.1) is journaled by the
installed hooks under ~/.local/share/smllm with private modes, and every smllm command of
the page succeeds.
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


def _first_look_blocks() -> list[str]:
    """The ```bash blocks of the README's "A first look" section."""
    section = _readme().split("## A first look", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.*?)```", section, re.S)


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
    blocks = _first_look_blocks()
    assert 2 == len(blocks)
    outputs = []
    for block in blocks:
        script = block.replace("/path/to/your/project", str(project)).replace(
            "/path/to/smllm", str(clone))
        run = _login_shell(f"command -v smllm\n{script}", home, claude_env)
        assert 0 == run.returncode, f"{script}\n--- stdout\n{run.stdout}\n--- stderr\n{run.stderr}"
        outputs.append(run.stdout)
    first, machine = outputs
    assert f"{link}\n" == first.splitlines(keepends=True)[0]
    assert "0 error(s), 0 warning(s)\n" in first, first
    assert re.search(r"^ok: .*: \d+ records, hash chain intact, invariants hold$", first, re.M)
    assert re.search(r"^ +\d+ +\+ +[\d.]+s  tool run   bash +auth=allow:host  ls$", first, re.M), first
    assert "decision: " in first
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
