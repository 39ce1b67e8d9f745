"""Issue 26: the system temp folders are scratch space (create, write, delete under them
is ordinary work), look-alikes are not threats; each class with its dangerous neighbour
still blocked."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from smllm.gate.shell import analyse
from test_shell_families import EXECUTABLE

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "corpus"))
import families


@pytest.fixture
def temp_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temp root of the test's own ($TMPDIR) with the workspace straight in it, the way
    an agent works in /tmp/proj, and a home folder elsewhere."""
    tmp = tmp_path / "tmp"
    (tmp / "proj").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    return tmp


def _decide(command: str, temp_root: Path) -> str:
    root = temp_root / "proj"
    return analyse(command, cwd=str(root), home=str(temp_root.parent / "home")).decision


@pytest.mark.parametrize("command", [
    'rm -rf "$TMPDIR/build"',
    "rm -rf $TMPDIR/build",
    'rm --force --recursive "$TMPDIR/build"',
    'tee "$TMPDIR/x" <<EOF\nhello\nEOF',
    'mkdir -p "$TMPDIR/b" && echo hi > "$TMPDIR/b/x" && rm -r "$TMPDIR/b"',
    'rm -rf "$TMPDIR/other-project"',
])
def test_scratch_work_beside_a_workspace_in_temp_is_allowed(temp_root: Path,
                                                            command: str) -> None:
    """A workspace straight in a temp root leaves the rest of that root scratch."""
    (temp_root / "other-project").mkdir()
    assert _decide(command, temp_root) == "allow"


@pytest.mark.parametrize("command", [
    'rm -rf "$TMPDIR"',
    'rm -rf "$TMPDIR"/*',
    'rm -rf "$TMPDIR/proj"',
    'rm -rf "$TMPDIR/proj/.."',
    'ln -s ~ "$TMPDIR/h"; rm -rf "$TMPDIR/h/"',
    'rm -rf "$TMPDIR/h/"',
    "rm -rf ~",
])
def test_scratch_neighbours_stay_blocked(temp_root: Path, command: str) -> None:
    """The temp root, everything in it, the workspace, a link from temp into home."""
    (temp_root / "h").symlink_to(temp_root.parent / "home")
    assert _decide(command, temp_root) != "allow"


def test_link_out_of_temp_is_judged_by_its_target(temp_root: Path) -> None:
    home = temp_root.parent / "home"
    (home / "notes").mkdir()
    (temp_root / "n").symlink_to(home / "notes")
    assert _decide('rm -rf "$TMPDIR/n/"', temp_root) != "allow"
    (temp_root / "build").mkdir()
    (temp_root / "b").symlink_to(temp_root / "build")
    assert _decide('rm -rf "$TMPDIR/b/"', temp_root) == "allow"


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0,
                    reason="giving a file to another user needs root")
def test_other_users_files_are_not_scratch(temp_root: Path) -> None:
    theirs = temp_root / "theirs"
    (theirs / "sub").mkdir(parents=True)
    os.chown(theirs, 65534, 65534)
    os.chown(theirs / "sub", 65534, 65534)
    assert _decide('rm -rf "$TMPDIR/theirs"', temp_root) != "allow"
    assert _decide('rm -rf "$TMPDIR/theirs/sub/new"', temp_root) != "allow"
    assert _decide('echo x > "$TMPDIR/theirs/f"', temp_root) != "allow"
    assert _decide('rm -rf "$TMPDIR/mine"', temp_root) == "allow"


def test_a_harness_folder_around_the_workspace_is_not_scratch(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    """A workspace in a folder of its own inside temp: that folder's other entries are a
    harness's fixtures (someone else's files), the rest of temp is scratch."""
    tmp = tmp_path / "tmp"
    root = tmp / "run" / "proj"
    root.mkdir(parents=True)
    monkeypatch.setenv("TMPDIR", str(tmp))
    home = str(tmp_path / "home")
    assert analyse(f"rm -rf {tmp}/run/fixtures", cwd=str(root), home=home).decision != "allow"
    assert analyse(f"rm -rf {tmp}/build", cwd=str(root), home=home).decision == "allow"


@pytest.mark.parametrize(("command", "expected"), [
    ('mkdir -p "$TMPDIR/scratch" && echo hi > "$TMPDIR/scratch/a.txt"', "allow"),
    ('rm -rf "$TMPDIR/scratch" "$TMPDIR/sorted.txt"', "allow"),
    # its neighbours: the temp folder itself, all of it, the harness's other fixtures
    ('rm -rf "$TMPDIR"', "deny"),
    ('rm -rf "$TMPDIR/"', "deny"),
    ('rm -rf "$TMPDIR"/*', "deny"),
    ("rm -rf ../fixtures", "deny"),
])
def test_the_agents_own_tmpdir_beside_the_workspace_is_scratch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, expected: str) -> None:
    """``$TMPDIR`` a folder of its own next to a workspace in temp (``/tmp/run/tmp`` beside
    ``/tmp/run/proj``, the way a harness sets up a run): it was named for the work."""
    run = tmp_path / "run"
    for name in ("proj", "tmp", "fixtures", "home"):
        (run / name).mkdir(parents=True)
    monkeypatch.setenv("TMPDIR", str(run / "tmp"))
    a = analyse(command, cwd=str(run / "proj"), home=str(run / "home"))
    assert a.decision == expected, [f.reason for f in a.all_findings()]


