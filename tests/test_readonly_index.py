"""Read-only commands in a read-only data folder (Claude Code's sandbox): an index that
cannot be written degrades to a scan of the journals with a note, never an error."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from helpers import PYTHON
from journalgen import Effect, write_session
from smllm import index
from smllm.index import database

T0 = 1_767_603_600_000  # 2026-01-05T09:00:00Z
NOTE = "smllm: note: the index "


def _bwrap_works() -> bool:
    if shutil.which("bwrap") is None:
        return False
    proc = subprocess.run(["bwrap", "--bind", "/", "/", "--dev", "/dev", "true"],
                          capture_output=True, check=False)
    return proc.returncode == 0


needs_bwrap = pytest.mark.skipif(not _bwrap_works(), reason="bubblewrap cannot run here")


def _sandboxed(home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``smllm ARGS`` with smllm's data folder bound read-only (as root too: a read-only
    bind refuses writes whatever the permissions say), the working folder writable."""
    return subprocess.run(
        ["bwrap", "--bind", "/", "/", "--dev", "/dev", "--ro-bind", str(home), str(home),
         "--chdir", str(cwd), PYTHON, "-m", "smllm", *args],
        capture_output=True, text=True, check=False, timeout=120)


@pytest.fixture
def project(tmp_path: Path, smllm_home: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    write_session("ro000001-run", cwd=str(work), start_ms=T0, effects=[Effect("ls")])
    index.refresh()  # an index exists, and goes stale with the next session
    write_session("ro000002-run", cwd=str(work), start_ms=T0 + 60_000,
                  effects=[Effect("make")])
    return work


@needs_bwrap
def test_read_only_commands_work_in_a_read_only_data_folder(project: Path,
                                                            smllm_home: Path) -> None:
    """sessions, export --last --out ./t.json, ledger --last and verify succeed with the
    data folder read-only and a stale index: they read the journals (the newest session,
    which the index does not hold yet, is found), and say so once on stderr."""
    runs = {name: _sandboxed(smllm_home, project, *args) for name, args in {
        "sessions": ["sessions"], "export": ["export", "--last", "--out", "./t.json"],
        "ledger": ["ledger", "--last", "--plain"], "verify": ["verify"]}.items()}
    assert {name: 0 for name in runs} == {n: p.returncode for n, p in runs.items()}, {
        n: p.stderr for n, p in runs.items()}
    assert {name: 1 for name in runs} == {n: p.stderr.count(NOTE) for n, p in runs.items()}
    assert "ro000002-run" in runs["sessions"].stdout.splitlines()[0]
    assert (project / "t.json").is_file()
    assert runs["ledger"].stdout.startswith("audit ledger  ro000002-run  ")
    assert runs["verify"].stdout.startswith("ok: ")


@needs_bwrap
def test_no_index_file_in_a_read_only_data_folder(project: Path, smllm_home: Path) -> None:
    """No index file at all, and none can be created: the scan lists both sessions."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{database.path()}{suffix}").unlink(missing_ok=True)
    proc = _sandboxed(smllm_home, project, "sessions")
    assert (0, ["ro000002-run", "ro000001-run"]) == (
        proc.returncode, [line.split()[2] for line in proc.stdout.splitlines()])
    assert not database.path().exists()


@pytest.mark.parametrize("message", ["attempt to write a readonly database",
                                     "unable to open database file"])
def test_an_unwritable_index_is_read_around(project: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str],
                                            message: str) -> None:
    """Where SQLite refuses to write the index, the query runs on a scan in memory, and
    says so once; the index file is left as it was."""
    from smllm.index import refresher

    real = refresher.refresh
    calls: list[bool] = []

    def once(db: sqlite3.Connection, **kw: bool) -> object:
        calls.append(True)
        if len(calls) == 1:
            raise sqlite3.OperationalError(message)
        return real(db, **kw)

    monkeypatch.setattr(refresher, "refresh", once)
    monkeypatch.setattr(database, "_noted", [False])
    rows = index.sessions()
    with sqlite3.connect(database.path()) as db:  # the stale index was not touched
        kept = db.execute("SELECT session_id FROM sessions").fetchall()
    assert (["ro000002-run", "ro000001-run"], 2, [("ro000001-run",)]) == (
        [r.session_id for r in rows], len(calls), kept)
    err = capsys.readouterr().err
    assert (1, True) == (err.count(NOTE), err.startswith(
        f"{NOTE}{database.path()} cannot be updated here ({message})"))


def test_a_broken_query_is_not_hidden(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only "cannot write here" degrades: any other database error still surfaces."""
    from smllm.index import refresher

    def broken(db: sqlite3.Connection, **_: object) -> None:
        raise sqlite3.OperationalError("no such column: bogus")

    monkeypatch.setattr(refresher, "refresh", broken)
    with pytest.raises(sqlite3.OperationalError, match="bogus"):
        index.sessions()
