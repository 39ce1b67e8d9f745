"""The pinned Gemini CLI for the end-to-end tests, installed once into a cache folder.

``ensure_gemini()`` returns the path of the ``gemini`` launcher of
``@google/gemini-cli@<GEMINI_VERSION>``, installing it from npm on first use into
``$SMLLM_TEST_CACHE/gemini-cli-<version>`` (default ``~/.cache/smllm-tests``), the way
``claude_cli.py`` installs Claude Code (:func:`claude_cli.npm_cached`: a temporary folder
renamed into place once the launcher answers ``--version`` with the pinned version, under
an exclusive ``flock``). The package is a JavaScript bundle run by node (>= 20); npm skips
node-pty's install script, which the headless ``gemini -p`` does not need
(shared/ref/gemini-hooks.md §1).

Command line (``tests/run.sh`` calls the first form before pytest)::

    python tests/e2e/gemini_cli.py ensure     # install what is missing, print the launcher
    python tests/e2e/gemini_cli.py path       # print where it would be (no install)
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from claude_cli import cache_root, command_line, npm_cached, version_words

GEMINI_VERSION = "0.61.0"
PACKAGE = "@google/gemini-cli"


class GeminiInstallError(RuntimeError):
    """The pinned CLI could not be installed or does not run."""


def install_dir(version: str = GEMINI_VERSION) -> Path:
    return cache_root() / f"gemini-cli-{version}"


def launcher_path(root: Path | None = None) -> Path:
    """The ``gemini`` launcher inside an install folder."""
    base = install_dir() if root is None else root
    return base / "node_modules" / ".bin" / "gemini"


def version_of(launcher: Path) -> str | None:
    """``0.61.0`` from ``gemini --version``, or None. It runs in an empty scratch HOME:
    the CLI reads (and may migrate) ``~/.gemini/settings.json``, which is not its to touch
    here."""
    with tempfile.TemporaryDirectory(prefix="gemini-version-") as home:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI", "GOOGLE"))}
        env["HOME"] = home
        words = version_words(launcher, env=env, cwd=home, timeout=120)
    return words[-1] if words else None


def ensure_gemini(version: str = GEMINI_VERSION) -> Path:
    """Install the pinned CLI if it is not cached yet; return the launcher's path."""
    return npm_cached("gemini-cli", PACKAGE, version, launcher_path, version_of,
                      GeminiInstallError)


def main(argv: list[str]) -> int:
    return command_line(argv, "gemini_cli", ensure_gemini, launcher_path, GeminiInstallError)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
