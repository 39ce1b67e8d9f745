"""Which build wrote an export: the version, and the git commit when (and only when) it is known."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from smllm import VERSION
from smllm.base import build

REPO = Path(__file__).resolve().parent.parent
BILLING = next((REPO / "tests" / "fixtures" / "sessions" / "billing").rglob("session.jsonl"))
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True, env={**os.environ, **GIT_ENV}).stdout.strip()


def _checkout(tmp_path: Path, package_path: str = "src/smllm") -> tuple[Path, str]:
    """A git work tree holding a package folder at ``package_path``, committed."""
    repo = tmp_path / "clone"
    package = repo / package_path
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('VERSION = "0.1.0"\n')
    (package / "cli.py").write_text("")
    (repo / ".gitignore").write_text("__pycache__/\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "one")
    return package, _git(repo, "rev-parse", "HEAD")


def test_a_clean_checkout_names_its_commit(tmp_path: Path) -> None:
    """Run from src/smllm of a git work tree whose files are as committed: that commit."""
    package, head = _checkout(tmp_path)
    (package / "__pycache__").mkdir()  # ignored files do not count
    (package / "__pycache__" / "cli.cpython-311.pyc").write_bytes(b"x")
    expected = {"display": f"smllm {VERSION} ({head[:10]})", "smllm": VERSION, "commit": head}
    assert expected == build.info(str(package))


@pytest.mark.parametrize("change", ["edit", "new file", "staged", "other layout"])
def test_no_commit_rather_than_a_wrong_one(tmp_path: Path, change: str) -> None:
    """An edited, new or staged file in the package, or a folder that is not smllm's
    src/smllm: no commit (the build is not that commit's)."""
    package, _ = _checkout(tmp_path, "lib/smllm" if change == "other layout" else "src/smllm")
    if change == "edit":
        (package / "cli.py").write_text("print('changed')\n")
    elif change == "new file":
        (package / "extra.py").write_text("")
    elif change == "staged":
        (package / "cli.py").write_text("x = 1\n")
        _git(package, "add", "cli.py")
    assert {"display": f"smllm {VERSION}", "smllm": VERSION} == build.info(str(package))


def test_changes_outside_the_package_do_not_count(tmp_path: Path) -> None:
    """A changed README beside the package does not change what the package is."""
    package, head = _checkout(tmp_path)
    (package.parent.parent / "README.md").write_text("notes\n")
    assert head == build.commit(str(package))


@pytest.mark.parametrize(("content", "expected"), [
    ("b62aed845f" + "0" * 30 + "\n", "b62aed845f" + "0" * 30),
    ("b62aed845f\n", None),  # not a whole commit
    ("not a commit at all, just text!!!!!!!!!!\n", None),
])
def test_an_installed_package_reads_the_commit_its_build_wrote(
        tmp_path: Path, content: str, expected: str | None) -> None:
    """Outside a checkout the commit is the one the build step wrote into the package, if
    it is one."""
    package = tmp_path / "site-packages" / "smllm"
    package.mkdir(parents=True)
    (package / build.COMMIT_FILE).write_text(content)
    assert expected == build.commit(str(package))


def test_an_installed_smllm_exports_the_commit_it_was_built_from(tmp_path: Path) -> None:
    """The build step of a clean clone (what install.sh's `pip install` runs, here without
    an index: setup.py's build_py) writes its commit into the built package, and an export
    by that build names it in exporter_version; twice the same bytes."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(REPO), str(clone)], check=True,
                   env={**os.environ, **GIT_ENV})
    head = _git(clone, "rev-parse", "HEAD")
    site = tmp_path / "site"
    subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(site)],
                   cwd=clone, check=True, capture_output=True)
    written = (site / "smllm" / build.COMMIT_FILE).read_text()
    env = {**os.environ, "PYTHONPATH": str(site)}
    used = subprocess.run([sys.executable, "-c", "import smllm; print(smllm.__file__)"],
                          env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert str(site / "smllm" / "__init__.py") == used  # the build, not this checkout
    outs = []
    for name in ("a.json", "b.json"):
        subprocess.run([sys.executable, "-m", "smllm", "export", "--journal", str(BILLING),
                        "--out", str(tmp_path / name)], check=True, env=env, cwd=tmp_path,
                       capture_output=True)
        outs.append((tmp_path / name).read_bytes())
    shown = json.loads(outs[0])["exporter_version"]
    expected = (head + "\n", {"display": f"smllm {VERSION} ({head[:10]})", "smllm": VERSION,
                              "commit": head}, True, "")
    assert expected == (written, shown, outs[0] == outs[1], _git(clone, "status", "--short"))
