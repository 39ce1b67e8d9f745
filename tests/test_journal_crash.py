"""SIGKILL at each step of a hook's write path leaves a log every reader accepts."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from helpers import base, hook, kind, records, smllm
from smllm import journal
from smllm.base import faults
from smllm.journal.verify import verify

SID = "c7dfaecc-adf6-4348-87df-95576e15136e"


def _pre(tool_use_id: str) -> dict[str, object]:
    # bypassPermissions: smllm's allow is authoritative, so PreToolUse writes the intent and
    # its start (a call left to Claude Code would get its start only once it is authorized)
    return base("PreToolUse", SID, tool_name="Bash", tool_input={"command": f"echo {tool_use_id}"},
                tool_use_id=tool_use_id, permission_mode="bypassPermissions")


@pytest.mark.parametrize("point", faults.POINTS)
def test_kill_at_each_write_step(point: str) -> None:
    """Killed at ``point``: earlier records intact, torn line counted, next append on a new line."""
    assert hook("SessionStart", base("SessionStart", SID, source="startup")).returncode == 0
    assert hook("PreToolUse", _pre("toolu_a")).returncode == 0
    path = journal.log_path(SID)
    before = path.read_bytes()

    killed = hook("PreToolUse", _pre("toolu_b"), env={"SMLLM_FAULT": point})
    assert -signal.SIGKILL == killed.returncode

    after_kill = path.read_bytes()
    assert after_kill.startswith(before)  # no earlier durable record lost or changed
    lines = list(journal.iter_lines(path))
    torn = [ln for ln in lines if ln.status == "torn"]
    assert (1 if point == "mid-write" else 0) == len(torn)
    report = verify(path)
    assert report.ok, report.problems
    assert len(torn) == report.torn

    assert hook("PreToolUse", _pre("toolu_c")).returncode == 0
    report = verify(path)
    assert report.ok, report.problems
    assert 0 == report.torn
    recs = records(SID)
    assert list(range(1, len(recs) + 1)) == [r["sequence"] for r in recs]
    assert recs[-2]["payload"]["event"]["tool_use_id"] == "toolu_c"
    assert ["side_effect_intent", "tool_batch.effect.started"] == [kind(r) for r in recs[-2:]]
    raw_lines = path.read_bytes().split(b"\n")
    assert raw_lines[-1] == b""  # ends on a newline
    last_intent = raw_lines[-3]
    assert json.loads(last_intent)["payload"]["event"]["tool_use_id"] == "toolu_c"
    if point == "mid-write":
        assert 1 == recs[-2]["skipped"]
        assert 1 == report.repaired
    # every reader accepts it: the CLI too
    proc = smllm("verify", SID)
    assert 0 == proc.returncode, proc.stdout + proc.stderr


def test_torn_tail_without_newline_is_repaired_by_next_writer(tmp_path: Path) -> None:
    """A fragment with no newline is skipped, declared by the next record, and verify passes."""
    log = tmp_path / "session.jsonl"
    journal.append(log, [journal.event("one")])
    with open(log, "ab") as fh:
        fh.write(b'{"sequence":2,"recorded_at":"20')
    assert [("record", 1), ("torn", 2)] == [(ln.status, ln.number) for ln in journal.iter_lines(log)]
    journal.append(log, [journal.event("two")])
    recs = list(journal.iter_records(log))
    assert [1, 2] == [r["sequence"] for r in recs]
    assert 1 == recs[1]["skipped"]
    report = verify(log)
    assert (True, 1) == (report.ok, report.repaired)