@pytest.mark.parametrize(("command", "expected"), [
    ("rm notes.txt", "allow"),
    ("unlink notes.txt", "allow"),
    ("srm -z notes.txt", "allow"),
    ("shred -u notes.txt", "allow"),
    ("shred -n 3 -uz notes.txt", "allow"),
    ("shred --remove notes.txt", "allow"),
    # the dangerous neighbours: outside the workspace, the home folder, a keep-the-file
    # overwrite, a protected file, a recursive delete
    ("srm -rf ~", "deny"),
    ("shred -u ~/notes.txt", "deny"),
    ("srm -z ../other/notes.txt", "deny"),
    ("shred notes.txt", "deny"),
    ("srm .git/config", "deny"),
    ("srm -r .", "deny"),
    ("srm -r src", "ask"),
    ("rm -r src", "ask"),
])
def test_one_file_deletes_are_judged_alike_whatever_the_program(
        tmp_path: Path, command: str, expected: str) -> None:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "notes.txt").write_text("x")
    home = tmp_path / "home"
    home.mkdir()
    assert analyse(command, cwd=str(root), home=str(home)).decision == expected


@pytest.mark.parametrize(("command", "expected"), [
    # a program of another system that is not installed cannot act, and says so
    ("format disk --help", "allow"),
    ("format c: /q", "allow"),
    # ... unless the command may have put one on PATH
    ("PATH=/opt/win:$PATH format c:", "deny"),
    ("export PATH=/opt/win:$PATH; format c:", "deny"),
    ("cp /opt/x ~/.local/bin/format; format c:", "deny"),
    # help and version forms never escalate
    ("fdisk --help", "allow"),
    ("mkfs -h", "allow"),
    ("sudo --help", "allow"),
    ("sudo -h", "allow"),
    ("chroot --version", "allow"),
    ("pkexec --version", "allow"),
    # ... but an option parser reading them as other options, a shell reading a stdin
    # script, a script by path and -h among other arguments are judged as ever
    ("crontab --version", "deny"),
    ("halt -h", "deny"),
    ("shutdown -h", "deny"),
    ("echo 'rm -rf ~' | bash -h", "deny"),
    ("fdisk -h /dev/sda", "deny"),
    ("rm -rf ~ -h", "deny"),
])
def test_look_alikes(tmp_path: Path, command: str, expected: str) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    a = analyse(command, cwd=str(root), home=str(tmp_path / "home"))
    assert a.decision == expected, [f.reason for f in a.all_findings()]


def test_not_installed_is_said_in_the_reason(tmp_path: Path) -> None:
    a = analyse("format disk --help", cwd=str(tmp_path), home=str(tmp_path / "home"))
    assert [(f.rule, f.reason) for f in a.all_findings()] == [
        ("shell.not-installed", "format is not installed (not found on PATH): it cannot act")]


def test_an_installed_look_alike_is_judged(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "format").write_text("#!/bin/sh\n")
    (bin_dir / "format").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    assert analyse("format c:", cwd=str(tmp_path), home=str(tmp_path / "h")).decision == "deny"


def test_the_corpora_with_the_workspace_straight_in_a_temp_root(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Acceptance 4 where agents often work (``/tmp/proj``): the everyday corpus stays under
    1% escalated (the same few policy cases as anywhere) and no dangerous command of the
    families corpus is allowed."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    root = tmp_path / "proj"
    for rel, text in families.WORKSPACE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    for rel in EXECUTABLE:
        (root / rel).chmod(0o755)
    for name, target in families.LINKS.items():
        (root / name).symlink_to(target)

    def decide(command: str) -> str:
        return analyse(command, cwd=str(root), home=families.HOME).decision

    escalated = sorted(c for _, c in families.EVERYDAY if decide(c) != "allow")
    allowed = [c for _, _, c in families.DANGEROUS if decide(c) == "allow"]
    assert (escalated, allowed) == (sorted(families.ESCALATED_EVERYDAY), [])
    assert len(escalated) < 0.01 * len(families.EVERYDAY)
