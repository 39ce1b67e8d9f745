"""A Gemini CLI session killed while a tool runs, then resumed (``gemini -p … --resume
latest``, the same session id): SessionStart ``resume`` infers the crash, the call whose
outcome nobody saw is **unknown**, and its re-attempt is held until a person reconciles
it; the journal still verifies."""

from __future__ import annotations

import time
from typing import Any

from gemini_harness import fields

from smllm import journal


def test_a_crashed_session_resumes_with_its_unknown_effect_held(gemini: Any) -> None:
    gemini.install_smllm()
    sleep = {"shell": "sleep 120", "call_id": "c_sleep"}

    seen: list[float] = []

    def running() -> bool:
        """The intent is durable (and Gemini then runs the command): two seconds later,
        the sleep is under way, and nobody will see it end."""
        logs = list(gemini.smllm_home.glob("sessions/*/*/*/*/session.jsonl"))
        if not seen and logs and b"side_effect_intent" in logs[0].read_bytes():
            seen.append(time.monotonic())
        return bool(seen) and time.monotonic() - seen[0] > 2

    crashed = gemini.run("go", [sleep, {"text": "never"}], kill_when=running)
    assert not crashed.ended, "killed while its tool ran"
    (log,) = gemini.smllm_home.glob("sessions/*/*/*/*/session.jsonl")
    session = log.parent.name
    resumed = gemini.run("continue", [sleep, {"text": "held, as I should be"}],
                         args=["--resume", "latest"])
    assert (True, 0) == (resumed.ended, resumed.returncode), resumed.stderr[-3000:]
    recs = list(journal.iter_records(log))
    kinds = [journal.kind_of(r) for r in recs]
    ends = [fields(r) for r in recs if journal.kind_of(r) == "session.end"]
    assert ["crash_inferred", "clean"] == [e["exit_reason"] for e in ends]
    (back,) = [fields(r) for r in recs if journal.kind_of(r) == "session.resumed"]
    intents = [(r["sequence"], fields(r)) for r in recs
               if journal.kind_of(r) == "side_effect_intent"]
    assert (True, [intents[0][0]]) == (back["crash_inferred"], back["unknown_effects"])
    assert ("deny:reconcile", "reconcile.unknown-effect") == (
        intents[1][1]["policy_decision"], intents[1][1]["rule"])
    assert "tool_batch.effect.started" not in kinds  # Gemini decided: no start was seen
    assert "unknown" in resumed.tool_outputs()["c_sleep"]
    verify = gemini.smllm("verify", session)
    assert 0 == verify.returncode, verify.stdout + verify.stderr
