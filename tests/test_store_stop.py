"""With a team store configured, every Stop ships (issue 19: the outside anchor is minutes
old, not a day), from a detached shipper the hook never waits on. Real PostgreSQL."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from typing import Any

from test_store import Dev, team  # noqa: F401 - team: the store fixture

SID = "a-stops"


def _stored(team: dict[str, Any],  # noqa: F811 - not the fixture
            conn: Any = None) -> list[tuple[int, str]]:
    if conn is None:
        with team["server"].connect(team["db"]) as own:
            return _stored(team, own)
    rows = conn.execute("SELECT sequence, kind FROM smllm.records WHERE session_id = %s "
                        "ORDER BY sequence", (SID,)).fetchall()
    return [(int(seq), str(kind)) for seq, kind in rows]


def _until(check: Any, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def _waiting_on_records(conn: Any) -> bool:
    """A backend (the shipper) waits for a lock on smllm.records."""
    row = conn.execute("SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = "
                       "'smllm.records'::regclass").fetchone()
    return bool(row and row[0])


def _shipper_done(dev: Dev) -> bool:
    """The detached shipper has let go of its lock (it ends by itself)."""
    fd = os.open(Path(dev.env["SMLLM_HOME"]) / "locks" / "ship.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def test_every_stop_ships_and_the_hook_does_not_wait(
        team: dict[str, Any]) -> None:  # noqa: F811 - the fixture
    """Two turns, no SessionEnd: each Stop starts the detached shipper and answers at once.
    While smllm.records is locked against writes, the Stop hook has answered and the shipper
    waits on the lock with nothing stored; once the lock goes, the turn's records (its
    `completed` included) are in the store, and the second Stop ships the second turn."""
    alice = team["alice"]
    alice.env["SMLLM_STORE_URL"] = alice.url
    alice.hook("SessionStart", SID, source="startup")
    alice.hook("UserPromptSubmit", SID, prompt="first")
    with team["server"].connect(team["db"]) as blocker, team["server"].connect(
            team["db"]) as watch:
        blocker.execute("BEGIN")
        watch.execute("SET statement_timeout = '30s'")  # never hang the run on a mistake
        # SHARE: reads go on, the shipper's COPY or INSERT waits for the lock
        blocker.execute("LOCK TABLE smllm.records IN SHARE MODE")
        stop = alice.hook("Stop", SID, stop_hook_active=False)
        answered = (stop.returncode, stop.stdout)
        _until(lambda: _waiting_on_records(watch), "the shipper to wait on the store")
        while_blocked = _stored(team, watch)
        blocker.execute("ROLLBACK")
    _until(lambda: len(_stored(team)) == 4, "the first turn in the store")
    first = _stored(team)
    _until(lambda: _shipper_done(alice), "the first shipper to end")
    alice.hook("UserPromptSubmit", SID, prompt="second")
    second_stop = alice.hook("Stop", SID, stop_hook_active=False)
    _until(lambda: len(_stored(team)) == 7, "the second turn in the store")
    _until(lambda: _shipper_done(alice), "the second shipper to end")
    assert ((0, b""), [], [(1, "session.start"), (2, "proposed"), (3, "accepted"),
                           (4, "completed")],
            (0, b""), [(5, "proposed"), (6, "accepted"), (7, "completed")]) == (
        answered, while_blocked, first, (second_stop.returncode, second_stop.stdout),
        _stored(team)[4:])
