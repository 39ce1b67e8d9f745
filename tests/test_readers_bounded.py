"""Readers whose cost follows the log: the index's cold build does no per-row scans,
verify keeps state per open effect (issue 25)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from journalgen import Effect, write_session
from smllm import index
from smllm.index import database, refresher

T0 = 1_767_603_600_000  # 2026-01-05T09:00:00Z


def _plans(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every UPDATE the refresher runs, with SQLite's plan for it."""
    plans: list[str] = []
    connect = database.connect

    def traced():  # type: ignore[no-untyped-def]
        ctx = connect()
        db = ctx.__enter__()

        def trace(sql: str) -> None:
            if sql.lstrip().upper().startswith("UPDATE"):
                plan = sqlite3.connect(database.path()).execute(
                    f"EXPLAIN QUERY PLAN {sql}").fetchall()
                plans.append(" | ".join(str(row[-1]) for row in plan))

        db.set_trace_callback(trace)
        return _Ctx(ctx, db)

    monkeypatch.setattr(database, "connect", traced)
    return plans


class _Ctx:
    def __init__(self, ctx: object, db: sqlite3.Connection) -> None:
        self.ctx, self.db = ctx, db

    def __enter__(self) -> sqlite3.Connection:
        return self.db

    def __exit__(self, *exc: object) -> None:
        self.ctx.__exit__(*exc)  # type: ignore[attr-defined]


@pytest.mark.parametrize("flush_rows", [2, 4, 5])
def test_effects_closed_across_a_flush_update_by_key(monkeypatch: pytest.MonkeyPatch,
                                                    flush_rows: int) -> None:
    """An intent written by one flush and closed by a terminal in the next is updated by
    its primary key, not by a walk over the session's records (the scans made the cold build grow
    faster than the log: 12.7x the time for 10x the records); the outcome is still right."""
    monkeypatch.setattr(refresher, "FLUSH_ROWS", flush_rows)
    write_session("flush0001-run", cwd="/w", start_ms=T0,
                  effects=[Effect(f"step {i}", outcome="failed" if i == 3 else "succeeded")
                           for i in range(8)])
    plans = _plans(monkeypatch)
    index.refresh()
    hits = index.search(index.Filters(kind="side_effect_intent"), fresh=False)
    assert (8, {"failed": 1, "succeeded": 7}) == (
        len(hits), {o: sum(h.outcome == o for h in hits) for o in ("failed", "succeeded")})
    assert plans, "no intent was closed across a flush: the test does not test anything"
    assert [p for p in plans if "sequence=?" not in p] == []  # one row, not the session


def test_an_effect_closed_in_a_later_refresh_is_found_by_the_intent_index(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A terminal appended after the refresh that indexed its intent updates that intent
    through the records_intent index (a literal kind, which the partial index needs)."""
    path = write_session("late0001-run", cwd="/w", start_ms=T0,
                         effects=[Effect("make", outcome=None)], end=None)
    index.refresh()
    from journalgen import append
    from smllm import journal
    from smllm.journal import sidecar

    tid = "toolu_late0001_0"
    append(path, [journal.fact("tool_batch.effect.terminal", {
        "tool_use_id": tid, "idempotency_key": sidecar.idempotency_key("late0001-run", tid),
        "intent_sequence": 4, "operation": "tool:bash", "outcome": "succeeded",
        "observed_via": "hook", "authorized_by": "allow:policy"})], T0 + 10_000)
    plans = _plans(monkeypatch)
    index.refresh()
    hits = index.search(index.Filters(kind="side_effect_intent"), fresh=False)
    assert ["succeeded"] == [h.outcome for h in hits]
    assert len(plans) == 1
    assert "records_intent" in plans[0], plans


def test_cold_build_leaves_every_secondary_index(tmp_path: Path) -> None:
    """The cold build drops the records indexes while it writes and creates them again."""
    write_session("cold0001-run", cwd="/w", start_ms=T0, effects=[Effect("ls")])
    index.refresh()
    names = {r[0] for r in sqlite3.connect(database.path()).execute(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'records' "
        "AND name NOT LIKE 'sqlite_%'")}
    assert {n for n, _ in database.RECORD_INDEXES} == names
