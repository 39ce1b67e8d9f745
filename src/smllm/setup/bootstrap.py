"""Build the plugin's private environment: ``bootstrap.py ROOT DATA KEY``.

Started in the background by ``hooks/launcher`` (never waited for). Under an exclusive
lock on ``DATA/bootstrap.lock`` it creates ``DATA/venv``, pip-installs smllm's runtime
dependencies (read from ``ROOT/pyproject.toml``) and finally writes the stamp
``DATA/venv/.smllm-ready-KEY``; only then does the launcher switch to it. A failure
leaves ``DATA/bootstrap.failed`` (the launcher retries after an hour) and the log in
``DATA/bootstrap.log``. Standard library only.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time

DEPS_RE = re.compile(r"^dependencies\s*=\s*\[(.*?)\]", re.S | re.M)


def dependencies(root: str) -> list[str]:
    """The ``[project] dependencies`` of pyproject.toml (a list of quoted strings)."""
    with open(os.path.join(root, "pyproject.toml"), encoding="utf-8") as fh:
        text = fh.read()
    match = DEPS_RE.search(text)
    if match is None:
        raise RuntimeError("no dependencies list in pyproject.toml")
    return re.findall(r"\"([^\"]+)\"", match.group(1))


def deps_key(deps: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(deps)).encode()).hexdigest()[:12]


def build(root: str, data: str, key: str) -> None:
    deps = dependencies(root)
    if deps_key(deps) != key:
        raise RuntimeError(f"the launcher's DEPS_KEY {key} does not match pyproject "
                           f"({deps_key(deps)}); reinstall the plugin")
    venv = os.path.join(data, "venv")
    if os.path.isdir(venv):
        shutil.rmtree(venv)  # half-built, or built for other dependencies
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    python = os.path.join(venv, "bin", "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "--no-input", *deps], check=True)
    with open(os.path.join(venv, f".smllm-ready-{key}"), "w") as fh:
        fh.write(f"{time.time()}\n")


def main(argv: list[str]) -> int:
    root, data, key = argv
    os.makedirs(data, exist_ok=True)
    with open(os.path.join(data, "bootstrap.lock"), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return 0  # another bootstrap is at work
        if os.path.exists(os.path.join(data, "venv", f".smllm-ready-{key}")):
            return 0
        pid_file = os.path.join(data, "bootstrap.pid")
        with open(pid_file, "w") as fh:
            fh.write(str(os.getpid()))
        failed = os.path.join(data, "bootstrap.failed")
        print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} bootstrap {key} with {sys.executable}",
              flush=True)
        try:
            build(root, data, key)
        except (OSError, RuntimeError, subprocess.CalledProcessError) as exc:
            print(f"bootstrap failed: {exc}", flush=True)
            with open(failed, "w") as fh:
                fh.write(f"{exc}\n")
            return 1
        finally:
            os.unlink(pid_file)
        if os.path.exists(failed):
            os.unlink(failed)
        print("bootstrap done", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
