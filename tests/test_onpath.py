"""The plugin route's one step to a `smllm` command on PATH (/smllm:cli, issue 24)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import REPO

LAUNCHER = REPO / "hooks" / "launcher"


def _step(home: Path, data: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """What /smllm:cli runs: the launcher's @path view, with $CLAUDE_PLUGIN_DATA."""
    return subprocess.run([str(LAUNCHER), "@show", "@path", str(data)], capture_output=True,
                          text=True, check=False, env={
                              "HOME": str(home), "PATH": "/usr/bin:/bin",
                              "SMLLM_PLUGIN_BOOTSTRAP": "0", "SMLLM_PYTHON": sys.executable,
                              "CLAUDE_PLUGIN_ROOT": str(REPO), **env})


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    return h


def test_the_step_links_smllm_and_puts_its_folder_on_a_login_path(home: Path,
                                                                  tmp_path: Path) -> None:
    """~/.local/bin/smllm -> the plugin's script, the marked line in ~/.profile (once), and
    a login shell then runs the plugin's smllm."""
    data = tmp_path / "data"
    first = _step(home, data)
    link = home / ".local" / "bin" / "smllm"
    script = data / "bin" / "smllm"
    assert [f"linked {link} -> {script} (the plugin at {REPO})",
            f"added {link.parent} to PATH in ~/.profile (new login shells); for this shell "
            f'run: export PATH="{link.parent}:$PATH"'] == first.stdout.splitlines(), first.stderr
    again = _step(home, data)
    assert "your profile already adds" in again.stdout
    assert 1 == (home / ".profile").read_text().count("# added by smllm's installer")
    shell = subprocess.run(["bash", "-l", "-c", "smllm --version"], capture_output=True,
                           text=True, check=False, cwd=home,
                           env={"HOME": str(home), "PATH": "/usr/bin:/bin",
                                "SMLLM_PLUGIN_BOOTSTRAP": "0",
                                "SMLLM_PYTHON": sys.executable})
    assert (0, True) == (shell.returncode, shell.stdout.startswith("smllm ")), shell.stderr


def test_an_smllm_that_is_not_the_plugins_is_left_alone(home: Path, tmp_path: Path) -> None:
    """The installer's link (another route) stays: the step stops and says why."""
    other = tmp_path / "venv" / "bin" / "smllm"
    other.parent.mkdir(parents=True)
    other.write_text("#!/bin/sh\n")
    link = home / ".local" / "bin" / "smllm"
    link.parent.mkdir(parents=True)
    link.symlink_to(other)
    proc = _step(home, tmp_path / "data")
    assert (0, str(other)) == (proc.returncode, os.readlink(link))
    assert (f"smllm: error: {link} exists and runs {other}, not this plugin (the smllm of "
            "installer/install.sh? with both routes every hook runs twice) (keep one route "
            "(smllm uninstall, or claude plugin uninstall), or set SMLLM_BIN_DIR to another "
            "folder on your PATH and run /smllm:cli again)\n(exit status 1)\n") == (
                proc.stderr + proc.stdout)
