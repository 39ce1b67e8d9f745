"""Hook payloads as Claude Code 2.1.332 sends them produce product.md §4's records in order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers import hook, hook_output, kind, records

FIXTURES = Path(__file__).parent / "fixtures" / "payloads"


def _replay(name: str) -> tuple[str, list[Any]]:
    flow = json.loads((FIXTURES / name).read_text())
    outputs = []
    for event, payload in flow:
        proc = hook(event, payload)
        assert proc.returncode == 0, proc.stderr.decode()
        assert b"Traceback" not in proc.stderr, proc.stderr.decode()
        outputs.append(hook_output(proc))
    return flow[0][1]["session_id"], outputs


def test_startup_prompt_three_tools_stop_end() -> None:
    """startup → prompt → three tool calls (one failing) → stop → end, in order."""
    sid, _ = _replay("session_basic.json")
    recs = records(sid)
    expected = [
        "session.start", "proposed", "accepted",
        "side_effect_intent", "tool_batch.effect.started", "tool_batch.effect.terminal",
        "side_effect_intent", "tool_batch.effect.started", "tool_batch.effect.terminal",
        "side_effect_intent", "tool_batch.effect.started", "tool_batch.effect.terminal",
        "completed", "session.end",
    ]
    assert expected == [kind(r) for r in recs]
    assert list(range(1, len(recs) + 1)) == [r["sequence"] for r in recs]
    terminals = [r["payload"]["record"] for r in recs if kind(r) == "tool_batch.effect.terminal"]
    assert ["succeeded", "succeeded", "failed"] == [t["outcome"] for t in terminals]
    assert "Exit code 3\nboom" == terminals[2]["error"]
    intents = [r["payload"]["event"] for r in recs if kind(r) == "side_effect_intent"]
    assert ["tool:bash", "tool:write", "tool:bash"] == [i["operation"] for i in intents]
    assert [i["idempotency_key"] for i in intents] == [t["idempotency_key"] for t in terminals]
    assert [r["sequence"] for r in recs if kind(r) == "side_effect_intent"] == [
        t["intent_sequence"] for t in terminals
    ]
    end = recs[-1]["payload"]["record"]
    assert ("clean", "other") == (end["exit_reason"], end["host_reason"])
    assert 1 == recs[2]["payload"]["event"]["turn"]


def test_resume_after_kill_infers_crash_and_reports_unknown_effect() -> None:
    """A resume with no SessionEnd before it: crash_inferred, session.resumed, unknown effect."""
    sid, outputs = _replay("session_crash_resume.json")
    recs = records(sid)
    # the call is Claude Code's to decide (defer:host): no start before its authorization
    # is known, and an intent with no outcome is unknown all the same
    expected = [
        "session.start", "proposed", "accepted", "side_effect_intent",
        "session.end", "session.resumed", "proposed", "accepted",
    ]
    assert expected == [kind(r) for r in recs]
    end = recs[4]["payload"]["record"]
    assert "crash_inferred" == end["exit_reason"]
    resumed = recs[5]["payload"]["record"]
    assert 1 == resumed["prior_turn_count"]
    assert 5 == resumed["resumed_from_sequence"]
    assert [4] == resumed["unknown_effects"]
    context = outputs[3]["hookSpecificOutput"]["additionalContext"]
    assert "UNKNOWN" in context
    assert "sequence 4: tool:bash echo hi > a.txt" in context
    assert 2 == recs[-1]["payload"]["event"]["turn"]


def test_orderly_end_then_resume_is_not_a_crash() -> None:
    """A resume after an orderly SessionEnd records session.resumed without crash_inferred."""
    flow = json.loads((FIXTURES / "session_basic.json").read_text())
    for event, payload in flow:
        hook(event, payload)
    resume = dict(flow[0][1], source="resume")
    proc = hook("SessionStart", resume)
    assert hook_output(proc) is None
    recs = records(resume["session_id"])
    assert ["session.end", "session.resumed"] == [kind(r) for r in recs[-2:]]
    assert "clean" == recs[-2]["payload"]["record"]["exit_reason"]
    assert [] == recs[-1]["payload"]["record"]["unknown_effects"]


def test_lost_sidecar_is_rebuilt_from_the_log() -> None:
    """With state.json deleted, a resume still finds the turn count and the open intent."""
    flow = json.loads((FIXTURES / "session_crash_resume.json").read_text())
    for event, payload in flow[:3]:
        hook(event, payload)
    sid = flow[0][1]["session_id"]
    from smllm import journal

    (journal.log_path(sid).parent / journal.STATE_NAME).unlink()
    out = hook_output(hook(*flow[3]))
    assert out is not None
    assert "sequence 4: tool:bash echo hi > a.txt" in out["hookSpecificOutput"]["additionalContext"]
    resumed = next(r for r in records(sid) if kind(r) == "session.resumed")["payload"]["record"]
    assert (1, [4]) == (resumed["prior_turn_count"], resumed["unknown_effects"])
