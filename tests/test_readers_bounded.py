"""Readers whose cost follows the log: the index's cold build does no per-row scans,
verify keeps state per open effect (issue 25)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from journalgen import Effect, write_session
from smllm import index
from smllm.index import database, refresher

T0 = 1_767_603_600_000  # 2026-01-05T09:00:00Z


def _plans(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every UPDATE of ``records`` the refresher runs, with SQLite's plan for it."""
    plans: list[str] = []
    connect = database.connect

    def traced():  # type: ignore[no-untyped-def]
        ctx = connect()
        db = ctx.__enter__()

        def trace(sql: str) -> None:
            if sql.lstrip().upper().startswith("UPDATE RECORDS"):
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


def test_a_build_keeps_state_per_open_effect_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """After reading a log of many effects, a few of them still open, the reader holds the
    open ones only (their intents, and which of those a flush already wrote), and a bounded
    cache of the seconds it has seen: nothing that grows with the log's closed effects."""
    monkeypatch.setattr(refresher, "FLUSH_ROWS", 7)
    effects = [Effect(f"step {i}", outcome=None if i in (5, 311, 398) else "succeeded")
               for i in range(400)]
    path = write_session("state0001-run", cwd="/w", start_ms=T0, effects=effects, end=None)
    with database.connect() as db:
        db.execute("BEGIN IMMEDIATE")
        reader = refresher._Reader(db, refresher._Journal(path, "state0001-run", "main"))
        with open(path, "rb") as fh:
            assert reader.read(fh)
        db.execute("COMMIT")
    expected = ({f"toolu_state000_{i}" for i in (5, 311, 398)}, True, True)
    assert expected == (set(reader.intents), reader.written <= set(reader.intents),
                        len(reader.seconds) <= 4096)


def test_a_build_leaves_the_collector_as_it_found_it() -> None:
    """The refresh turns Python's cycle collector off while it reads (its records make no
    cycles) and back on after, and leaves it off when it was off."""
    import gc

    write_session("gc000001-run", cwd="/w", start_ms=T0, effects=[Effect("ls")])
    index.refresh()
    assert gc.isenabled()
    write_session("gc000002-run", cwd="/w", start_ms=T0 + 5000, effects=[Effect("ls")])
    gc.disable()
    try:
        index.refresh()
        assert not gc.isenabled()
    finally:
        gc.enable()


_AT = st.lists(st.sampled_from(list("0123456789-T:.Z _+x")), min_size=0, max_size=4).map("".join)


@given(st.integers(0, 2**41), st.integers(0, 23), _AT)
def test_the_seconds_cache_reads_times_as_parse_iso_ms(ms: int, cut: int, noise: str) -> None:
    """The build's clock reading (each second's part remembered) gives what parse_iso_ms
    gives, for the journal's own timestamps and for mangled ones."""
    from smllm.base import clock

    reader = refresher._Reader.__new__(refresher._Reader)
    reader.seconds = {}
    text = clock.iso_utc(ms)
    for at in (text, text[:cut] + noise + text[cut + len(noise):], text[:cut] + noise):
        assert clock.parse_iso_ms(at) == reader.ms(at)
        assert clock.parse_iso_ms(at) == reader.ms(at)  # from the cache


def test_verify_keeps_state_per_open_effect_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """verify's one pass over a log of 300 effects, two still open, holds those two and a
    window of recent intents (its size patched to 8 here), whatever the log's length; the
    log is sound, so its filters raise no candidate for a second pass."""
    from smllm.journal import verify as verify_mod

    monkeypatch.setattr(verify_mod, "RECENT_INTENTS", 8)
    seen: list[verify_mod._Checker] = []

    class Kept(verify_mod._Checker):
        def __init__(self, report: verify_mod.Report) -> None:
            super().__init__(report)
            seen.append(self)

    monkeypatch.setattr(verify_mod, "_Checker", Kept)
    effects = [Effect(f"step {i}", outcome=None if i in (17, 250) else "succeeded")
               for i in range(300)]
    path = write_session("vstate01-run", cwd="/w", start_ms=T0, effects=effects, end=None)
    report = verify_mod.verify(Path(path))
    checker = seen[0]
    expected = ({"toolu_vstate01_17", "toolu_vstate01_250"}, True, {}, {}, [])
    assert expected == (set(checker.open), len(checker.intents) <= 8,
                        checker.key_candidates, checker.start_candidates, report.problems)
