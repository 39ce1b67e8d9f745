"""The pinned GitHub Copilot CLI for the end-to-end tests, installed once into a cache folder.

``ensure_copilot()`` returns the path of the ``copilot`` launcher of
``@github/copilot@<COPILOT_VERSION>``, installing it from npm on first use into
``$SMLLM_TEST_CACHE/copilot-<version>`` (default ``~/.cache/smllm-tests``) through
``claude_cli.npm_cached`` (a temporary folder renamed into place once the launcher answers
``--version`` with the pinned version, under an exclusive ``flock``). The package is a node
launcher (``npm-loader.js``) and a single executable in its platform package
(``@github/copilot-linux-x64``), which unpacks itself into ``$HOME/.cache/copilot/`` on its
first run in a HOME.

Command line (``tests/run.sh`` calls the first form before pytest)::

    python tests/e2e/copilot_cli.py ensure     # install what is missing, print the launcher
    python tests/e2e/copilot_cli.py path       # print where it would be (no install)
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from claude_cli import cache_root, command_line, npm_cached, version_words

COPILOT_VERSION = "1.0.102"
PACKAGE = "@github/copilot"


class CopilotInstallError(RuntimeError):
    """The pinned CLI could not be installed or does not run."""


def install_dir(version: str = COPILOT_VERSION) -> Path:
    return cache_root() / f"copilot-{version}"


def launcher_path(root: Path | None = None) -> Path:
    """The ``copilot`` launcher inside an install folder."""
    base = install_dir() if root is None else root
    return base / "node_modules" / ".bin" / "copilot"


def version_of(launcher: Path) -> str | None:
    """``1.0.102`` from ``copilot --version`` (``GitHub Copilot CLI 1.0.102.``), or None.
    Run in a scratch HOME: the first run of a HOME unpacks the CLI there."""
    with tempfile.TemporaryDirectory(prefix="copilot-version-") as home:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("COPILOT", "GH_"))}
        env.update({"HOME": home, "COPILOT_AUTO_UPDATE": "false", "COPILOT_OFFLINE": "true"})
        words = version_words(launcher, env=env, timeout=120)
    return words[3].rstrip(".") if words and len(words) > 3 else None


def ensure_copilot(version: str = COPILOT_VERSION) -> Path:
    """Install the pinned CLI if it is not cached yet; return the launcher's path."""
    return npm_cached("copilot", PACKAGE, version, launcher_path, version_of,
                      CopilotInstallError)


def main(argv: list[str]) -> int:
    return command_line(argv, "copilot_cli", ensure_copilot, launcher_path, CopilotInstallError)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
