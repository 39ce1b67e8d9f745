"""The hooks' code bundle (smllm/hooks/_bundle.py): one file serves the smllm modules a hook
loads, only while their sources are unchanged, and never changes what a hook does.

Each test runs hooks from its own copy of the package (the bundle lives in the package's
``__pycache__``), so the tests never touch the bundle of the checkout the suite runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import base, hook_output

SRC = Path(__file__).resolve().parent.parent / "src" / "smllm"
SID = "5a1e2c3b-0000-4000-8000-0000000b0d1e"
TAG = sys.implementation.cache_tag

#: appended to the hook: which smllm modules came from the bundle, and which from files
REPORT = ("import os, sys\n"
          "from smllm.hooks import _bundle, cli\n"
          "real_leave = sys.modules['smllm.hooks'].leave\n"
          "def leave(code):\n"
          "    served = sorted(n for n in sys.modules if n.startswith('smllm') "
          "and _bundle._served(n))\n"
          "    files = sorted(n for n in sys.modules if n.startswith('smllm') "
          "and not _bundle._served(n))\n"
          "    os.write(2, ('\\nMODULES ' + repr((served, files)) + '\\n').encode())\n"
          "    real_leave(code)\n"
          "sys.modules['smllm.hooks'].leave = leave\n"
          "cli()\n")


@pytest.fixture
def package(tmp_path: Path) -> Path:
    """A copy of smllm's package (sources only), the folder to put on ``sys.path``."""
    root = tmp_path / "code"
    shutil.copytree(SRC, root / "smllm", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _bundle_of(root: Path) -> Path:
    return root / "smllm" / "__pycache__" / f"hooks.{TAG}.bundle"


def _run(root: Path, event: str, payload: dict[str, object], cwd: Path,
         report: bool = True, flags: tuple[str, ...] = ()
         ) -> tuple[subprocess.CompletedProcess[bytes], tuple[list[str], list[str]]]:
    code = f"import sys; sys.path[:0] = [{str(root)!r}]\n" + (
        REPORT if report else "from smllm.hooks import cli; cli()\n")
    proc = subprocess.run([sys.executable, "-I", "-S", *flags, "-c", code, event],
                          input=json.dumps(payload).encode(), capture_output=True,
                          env={**os.environ}, cwd=cwd, timeout=60, check=False)
    modules: tuple[list[str], list[str]] = ([], [])
    for line in proc.stderr.decode().splitlines():
        if line.startswith("MODULES "):
            modules = eval(line[len("MODULES "):])
    return proc, modules


def _bash(command: str, tmp_path: Path, n: int = 1) -> dict[str, object]:
    return base("PreToolUse", SID, cwd=str(tmp_path), tool_name="Bash",
                tool_input={"command": command}, tool_use_id=f"toolu_{n}")


#: loaded before the bundle can serve anything: the entry point itself
ENTRY = ["smllm", "smllm.hooks", "smllm.hooks._bundle"]


def test_second_hook_loads_every_module_from_the_bundle(package: Path, tmp_path: Path) -> None:
    """The first hook writes the bundle from the modules it loaded; the next one loads
    all of them from it, and decides the same."""
    first, (served, files) = _run(package, "PreToolUse", _bash("rm -rf ~", tmp_path), tmp_path)
    assert served == []
    assert _bundle_of(package).is_file()
    second, (served2, files2) = _run(package, "PreToolUse", _bash("rm -rf ~", tmp_path, 2),
                                     tmp_path)
    assert files2 == ENTRY
    # the first hook also compiled the policy (modules the second one does not need)
    assert set(served2) <= set(files) - set(ENTRY)
    assert {"smllm.gate.shell._analyse", "smllm.journal.log"} <= set(served2)
    deny = hook_output(second)
    assert deny is not None
    assert deny == hook_output(first)
    assert deny["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_changed_module_is_loaded_from_its_file_and_the_bundle_follows(
        package: Path, tmp_path: Path) -> None:
    """A source changed after the bundle was written runs as it now is (its new code), and
    the bundle takes the new code for the next hook."""
    _run(package, "PreToolUse", _bash("ls", tmp_path), tmp_path)
    _run(package, "PreToolUse", _bash("ls", tmp_path, 2), tmp_path)
    harness = package / "smllm" / "harness" / "claude.py"
    harness.write_text(harness.read_text() + "\nCHANGED_AFTER_THE_BUNDLE = True\n")
    probe = REPORT.replace(
        "    real_leave(code)\n",
        "    changed = getattr(sys.modules['smllm.harness.claude'], "
        "'CHANGED_AFTER_THE_BUNDLE', False)\n"
        "    os.write(2, b'\\nCHANGED %r\\n' % changed)\n"
        "    real_leave(code)\n")
    code = f"import sys; sys.path[:0] = [{str(package)!r}]\n" + probe
    for n, source in ((3, "file"), (4, "bundle")):
        proc = subprocess.run([sys.executable, "-I", "-S", "-c", code, "PreToolUse"],
                              input=json.dumps(_bash("ls", tmp_path, n)).encode(),
                              capture_output=True, cwd=tmp_path, timeout=60, check=True)
        err = proc.stderr.decode()
        assert "CHANGED True" in err, err
        _, files = eval(err.split("MODULES ", 1)[1].splitlines()[0])
        where = "file" if "smllm.harness.claude" in files else "bundle"
        assert (n, where) == (n, source), err


def test_no_bundle_no_rewrite_when_nothing_was_missed(package: Path, tmp_path: Path) -> None:
    """A hook that loaded everything from the bundle leaves the file as it was."""
    _run(package, "Stop", base("Stop", SID, cwd=str(tmp_path), stop_hook_active=False),
         tmp_path)
    before = _bundle_of(package).stat()
    _run(package, "Stop", base("Stop", SID, cwd=str(tmp_path), stop_hook_active=False),
         tmp_path)
    after = _bundle_of(package).stat()
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)


