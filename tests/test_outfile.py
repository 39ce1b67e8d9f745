"""Files the user names (`export --out`, `ledger --html`): a regular file is replaced whole, a
FIFO, a character device or a standard stream is written into, a link to a file is refused.

Never the machine's own /dev/null: the FIFOs and device nodes are made in tmp_path (a node
only when this process may create one; the character device is the null device, the block
device is 0:0, which no driver serves).
"""

from __future__ import annotations

import os
import select
import shutil
import stat
import subprocess
import time
from pathlib import Path

import pytest

from helpers import PYTHON
from smllm.audit import outfile

BILLING = (Path(__file__).parent / "fixtures" / "sessions" / "billing"
           / "c7dfaecc-adf6-4348-87df-95576e15136e" / "session.jsonl")
#: what each command says on stderr when its file was written into
STREAMED = {"export": "smllm: wrote the export to {}\n",
            "ledger": "smllm: wrote the HTML ledger to {}\n"}


class World:
    """A copy of the billing journal, its export, and each command's reference output."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.log = root / "billing.jsonl"
        shutil.copyfile(BILLING, self.log)
        self.export = root / "export.json"
        assert 0 == self.run("export", self.export).returncode
        page = root / "page.html"
        ledger = self.run("ledger", page)
        self.reference = {"export": self.export.read_bytes(), "ledger": page.read_bytes()}
        self.table = ledger.stdout  # what ledger prints besides the page

    def argv(self, command: str, target: Path | str) -> list[str]:
        if command == "export":
            return [PYTHON, "-m", "smllm", "export", "--journal", str(self.log), "--out",
                    str(target)]
        return [PYTHON, "-m", "smllm", "ledger", str(self.export), "--plain", "--html",
                str(target)]

    def run(self, command: str, target: Path | str, **kw: object
            ) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(self.argv(command, target), capture_output="stdout" not in kw,
                              cwd=self.root, timeout=60, check=False, **kw)  # type: ignore[call-overload]


@pytest.fixture
def world(tmp_path: Path) -> World:
    """The billing journal, exported once, in a folder of the test's own."""
    return World(tmp_path)


def _drain(fifo: Path, argv: list[str], cwd: Path) -> tuple[int, bytes, bytes, bytes]:
    """Run ``argv`` while reading ``fifo`` to its end: (exit status, stdout, stderr, what
    came through the FIFO). The read end is opened first, without blocking, so a command
    that never opens the FIFO cannot hang the test."""
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    got = bytearray()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd)
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.05)
            data = os.read(fd, 1 << 16) if ready else b""
            got += data
            if not data and proc.poll() is not None:
                break
    finally:
        os.close(fd)
        if proc.poll() is None:
            proc.kill()
        out, err = proc.communicate(timeout=30)
    return proc.returncode, out, err, bytes(got)


def _node(path: Path, kind: int, device: int) -> Path:
    """A device node in tmp_path, or a skip when this process may not make or open one."""
    try:
        os.mknod(path, 0o600 | kind, device)
    except PermissionError:
        pytest.skip("making a device node needs root")
    if kind == stat.S_IFCHR:
        try:
            os.close(os.open(path, os.O_WRONLY))
        except PermissionError:
            pytest.skip("device nodes cannot be opened on this file system (nodev)")
    return path


def _others(folder: Path, *keep: str) -> list[str]:
    """The names in ``folder`` besides the world's files and ``keep`` (temporary leftovers)."""
    known = {"billing.jsonl", "export.json", "page.html", *keep}
    return sorted(p.name for p in folder.iterdir() if p.name not in known)


@pytest.mark.parametrize("command", ["export", "ledger"])
def test_a_fifo_is_written_into(world: World, command: str) -> None:
    """A FIFO gets the whole document streamed into it and stays a FIFO (no temporary file,
    no rename); the path goes to stderr."""
    fifo = world.root / "pipe"
    os.mkfifo(fifo)
    rc, out, err, got = _drain(fifo, world.argv(command, fifo), world.root)
    stdout = b"" if command == "export" else world.table
    assert (0, stdout, STREAMED[command].format(fifo).encode(), world.reference[command], True,
            []) == (rc, out, err, got, stat.S_ISFIFO(fifo.lstat().st_mode),
                    _others(world.root, "pipe"))


@pytest.mark.parametrize("command", ["export", "ledger"])
def test_a_character_device_is_written_into(world: World, command: str) -> None:
    """A character device (a null device made in tmp_path) is written into and stays one."""
    node = _node(world.root / "null", stat.S_IFCHR, os.makedev(1, 3))
    proc = world.run(command, node)
    assert (0, STREAMED[command].format(node).encode(), True, []) == (
        proc.returncode, proc.stderr, stat.S_ISCHR(node.lstat().st_mode),
        _others(world.root, "null"))


@pytest.mark.parametrize("command", ["export", "ledger"])
@pytest.mark.parametrize("name", ["/dev/stdout", "/dev/fd/1"])
def test_standard_output_named_as_a_file_gets_the_document(world: World, command: str,
                                                           name: str) -> None:
    """`--out /dev/stdout` (or /dev/fd/1) writes the document to the process's stdout: a
    pipe gets exactly the document (ledger: its table first), the path goes to stderr."""
    proc = world.run(command, name)
    before = b"" if command == "export" else world.table
    assert (0, before + world.reference[command], STREAMED[command].format(name).encode()) == (
        proc.returncode, proc.stdout, proc.stderr)


