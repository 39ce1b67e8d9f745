"""The pinned OpenAI Codex CLI for the end-to-end tests, installed once into a cache folder.

``ensure_codex()`` returns the path of the ``codex`` launcher of
``@openai/codex@<CODEX_VERSION>``, installing it from npm on first use into
``$SMLLM_TEST_CACHE/codex-<version>`` (default ``~/.cache/smllm-tests``), the way
``claude_cli.py`` installs Claude Code: ``npm install --no-audit --no-fund`` in a
temporary folder next to the target, renamed into place only once the launcher answers
``--version`` with the pinned version; an exclusive ``flock`` keeps two pytest processes
from installing at once. The package is a node launcher (``bin/codex.js``, node >= 16)
and a static binary in its platform package; no install script runs.

Command line (``tests/run.sh`` calls the first form before pytest)::

    python tests/e2e/codex_cli.py ensure     # install what is missing, print the launcher
    python tests/e2e/codex_cli.py path       # print where it would be (no install)
"""

from __future__ import annotations

import sys
from pathlib import Path

from claude_cli import cache_root, command_line, npm_cached, version_words

CODEX_VERSION = "0.169.0"
PACKAGE = "@openai/codex"


class CodexInstallError(RuntimeError):
    """The pinned CLI could not be installed or does not run."""


def install_dir(version: str = CODEX_VERSION) -> Path:
    return cache_root() / f"codex-{version}"


def launcher_path(root: Path | None = None) -> Path:
    """The ``codex`` launcher inside an install folder."""
    base = install_dir() if root is None else root
    return base / "node_modules" / ".bin" / "codex"


def version_of(launcher: Path) -> str | None:
    """``0.169.0`` from ``codex --version`` (``codex-cli 0.169.0``), or None."""
    words = version_words(launcher)
    return words[-1] if words else None


def ensure_codex(version: str = CODEX_VERSION) -> Path:
    """Install the pinned CLI if it is not cached yet; return the launcher's path."""
    return npm_cached("codex", PACKAGE, version, launcher_path, version_of, CodexInstallError,
                      scripts=True)


def main(argv: list[str]) -> int:
    return command_line(argv, "codex_cli", ensure_codex, launcher_path, CodexInstallError)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
