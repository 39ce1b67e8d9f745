"""Which build of smllm is running: its version and, when it is known, the git commit.

The commit comes from one of two places, and is never guessed (absent rather than stale):

* **an installed smllm** (``pip install`` of a clone, as ``installer/install.sh`` does):
  the build step in ``setup.py`` asks the clone's git and writes the commit into the
  package as ``smllm/_commit``, only when the package's files in the clone were exactly
  that commit's;
* **a source checkout** (an editable install, the plugin run from its clone): the package
  folder is ``src/smllm`` of a git work tree, and git is asked now, with the same rule:
  the files as committed (no change, no new file), or no commit at all.

A slow path (git runs at most once a process, in :func:`commit`): ``smllm export`` and
the viewer's export ask it, never a hook.
"""

from __future__ import annotations

from smllm import VERSION
from smllm.base import osfast as os

#: the file the build step writes into the installed package (one line: the commit)
COMMIT_FILE = "_commit"
#: where the package lives in smllm's repository (how a checkout is recognised)
PACKAGE_FOLDER = "src/smllm/"
_HEX = frozenset("0123456789abcdef")
_known: dict[str, str | None] = {}


def _git(folder: str, *args: str) -> str | None:
    """git's stdout in ``folder``, or None if git is missing or fails."""
    import subprocess  # noqa: PLC0415 - only when a build's commit is asked for

    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_OPTIONAL_LOCKS"] = "0"  # status must not write the index of the checkout
    try:
        proc = subprocess.run(["git", "-C", folder, *args], capture_output=True, text=True,
                              env=env, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def _is_commit(text: str) -> bool:
    return len(text) == 40 and set(text) <= _HEX


def checkout_commit(package: str) -> str | None:
    """The commit of the checkout ``package`` (a ``src/smllm`` folder) is part of, when its
    files are exactly that commit's; None otherwise (not a checkout of smllm, changed or
    new files in the package, git missing)."""
    where = (_git(package, "rev-parse", "--show-prefix", "--verify", "HEAD") or "").split()
    if len(where) != 2 or where[0] != PACKAGE_FOLDER or not _is_commit(where[1]):
        return None  # not src/smllm of a work tree with a commit (a venv inside one, ...)
    status = _git(package, "status", "--porcelain", "--untracked-files=normal", "--", ".")
    if status is None or status.strip():
        return None
    return where[1]


def _baked(package: str) -> str | None:
    try:
        with open(os.path.join(package, COMMIT_FILE), encoding="ascii") as fh:
            text = fh.read().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text if _is_commit(text) else None


def commit(package: str | None = None) -> str | None:
    """The full commit of this build of smllm (``package``: its folder, for tests), or None
    when it is not known."""
    folder = package or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if folder not in _known:
        _known[folder] = checkout_commit(folder) or _baked(folder)
    return _known[folder]


def info(package: str | None = None) -> dict[str, str]:
    """``{"display": "smllm 0.1.0 (b62aed845f)", "smllm": "0.1.0", "commit": "b62a…"}``;
    without a known commit, ``{"display": "smllm 0.1.0", "smllm": "0.1.0"}``."""
    sha = commit(package)
    if sha is None:
        return {"display": f"smllm {VERSION}", "smllm": VERSION}
    return {"display": f"smllm {VERSION} ({sha[:10]})", "smllm": VERSION, "commit": sha}
