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

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from claude_cli import INSTALL_TIMEOUT, cache_root

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
    if not (launcher.exists() and os.access(launcher, os.X_OK)):
        return None
    try:
        out = subprocess.run([str(launcher), "--version"], capture_output=True, text=True,
                             timeout=60, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    words = out.stdout.split()
    return words[-1] if out.returncode == 0 and words else None


def _install_into(tmp: Path, version: str) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise CodexInstallError("npm is not on PATH (install Node.js >= 18 with npm)")
    (tmp / "package.json").write_text(
        '{"name": "smllm-e2e-codex", "version": "0.0.0", "private": true}\n')
    cmd = [npm, "install", "--no-audit", "--no-fund", "--no-package-lock", "--loglevel=error",
           f"{PACKAGE}@{version}"]
    proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True,
                          timeout=INSTALL_TIMEOUT, check=False, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise CodexInstallError(
            f"`{' '.join(cmd)}` failed with status {proc.returncode}:\n{proc.stderr[-2000:]}")


def ensure_codex(version: str = CODEX_VERSION) -> Path:
    """Install the pinned CLI if it is not cached yet; return the launcher's path."""
    target = install_dir(version)
    launcher = launcher_path(target)
    if version_of(launcher) == version:
        return launcher
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f"codex-{version}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be installing right now
        if version_of(launcher) == version:
            return launcher
        tmp = Path(tempfile.mkdtemp(prefix=f".codex-{version}.", dir=root))
        try:
            _install_into(tmp, version)
            got = version_of(launcher_path(tmp))
            if got != version:
                raise CodexInstallError(
                    f"{launcher_path(tmp)} reports version {got!r}, expected {version}")
            if target.exists():
                shutil.rmtree(target)  # a broken earlier install
            os.replace(tmp, target)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    return launcher


def main(argv: list[str]) -> int:
    if argv == ["ensure"]:
        try:
            print(ensure_codex())
        except CodexInstallError as exc:
            print(f"codex_cli: error: {exc}", file=sys.stderr)
            return 1
        return 0
    if argv == ["path"]:
        print(launcher_path())
        return 0
    print("usage: codex_cli.py ensure|path", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
