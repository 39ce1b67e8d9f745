"""The console transcripts of docs/install.md and docs/troubleshooting.md run as shown.

Each ```console block is ``$ command`` lines followed by their expected output (stdout and
stderr). A page runs in one fresh folder that is also HOME, shown in the page as
``/home/me``; ``smllm`` is this repository's, and its interpreter and package folder are
shown as those of the installer's environment (``/home/me/.local/share/smllm/venv``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import console_transcript
from smllm.setup import install

REPO = Path(__file__).resolve().parent.parent
SHOWN_HOME = "/home/me"
SHOWN_PYTHON = "/home/me/.local/share/smllm/venv/bin/python"
#: the same interpreter as the `smllm` script's #! line may name it
PYTHON3 = str(Path(sys.executable).with_name("python3"))
#: the hook executable smllm install writes beside that interpreter
HOOK = str(install.hook_executable(sys.executable))
SHOWN_HOOK = "/home/me/.local/share/smllm/venv/bin/smllm-hook"
#: the import paths an installed hook puts on sys.path (python -I -S), as the page shows them
PATHS = json.dumps(install.import_paths())
SHOWN_PATHS = '["/home/me/.local/share/smllm/venv/lib/python3.11/site-packages"]'


@pytest.mark.parametrize("page", ["install.md", "troubleshooting.md"])
def test_console_transcripts_match(page: str, tmp_path: Path) -> None:
    """Every command of the page prints exactly what the page shows."""
    work = tmp_path / "me"
    work.mkdir()
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(work),
           "SMLLM_HOME": os.environ["SMLLM_HOME"]}
    steps = console_transcript(REPO / "docs" / page)
    assert steps
    actual, expected = [], []
    for command, output in steps:
        proc = subprocess.run(["bash", "-c", command], cwd=work, env=env, capture_output=True,
                              text=True, timeout=60, check=False)
        shown = (proc.stdout + proc.stderr).replace(PATHS, SHOWN_PATHS)
        shown = shown.replace(HOOK, SHOWN_HOOK).replace(PYTHON3, SHOWN_PYTHON)
        shown = shown.replace(sys.executable, SHOWN_PYTHON)
        # the hook executable lives in the environment every test shares: whether an install
        # finds it as it should be depends on what other tests did to it meanwhile, not on
        # the page (the page shows the steady state)
        shown = shown.replace(f"; wrote the hook executable {SHOWN_HOOK}", "")
        # the home install pins: the page's user has the platform's folders
        shown = shown.replace(f"--home {os.environ['SMLLM_HOME']}", "--home platform")
        actual.append(f"$ {command}\n{shown.replace(str(work), SHOWN_HOME)}".rstrip())
        expected.append(f"$ {command}\n{output}".rstrip())
    assert "\n".join(expected) == "\n".join(actual)
