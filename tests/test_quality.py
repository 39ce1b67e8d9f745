"""The code stays strictly typed and lint-clean: mypy --strict on src/, ruff on everything."""

from __future__ import annotations

import subprocess
import sys

from helpers import REPO


def test_mypy_strict_on_src() -> None:
    """mypy in strict mode (pyproject [tool.mypy]) finds no issue in src/smllm."""
    proc = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary"], cwd=REPO,
                          capture_output=True, text=True, check=False)
    assert (0, "") == (proc.returncode, proc.stdout)


def test_ruff_clean() -> None:
    """ruff (pyproject [tool.ruff]) passes on src, tests and bench."""
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "src", "tests",
                           "bench"], cwd=REPO, capture_output=True, text=True, check=False)
    assert (0, "All checks passed!\n") == (proc.returncode, proc.stdout)
