"""What the hooks load lazily still happens when it is needed: the team store's shipper."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import base, hook

SID = "7c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f"
EXTRA = {"Stop": {"stop_hook_active": False}, "SessionEnd": {"reason": "other"}}


def _imported(event: str, tmp_path: Path, env: dict[str, str]) -> set[str]:
    payload = json.dumps(base(event, SID, cwd=str(tmp_path), **EXTRA[event])).encode()
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c",
                           "from smllm.hooks import cli; cli()", event], input=payload,
                          capture_output=True, check=True, cwd=tmp_path, env=env)
    return {line.rsplit("|", 1)[1].strip() for line in proc.stderr.decode().splitlines()
            if line.startswith("import time:") and "|" in line}


def _wait_for_shipper(home: Path, text: str) -> str:
    """The shipper's log once it holds ``text`` and the detached shipper has let go of its
    lock (it ends by itself: the test never outlives it)."""
    import fcntl

    log = home / "logs" / "ship.log"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and text not in (log.read_text() if log.exists() else ""):
        time.sleep(0.1)
    fd = os.open(home / "locks" / "ship.lock", os.O_RDWR)
    try:
        while time.monotonic() < deadline:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                time.sleep(0.05)
    finally:
        os.close(fd)
    return log.read_text() if log.exists() else ""


@pytest.mark.parametrize("event", ["Stop", "SessionEnd"])
def test_without_a_store_the_shipper_is_neither_loaded_nor_started(
        event: str, tmp_path: Path, smllm_home: Path) -> None:
    """No store configured: the hook asks smllm.store, never imports smllm.store.trigger,
    and starts nothing."""
    names = _imported(event, tmp_path, dict(os.environ))
    assert (True, False, False) == ("smllm.store" in names, "smllm.store.trigger" in names,
                                    (smllm_home / "ship").exists())


@pytest.mark.parametrize(("event", "how"), [("Stop", "config"), ("SessionEnd", "config"),
                                            ("Stop", "env")])
def test_a_configured_store_still_starts_the_detached_shipper(
        event: str, how: str, tmp_path: Path, smllm_home: Path) -> None:
    """A store in config.toml's [store] table or in SMLLM_STORE_URL: the hook loads the
    trigger and the detached shipper runs (here it finds the store down and logs so)."""
    down = f"postgresql://nobody@/smllm?host={tmp_path}/no-server"
    env: dict[str, str] = {}
    if how == "config":
        smllm_home.mkdir(parents=True, exist_ok=True)
        (smllm_home / "config.toml").write_text(f'[store]\nurl = "{down}"\n')
        (smllm_home / "config.toml").chmod(0o600)
    else:
        env["SMLLM_STORE_URL"] = down
    hook("SessionStart", base("SessionStart", SID, cwd=str(tmp_path), source="startup"),
         env=env)
    proc = hook(event, base(event, SID, cwd=str(tmp_path), **EXTRA[event]), env=env)
    text = _wait_for_shipper(smllm_home, "ship failed")
    assert (0, b"", True, True) == (proc.returncode, proc.stdout,
                                    (smllm_home / "locks" / "ship.lock").exists(),
                                    "ship failed: cannot reach the team store" in text)


def _log(tmp_path: Path, sizes: list[int], tail: bytes = b"") -> tuple[str, tuple[int, str]]:
    """A log of records whose ``pad`` fields hold ``sizes`` bytes; ``tail`` appended raw after
    them. Returns its path and the (sequence, hash) of its last record."""
    from smllm import journal

    path = str(tmp_path / "session.jsonl")
    def pad(n: int) -> list[str]:  # strings under the journal's STRING_LIMIT
        return ["x" * min(16384, n - i) for i in range(0, n, 16384)]

    written = journal.append(path, [journal.event("pad", pad=pad(n)) for n in sizes])
    if tail:
        with open(path, "ab") as fh:
            fh.write(tail)
    return path, (written[-1].sequence, written[-1].hash)


CHUNK = 64 * 1024
BIG = 2 * CHUNK  # a first record that makes the log longer than the chunk read_tail reads
#: (case, pad sizes, raw bytes after the records, skipped lines, reads of the file)
TAILS = [
    ("small records", [BIG, 10, 20, 30], b"", 0, 1),
    ("last record inside the first chunk", [BIG, CHUNK - 400], b"", 0, 1),
    # chunks read back to the record's start, then the record itself in one read
    ("last record crosses the chunk boundary", [BIG, 100, CHUNK], b"", 0, 3),
    ("last record longer than a chunk", [BIG, 100, 3 * CHUNK], b"", 0, 5),
    ("a torn line after the records", [BIG, 10, 20], b'{"sequence":9,"recorded_', 0, 1),
    ("unparseable lines after the records", [BIG, 10, 20], b"garbage\nmore garbage\n", 2, 1),
]


@pytest.mark.parametrize(("case", "sizes", "tail", "skipped", "reads"), TAILS,
                         ids=[t[0] for t in TAILS])
def test_the_tail_is_found_without_rereading_the_chunk_it_is_in(
        case: str, sizes: list[int], tail: bytes, skipped: int, reads: int, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """read_tail finds the last record, its torn bytes and skipped lines, reading no chunk
    twice while it looks for the record's start: a last record inside the first chunk
    costs one read (every writer's every transaction reads the tail)."""
    from smllm import journal

    path, (sequence, digest) = _log(tmp_path, sizes, tail)
    calls: list[int] = []
    real = os.pread

    def counted(fd: int, n: int, offset: int) -> bytes:
        calls.append(n)
        return real(fd, n, offset)

    from smllm.base import osfast  # the journal calls os through it

    monkeypatch.setattr(osfast, "pread", counted)
    fd = os.open(path, os.O_RDONLY)
    try:
        found = journal.read_tail(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)
    torn = 0 if tail.endswith(b"\n") else len(tail)
    assert (sequence, digest, torn, skipped, reads) == (
        found.sequence, found.hash, found.torn_bytes, found.skipped, len(calls))


def buffered() -> dict[str, str]:
    """The test's environment (its SMLLM_HOME included: read when the test runs) with
    Python's usual buffering (a developer's shell may set PYTHONUNBUFFERED, which would
    hide a flush the fast exit forgot)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
#: a module-level object of the ``-c`` program that says when the interpreter's teardown
#: frees it (a hook whose teardown is skipped never says it)
TEARDOWN_PROBE = ("import os, sys\n"
                  "class Probe:\n"
                  "    def __del__(self, write=os.write):\n"
                  "        write(2, b'[teardown ran]')\n"
                  "sys.probe = Probe()\n")  # freed by the teardown, gc.freeze or not
#: (case, code run before the hook, teardown expected, what stderr must hold)
EXITS = [
    ("nothing left to run: no teardown", "", False, ""),
    ("an atexit callback runs", "import atexit\n"
     "atexit.register(lambda: os.write(2, b'[atexit ran]'))\n", True, "[atexit ran]"),
    ("a thread is joined", "import threading, time\n"
     "threading.Thread(target=lambda: (time.sleep(0.3), os.write(2, b'[thread done]'))).start()\n",
     True, "[thread done]"),
    ("a tracer sees the end", "sys.settrace(lambda *a: None)\n", True, ""),
    ("stderr without a newline is flushed", "sys.stderr.write('[partial line]')\n", False,
     "[partial line]"),
]


@pytest.mark.parametrize(("case", "before", "teardown", "expected"), EXITS,
                         ids=[e[0] for e in EXITS])
def test_a_hook_skips_the_teardown_only_when_nothing_is_left_to_run(
        case: str, before: str, teardown: bool, expected: str, tmp_path: Path) -> None:
    """The installed hook ends with os._exit only when no thread, atexit callback or tracer
    needs the interpreter's teardown; its output and exit status are the same either way."""
    payload = json.dumps(base("Stop", SID, cwd=str(tmp_path), stop_hook_active=False)).encode()
    code = TEARDOWN_PROBE + before + "from smllm.hooks import cli\ncli()\n"
    proc = subprocess.run([sys.executable, "-c", code, "Stop"], input=payload, env=buffered(),
                          capture_output=True, cwd=tmp_path, timeout=60, check=False)
    err = proc.stderr.decode()
    assert (0, b"", teardown, True) == (proc.returncode, proc.stdout, "[teardown ran]" in err,
                                        expected in err)


def test_the_hook_help_reaches_stdout_without_the_teardown(tmp_path: Path) -> None:
    """`cli() --help` writes its usage through sys.stdout's buffer: flushed before os._exit."""
    proc = subprocess.run([sys.executable, "-c", "from smllm.hooks import cli; cli()", "--help"],
                          env=buffered(), capture_output=True, cwd=tmp_path, timeout=60,
                          check=False)
    assert (0, "usage: smllm hook EVENT < hook-input.json") == (
        proc.returncode, proc.stdout.decode().splitlines()[0])


def test_a_gating_hook_keeps_its_exit_status_when_stdout_is_closed(tmp_path: Path) -> None:
    """A PreToolUse that cannot write its decision (a deny) still exits 2 through the fast
    exit."""
    payload = json.dumps(base("PreToolUse", SID, cwd=str(tmp_path), tool_name="Bash",
                              tool_input={"command": "rm -rf /"},
                              tool_use_id="toolu_1")).encode()
    code = "import os\nos.close(1)\nfrom smllm.hooks import cli\ncli()\n"
    proc = subprocess.run([sys.executable, "-c", code, "PreToolUse"], input=payload,
                          env=buffered(), capture_output=True, cwd=tmp_path, timeout=60,
                          check=False)
    assert (2, "smllm denies this call: its decision could not be written to stdout") == (
        proc.returncode, proc.stderr.decode().strip().splitlines()[-1])
