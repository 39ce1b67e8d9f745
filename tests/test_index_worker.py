"""The index's large reads split across a worker process (issue 25): the same index as
the in-process read, row by row, whatever the journals hold; a worker that dies or errs
leaves nothing of its work and the read is done in-process; no child is left behind."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from journalgen import Effect, append, write_session
from smllm import index, journal
from smllm.index import database, refresher, worker

T0 = 1_767_603_600_000  # 2026-01-05T09:00:00Z
TABLES = {"journals": "path", "sessions": "session_id",
          "records": "session_id, stream, sequence"}


def _rows(file: Path) -> dict[str, list[tuple[Any, ...]]]:
    db = sqlite3.connect(file)
    try:
        return {t: db.execute(f"SELECT * FROM {t} ORDER BY {key}").fetchall()
                for t, key in TABLES.items()}
    finally:
        db.close()


class _Forks:
    """Counts the worker's forks and keeps their pids."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.pids: list[int] = []
        fork = os.fork

        def counted() -> int:
            pid = fork()
            if pid:
                self.pids.append(pid)
            return pid

        monkeypatch.setattr(os, "fork", counted)
        monkeypatch.setattr(worker, "spare_core", lambda: True)  # however busy the machine

    def all_reaped(self) -> bool:
        for pid in self.pids:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                continue
            return False
        return True