@pytest.mark.parametrize("planted", ["garbage", "truncated", "link", "fifo", "folder"])
def test_a_damaged_or_planted_bundle_is_not_used(planted: str, package: Path,
                                                 tmp_path: Path) -> None:
    """Garbage, a cut-short bundle, a link, a FIFO or a folder at the bundle's path serve
    nothing (and never block the hook): the modules load from their files and the hook
    decides as usual."""
    _run(package, "PreToolUse", _bash("rm -rf ~", tmp_path), tmp_path)
    path = _bundle_of(package)
    good = path.read_bytes()
    path.unlink()
    if planted == "garbage":
        path.write_bytes(b"not a bundle" * 100)
    elif planted == "truncated":
        path.write_bytes(good[: len(good) // 2])
    elif planted == "link":
        target = tmp_path / "elsewhere.bundle"
        target.write_bytes(good)
        path.symlink_to(target)
    elif planted == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    proc, (served, files) = _run(package, "PreToolUse", _bash("rm -rf ~", tmp_path, 2),
                                 tmp_path)
    out = hook_output(proc)
    assert out is not None
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    if planted == "truncated":  # the index is whole: the modules cut off load from files
        assert served
        assert set(files) - set(ENTRY)
    else:
        assert served == []


def test_a_package_without_a_cache_folder_has_no_bundle_and_the_hook_works(
        package: Path, tmp_path: Path) -> None:
    """Where the package's ``__pycache__`` cannot be made (no .pyc either; here a file
    stands in its place, which stops root as well), hooks run as usual."""
    cache = package / "smllm" / "__pycache__"
    cache.write_bytes(b"")
    for n in (1, 2):
        proc, (served, files) = _run(package, "PreToolUse", _bash("rm -rf ~", tmp_path, n),
                                     tmp_path)
        assert served == []
        assert "smllm.gate" in files
        out = hook_output(proc)
        assert out is not None
        assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert cache.read_bytes() == b""


def test_no_bundle_is_written_where_no_bytecode_is(package: Path, tmp_path: Path) -> None:
    """Under ``-B`` (Python writes no .pyc) a hook writes no bundle either."""
    for n in (1, 2):
        proc, (served, _) = _run(package, "PreToolUse", _bash("rm -rf ~", tmp_path, n),
                                 tmp_path, flags=("-B",))
        assert served == []
        assert hook_output(proc) is not None
    assert not _bundle_of(package).exists()


def test_the_bundle_serves_only_the_modules_of_its_own_package(package: Path,
                                                               tmp_path: Path) -> None:
    """Two copies of smllm never share a bundle: each is in its own package folder and
    names its sources relative to it."""
    _run(package, "Stop", base("Stop", SID, cwd=str(tmp_path), stop_hook_active=False),
         tmp_path)
    other = tmp_path / "other"
    shutil.copytree(package, other, copy_function=shutil.copy)
    # the copy carries the first package's bundle, but its sources are new files (other
    # mtimes): its hook loads them from their files, then writes its own bundle
    _, (served, files) = _run(other, "Stop", base("Stop", SID, cwd=str(tmp_path),
                                                  stop_hook_active=False), tmp_path)
    assert served == []
    assert "smllm.journal" in files
    _, (served, _) = _run(other, "Stop", base("Stop", SID, cwd=str(tmp_path),
                                              stop_hook_active=False), tmp_path)
    assert "smllm.journal" in served
