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
import subprocess
import sys
import tempfile
from pathlib import Path

from claude_cli import cache_root, npm_cached

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
    if not (launcher.exists() and os.access(launcher, os.X_OK)):
        return None
    with tempfile.TemporaryDirectory(prefix="gemini-version-") as home:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI", "GOOGLE"))}
        env["HOME"] = home
        try:
            out = subprocess.run([str(launcher), "--version"], capture_output=True, text=True,
                                 timeout=120, check=False, stdin=subprocess.DEVNULL, env=env,
                                 cwd=home)
        except (OSError, subprocess.TimeoutExpired):
            return None
    words = out.stdout.split()
    return words[-1] if out.returncode == 0 and words else None


def ensure_gemini(version: str = GEMINI_VERSION) -> Path:
    """Install the pinned CLI if it is not cached yet; return the launcher's path."""
    return npm_cached("gemini-cli", PACKAGE, version, launcher_path, version_of,
                      GeminiInstallError)


def main(argv: list[str]) -> int:
    if argv == ["ensure"]:
        try:
            print(ensure_gemini())
        except GeminiInstallError as exc:
            print(f"gemini_cli: error: {exc}", file=sys.stderr)
            return 1
        return 0
    if argv == ["path"]:
        print(launcher_path())
        return 0
    print("usage: gemini_cli.py ensure|path", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