def _both_ways(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[[], None]:
    """A refresh of two index files over the same journals, one in-process, one with
    the worker for every read (small flushes: intents closed across messages); each
    call checks that they hold the same rows."""
    files = {"serial": tmp_path / "serial.sqlite3", "worker": tmp_path / "worker.sqlite3"}
    monkeypatch.setattr(refresher, "FLUSH_ROWS", 3)

    def step() -> None:
        for mode, file in files.items():
            monkeypatch.setattr(database, "path", lambda file=file: file)
            monkeypatch.setattr(worker, "PARALLEL_BYTES", 0 if mode == "worker" else 1 << 62)
            index.refresh()
        serial, split = _rows(files["serial"]), _rows(files["worker"])
        assert serial["records"], "nothing indexed: the comparison compares nothing"
        assert serial == split

    return step


def _subagent(parent: str, agent: str, effects: int, start_ms: int) -> str:
    """A subagent journal beside ``parent``, announced in it."""
    path = os.path.join(os.path.dirname(parent), "subagent", agent, journal.LOG_NAME)
    os.makedirs(os.path.dirname(path), mode=0o700)
    append(parent, [journal.fact("subagent.started", {
        "agent_id": agent, "agent_type": "general-purpose",
        "journal": f"subagent/{agent}/{journal.LOG_NAME}"})], start_ms)
    entries = [journal.fact("session.start", {"session_id": agent, "source": "startup",
                                              "cwd": "/w"})]
    for n in range(effects):
        tid = f"toolu_{agent}_{n}"
        entries.append(journal.event("side_effect_intent", operation="tool:read",
                                     tool_name="Read", tool_use_id=tid,
                                     policy_decision="defer:host", rule=None,
                                     input={"file_path": f"/w/f{n}"}))
        if n % 2:
            entries.append(journal.fact("tool_batch.effect.terminal", {
                "tool_use_id": tid, "operation": "tool:read", "outcome": "succeeded",
                "authorized_by": "allow:user"}))
    append(path, entries, start_ms + 1)
    return path


def test_the_worker_builds_the_same_index_as_the_in_process_read(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    forks = _Forks(monkeypatch)
    step = _both_ways(monkeypatch, tmp_path)
    done = write_session("work0001-run", cwd="/a", start_ms=T0, effects=[
        Effect(f"make {i}", outcome="failed" if i == 2 else "succeeded",
               decision="ask:user" if i % 3 == 0 else "allow:policy",
               authorized_by="allow:user" if i % 3 == 0 else None) for i in range(7)])
    crashed = write_session("work0002-run", cwd="/b", start_ms=T0 + 60_000, end=None,
                            effects=[Effect("ls"), Effect("sleep 9", outcome=None)])
    _subagent(crashed, "agent01", 5, T0 + 61_000)
    with open(done, "ab") as fh:  # a torn last line: left for the next refresh
        fh.write(b'{"sequence":99,"recorded_at":"2026-01-')
    step()
    assert forks.pids, "the worker never ran"
    # the torn line completed with garbage, the crashed session's effect closed later,
    # the subagent grown
    with open(done, "ab") as fh:
        fh.write(b'not json"}\n')
    append(crashed, [journal.fact("tool_batch.effect.terminal", {
        "tool_use_id": "toolu_work0002_1", "operation": "tool:bash", "outcome": "unknown",
        "authorized_by": "allow:policy"})], T0 + 70_000)
    step()
    # chains that do not continue: a journal overwritten in place by a longer one (the
    # record at the cursor is another), one cut short
    other = write_session("work0003-run", cwd="/c", start_ms=T0 + 5, effects=[
        Effect(f"other {i}") for i in range(12)])
    with open(other, "rb") as src, open(done, "r+b") as dst:
        dst.write(src.read())
    with open(crashed, "r+b") as fh:
        data = fh.read()
        fh.truncate(data.index(b"\n", len(data) // 2) + 1)
    step()
    assert forks.all_reaped()


def _nothing_left_before_the_fallback(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The records of the journal in the index when the in-process read starts after a
    worker failed (a cold build: none may be left of the worker's messages)."""
    seen: list[int] = []
    read = refresher._Reader.read

    def checked(self: refresher._Reader, fh: Any) -> bool:
        if not isinstance(self.db, worker._Sink):  # in this process, not the child
            seen.append(self.db.execute("SELECT count(*) FROM records").fetchone()[0])
        return read(self, fh)

    monkeypatch.setattr(refresher._Reader, "read", checked)
    return seen


def test_a_killed_worker_leaves_nothing_and_the_read_is_done_in_process(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    forks = _Forks(monkeypatch)
    step = _both_ways(monkeypatch, tmp_path)
    write_session("kill0001-run", cwd="/a", start_ms=T0,
                  effects=[Effect(f"step {i}") for i in range(6)])
    monkeypatch.setenv("SMLLM_FAULT", worker.FAULT)  # SIGKILL after its first message
    seen = _nothing_left_before_the_fallback(monkeypatch)
    step()
    assert forks.pids
    assert seen == [0, 0]  # the in-process index's read, the worker index's fallback
    assert forks.all_reaped()


def test_a_worker_that_errs_leaves_nothing_and_the_read_is_done_in_process(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    forks = _Forks(monkeypatch)
    step = _both_ways(monkeypatch, tmp_path)
    write_session("errs0001-run", cwd="/a", start_ms=T0,
                  effects=[Effect(f"step {i}") for i in range(6)])
    send = worker._Sink.send

    def failing(self: worker._Sink, message: tuple[Any, ...]) -> None:
        if self.sent == 2:  # only the child sends: the parent has applied two messages
            raise RuntimeError("the worker broke")
        send(self, message)

    monkeypatch.setattr(worker._Sink, "send", failing)
    seen = _nothing_left_before_the_fallback(monkeypatch)
    step()
    assert forks.pids
    assert seen == [0, 0]  # the in-process index's read, the worker index's fallback
    assert forks.all_reaped()


def test_an_error_in_the_writer_stops_the_worker_and_writes_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    forks = _Forks(monkeypatch)
    monkeypatch.setattr(worker, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(refresher, "FLUSH_ROWS", 2)
    write_session("stop0001-run", cwd="/a", start_ms=T0,
                  effects=[Effect(f"step {i}") for i in range(6)])
    replay = worker._replay

    def interrupted(db: sqlite3.Connection, pipe: Any) -> tuple[Any, ...]:
        db.execute("SELECT 1")
        raise KeyboardInterrupt

    monkeypatch.setattr(worker, "_replay", interrupted)
    with pytest.raises(KeyboardInterrupt):
        index.refresh()
    assert forks.pids
    assert forks.all_reaped()
    assert _rows(database.path())["records"] == []
    monkeypatch.setattr(worker, "_replay", replay)
    assert index.refresh().records > 0


def test_a_small_read_or_a_threaded_process_stays_in_process(
        monkeypatch: pytest.MonkeyPatch) -> None:
    forks = _Forks(monkeypatch)
    write_session("small001-run", cwd="/a", start_ms=T0, effects=[Effect("ls")])
    index.refresh()
    assert forks.pids == []
    monkeypatch.setattr(worker, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(worker.threading, "active_count", lambda: 2)
    assert not worker.available()
    index.refresh(rebuild=True)
    assert forks.pids == []


@pytest.mark.parametrize(("cores", "load", "split"), [
    (2, 0.4, True), (2, 1.9, True), (2, 2.0, False), (2, 3.5, False), (4, 3.9, True),
    (1, 0.0, False)])
def test_the_read_is_split_only_with_a_core_to_spare(
        monkeypatch: pytest.MonkeyPatch, cores: int, load: float, split: bool) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    assert worker.spare_core() is split
