"""The pinned Claude Code CLI for the end-to-end tests, installed once into a cache folder.

``ensure_claude()`` returns the path of the native ``claude`` binary of
``@anthropic-ai/claude-code@<CLAUDE_VERSION>``, installing it from npm on first use into
``$SMLLM_TEST_CACHE/claude-code-<version>`` (default ``~/.cache/smllm-tests``). The
install runs ``npm install --ignore-scripts --no-audit --no-fund`` in a temporary
folder next to the target and renames it into place only once the binary answers
``--version`` with the pinned version, so an interrupted install never looks complete.
An exclusive ``flock`` on ``claude-code-<version>.lock`` keeps two pytest processes
from installing at once.

Why the native binary and ``--ignore-scripts``: the npm package's ``bin/claude.exe`` is a
stub that a postinstall script replaces; the real program is the ELF binary of the
platform package ``@anthropic-ai/claude-code-<os>-<arch>``. It needs no node at run time,
which matters because 2.1.332 declares node >= 22 and this machine has node 20.

The same step fills a **wheelhouse** (``ensure_wheels()``): wheels of smllm's runtime
dependencies and of its build backend, for this Python version, in
``$SMLLM_TEST_CACHE/wheels-<key>``. The installer and plugin-bootstrap tests then run
pip with ``--no-index --find-links`` that folder, so the tests themselves talk only to
127.0.0.1; only this set-up step uses the network (npm and the package index).

Command line (``tests/run.sh`` calls the first form before pytest)::

    python tests/e2e/claude_cli.py ensure     # install what is missing, print the binary path
    python tests/e2e/claude_cli.py path       # print where it would be (no install)
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
CLAUDE_VERSION = "2.1.332"
PACKAGE = "@anthropic-ai/claude-code"
INSTALL_TIMEOUT = 600


class ClaudeInstallError(RuntimeError):
    """The pinned CLI could not be installed or does not run."""


def cache_root() -> Path:
    """The folder holding every cached install (``$SMLLM_TEST_CACHE`` overrides it)."""
    env = os.environ.get("SMLLM_TEST_CACHE", "").strip()
    if env:
        return Path(env).expanduser().absolute()
    return Path.home() / ".cache" / "smllm-tests"


def install_dir(version: str = CLAUDE_VERSION) -> Path:
    return cache_root() / f"claude-code-{version}"


def _platform_package() -> str:
    system = {"linux": "linux", "darwin": "darwin"}.get(sys.platform)
    machine = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower())
    if system is None or machine is None:
        raise ClaudeInstallError(
            f"no native Claude Code build for {sys.platform}/{platform.machine()}")
    return f"claude-code-{system}-{machine}"


def binary_path(root: Path | None = None) -> Path:
    """The native binary inside an install folder."""
    base = install_dir() if root is None else root
    return base / "node_modules" / "@anthropic-ai" / _platform_package() / "claude"


def version_words(launcher: Path, *, env: dict[str, str] | None = None,
                  cwd: str | None = None, timeout: float = 60) -> list[str] | None:
    """The words ``LAUNCHER --version`` prints (every pinned CLI's version check), or None
    when it is not there, fails or does not answer in time."""
    if not (launcher.is_file() and os.access(launcher, os.X_OK)):
        return None
    try:
        out = subprocess.run([str(launcher), "--version"], capture_output=True, text=True,
                             timeout=timeout, check=False, stdin=subprocess.DEVNULL, env=env,
                             cwd=cwd)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.split() if out.returncode == 0 else None


def command_line(argv: list[str], name: str, ensure: Callable[[], Path],
                 where: Callable[[], Path], error: type[RuntimeError]) -> int:
    """``NAME.py ensure|path`` (every pinned CLI's command line): install what is missing
    and print the launcher, or print where it would be."""
    if argv == ["ensure"]:
        try:
            print(ensure())
        except error as exc:
            print(f"{name}: error: {exc}", file=sys.stderr)
            return 1
        return 0
    if argv == ["path"]:
        print(where())
        return 0
    print(f"usage: {name}.py ensure|path", file=sys.stderr)
    return 2


def _version_of(binary: Path) -> str | None:
    words = version_words(binary)
    return words[0] if words else None


def _npm(error: type[RuntimeError]) -> str:
    npm = shutil.which("npm")
    if npm is None:
        raise error("npm is not on PATH (install Node.js >= 18 with npm)")
    return npm


def _npm_install(tmp: Path, package: str, version: str, error: type[RuntimeError], *,
                 scripts: bool) -> None:
    (tmp / "package.json").write_text(
        '{"name": "smllm-e2e-cli", "version": "0.0.0", "private": true}\n')
    cmd = [_npm(error), "install", *([] if scripts else ["--ignore-scripts"]), "--no-audit",
           "--no-fund", "--no-package-lock", "--loglevel=error", f"{package}@{version}"]
    proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True,
                          timeout=INSTALL_TIMEOUT, check=False, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise error(
            f"`{' '.join(cmd)}` failed with status {proc.returncode}:\n{proc.stderr[-2000:]}")


def npm_cached(folder: str, package: str, version: str, entry: Callable[[Path], Path],
               version_of: Callable[[Path], str | None], error: type[RuntimeError], *,
               scripts: bool = False) -> Path:
    """``entry`` (the program inside an install folder) of ``package@version``, installed
    from npm on first use into ``cache_root()/<folder>-<version>``: in a temporary folder
    beside it, renamed into place only once the program reports the pinned version, under
    an exclusive ``flock`` (another pytest process may be installing right now)."""
    target = cache_root() / f"{folder}-{version}"
    program = entry(target)
    if version_of(program) == version:
        return program
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f"{folder}-{version}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if version_of(program) == version:
            return program
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder}-{version}.", dir=root))
        try:
            _npm_install(tmp, package, version, error, scripts=scripts)
            got = version_of(entry(tmp))
            if got != version:
                raise error(f"{entry(tmp)} reports version {got!r}, expected {version}")
            if target.exists():
                shutil.rmtree(target)  # a broken earlier install
            os.replace(tmp, target)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    return program


def ensure_claude(version: str = CLAUDE_VERSION) -> Path:
    """Install the pinned CLI if it is not cached yet; return the native binary's path."""
    return npm_cached("claude-code", PACKAGE, version, binary_path, _version_of,
                      ClaudeInstallError)


def runtime_requirements() -> list[str]:
    """pyproject's build requirements, runtime dependencies and the extras the installer
    installs by default (``serve`` and ``team``)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: tomli is one of smllm's dependencies there
        import tomli as tomllib  # type: ignore[no-redef]
    data = tomllib.loads((REPO / "pyproject.toml").read_text())
    extras = data["project"]["optional-dependencies"]
    return [*data["build-system"]["requires"], *data["project"]["dependencies"],
            *extras["serve"], *extras["team"], "wheel"]


def wheels_dir() -> Path:
    reqs = "\n".join(sorted(runtime_requirements()))
    tag = f"py{sys.version_info[0]}{sys.version_info[1]}-{sys.platform}-{platform.machine()}"
    key = hashlib.sha256(f"{tag}\n{reqs}".encode()).hexdigest()[:12]
    return cache_root() / f"wheels-{tag}-{key}"


def ensure_wheels() -> Path:
    """A folder of wheels from which smllm and its dependencies install without an index."""
    target = wheels_dir()
    if (target / ".complete").exists():
        return target
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / "wheels.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / ".complete").exists():
            return target
        tmp = Path(tempfile.mkdtemp(prefix=".wheels.", dir=root))
        try:
            cmd = [sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check",
                   "--wheel-dir", str(tmp), *runtime_requirements()]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=INSTALL_TIMEOUT,
                                  check=False, stdin=subprocess.DEVNULL)
            if proc.returncode != 0:
                raise ClaudeInstallError(f"`{' '.join(cmd)}` failed:\n{proc.stderr[-2000:]}")
            (tmp / ".complete").write_text("ok\n")
            if target.exists():
                shutil.rmtree(target)
            os.replace(tmp, target)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    return target


def _ensure_all() -> Path:
    ensure_wheels()
    return ensure_claude()


def main(argv: list[str]) -> int:
    return command_line(argv, "claude_cli", _ensure_all, binary_path, ClaudeInstallError)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
