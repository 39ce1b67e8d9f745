"""Journal round trips and envelope, including property tests over arbitrary payloads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from smllm import journal
from smllm.base.errors import InvalidSessionId
from smllm.journal.verify import verify

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=50)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=60, deadline=None)
@given(payloads=st.lists(st.dictionaries(st.text(max_size=10), json_values, max_size=5),
                         min_size=1, max_size=5))
def test_write_read_round_trip(tmp_path_factory: Any, payloads: list[dict[str, Any]]) -> None:
    """Whatever JSON is appended reads back equal, in order, and verifies."""
    path = tmp_path_factory.mktemp("j") / "session.jsonl"
    journal.append(path, [journal.event("any", data=p) for p in payloads])
    recs = list(journal.iter_records(path))
    assert payloads == [r["payload"]["event"]["data"] for r in recs]
    assert verify(path).ok


def test_envelope_fields(tmp_path: Path, monkeypatch: Any) -> None:
    """Each line carries seed 000's envelope plus the integrity fields, in a stable order."""
    monkeypatch.setenv("SMLLM_NOW", "1767603600000")
    path = tmp_path / "session.jsonl"
    journal.append(path, [journal.fact("approval_wait.effect.started", {"pending_action_id": "p1"})])
    rec = json.loads(path.read_bytes())
    assert ["sequence", "recorded_at", "record_type", "durability", "payload_type", "payload",
            "id", "causation_id", "v", "prev", "hash"] == list(rec)
    assert (1, "2026-01-05T09:00:00.000Z", "fact", "durable", "approval_wait.effect.started") == (
        rec["sequence"], rec["recorded_at"], rec["record_type"], rec["durability"],
        rec["payload_type"])
    assert {"kind": "approval_wait_effect_started", "record": {"pending_action_id": "p1"}} == \
        rec["payload"]


def test_large_strings_become_omitted_markers(tmp_path: Path) -> None:
    """An output over the limit is replaced by its size and sha256."""
    big = "y" * (journal.STRING_LIMIT + 1)
    path = tmp_path / "session.jsonl"
    journal.append(path, [journal.fact("tool_batch.effect.terminal", {"output": {"stdout": big}})])
    rec = next(journal.iter_records(path))
    marker = rec["payload"]["record"]["output"]["stdout"]
    import hashlib

    assert {"omitted_live_only": {"bytes": len(big),
                                  "sha256": "sha256:" + hashlib.sha256(big.encode()).hexdigest()}} \
        == marker
    assert path.stat().st_size < 2000


@pytest.mark.parametrize(("stream", "agent"), [
    ("main", None),
    ("subagent/a1b2c3", "a1b2c3"),
    ("subagent/../../other", "error"),
    ("subagent/", "error"),
    ("notes/a1b2c3", "error"),
    ("", "error"),
])
def test_stream_agent(stream: str, agent: str | None) -> None:
    """A stream name names the main log or one subagent's (its id checked like any id);
    anything else, as a stored row may hold, is refused."""
    try:
        found = journal.stream_agent(stream)
    except InvalidSessionId:
        found = "error"
    assert agent == found