def test_standard_output_redirected_to_a_file_is_written_there(world: World) -> None:
    """With stdout redirected to a regular file (`--out /dev/stdout > x.json`), the document
    lands in that very file: the descriptor is written, nothing is refused or replaced."""
    target = world.root / "redirected.json"
    with open(target, "wb") as fh:
        inode = os.fstat(fh.fileno()).st_ino
        proc = world.run("export", "/dev/stdout", stdout=fh, stderr=subprocess.PIPE)
    assert (0, world.reference["export"], inode) == (
        proc.returncode, target.read_bytes(), target.stat().st_ino)


@pytest.mark.parametrize("command", ["export", "ledger"])
def test_a_link_to_a_file_is_refused(world: World, command: str) -> None:
    """A symbolic link to a regular file is neither replaced nor written through: the command
    fails with one line naming the file the link leads to, and both stay as they were."""
    kept = world.root / "kept.txt"
    kept.write_text("keep me\n")
    link = world.root / "out.json"
    link.symlink_to("kept.txt")
    proc = world.run(command, link)
    message = (f"smllm: error: will not write {link}: it is a symbolic link (to kept.txt), and "
               f"smllm does not write through a link into a file (name the file itself, {kept}, "
               "or remove the link)\n")
    assert (1, message.encode(), "keep me\n", "kept.txt", []) == (
        proc.returncode, proc.stderr, kept.read_text(), os.readlink(link),
        _others(world.root, "kept.txt", "out.json"))


def test_a_dangling_link_is_refused(world: World) -> None:
    """A link that leads nowhere is refused too: nothing is created at its far end."""
    link = world.root / "out.json"
    link.symlink_to("missing/file.json")
    proc = world.run("export", link)
    assert (1, False, True) == (proc.returncode, (world.root / "missing").exists(),
                                b"it is a symbolic link (to missing/file.json)" in proc.stderr)


def test_a_link_to_a_fifo_is_followed(world: World) -> None:
    """A link to a FIFO (as /dev/fd/N of a process substitution is) leads the document into
    the FIFO; the link stays a link."""
    fifo = world.root / "pipe"
    os.mkfifo(fifo)
    link = world.root / "out.json"
    link.symlink_to("pipe")
    rc, _, err, got = _drain(fifo, world.argv("export", link), world.root)
    assert (0, STREAMED["export"].format(link).encode(), world.reference["export"], "pipe") == (
        rc, err, got, os.readlink(link))


def test_a_link_planted_at_the_default_name_cannot_overwrite_the_policy(world: World) -> None:
    """The agent's move: a link named like the next export, pointing at .smllm/policy.toml.
    The user's bare `smllm export` refuses it and the policy is byte-identical."""
    policy = world.root / ".smllm" / "policy.toml"
    policy.parent.mkdir()
    policy.write_text('mode = "untrusted"\n')
    planted = world.root / "trajectory-20260802T101733580Z.json"
    planted.symlink_to(policy)
    proc = subprocess.run([PYTHON, "-m", "smllm", "export", "--journal", str(world.log)],
                          capture_output=True, text=True, cwd=world.root, timeout=60, check=False)
    assert (1, "", 'mode = "untrusted"\n', True) == (
        proc.returncode, proc.stdout, policy.read_text(),
        proc.stderr.startswith(f"smllm: error: will not write {planted}: it is a symbolic link"))


def test_a_block_device_is_refused(world: World) -> None:
    """A block device (a disk) is never written onto."""
    node = _node(world.root / "disk", stat.S_IFBLK, os.makedev(0, 0))
    proc = world.run("export", node)
    assert (1, f"smllm: error: will not write {node}: it is a block device (a disk) (name a file "
               "or a FIFO)\n".encode()) == (proc.returncode, proc.stderr)


@pytest.mark.parametrize("command", ["export", "ledger"])
def test_a_regular_file_is_replaced_whole_and_private(world: World, command: str) -> None:
    """An existing regular file is replaced by a new one (another inode, mode 0600), and no
    temporary file is left beside it."""
    target = world.root / "existing.out"
    target.write_text("old\n")
    target.chmod(0o644)
    inode = target.stat().st_ino
    proc = world.run(command, target)
    assert (0, world.reference[command], True, 0o600, []) == (
        proc.returncode, target.read_bytes(), target.stat().st_ino != inode,
        stat.S_IMODE(target.stat().st_mode), _others(world.root, "existing.out"))


@pytest.mark.parametrize(("name", "expected"), [
    ("/dev/stdout", 1), ("/dev/stderr", 2), ("/dev/fd/1", 1), ("/dev/fd/63", 63),
    ("/proc/self/fd/2", 2), ("/dev//stdout", 1), ("/dev/fd/x", None), ("/dev/null", None),
    ("/tmp/dev/stdout", None),
])
def test_descriptor_names(name: str, expected: int | None) -> None:
    """The standard-stream file names map to the descriptor they stand for; others to none."""
    assert expected == outfile.descriptor_of(Path(name))


def test_a_failed_write_leaves_the_old_file(tmp_path: Path) -> None:
    """An error while writing leaves the regular file as it was and no temporary file."""
    target = tmp_path / "t.json"
    target.write_text("old\n")
    def write() -> None:
        with outfile.open_text(target) as (fh, _):
            fh.write("half")
            raise RuntimeError("disk gone")

    with pytest.raises(RuntimeError, match="disk gone"):
        write()
    assert (["t.json"], "old\n") == (sorted(p.name for p in tmp_path.iterdir()),
                                     target.read_text())
