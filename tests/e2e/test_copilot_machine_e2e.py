"""Seed 001's ``fix`` machine drives a real Copilot session (scripted model): SessionStart
binds the Copilot session (harness ``copilot`` in the audit line), the agent enters ``fix``
with ``smllm fire`` from its own shell (``$COPILOT_AGENT_SESSION_ID`` names the session),
its first stop in TRIAGE is refused with seed 001's events text, which Copilot hands the
model as a new user turn, and the refusals end where smllm ends them: a stop after a block
without a fire goes through (the runaway rule), and a chain of blocks with fires between
them ends at smllm's own cap (4), before Copilot's (8 consecutive blocks, after which
Copilot would end the turn whatever the hook says)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from smllm.harness import copilot as adapter
from smllm.machine import engine

REPO = Path(__file__).resolve().parent.parent.parent
SEED = REPO / "tests" / "golden" / "seed001"
KEY = "sm-eoneab"


def _bash(command: str, tid: str) -> dict[str, Any]:
    return {"tool_use": {"name": "bash", "input": {"command": command, "description": tid}},
            "id": tid}


def test_fix_machine_through_copilot(copilot: Any) -> None:
    assert engine.STOP_CHAIN_CAP < adapter.STOP_BLOCK_CAP
    smllm_dir = copilot.project / ".smllm"
    smllm_dir.mkdir()
    for name in ("config.toml", "fix.smllm.yaml"):
        (smllm_dir / name).write_text((SEED / name).read_text())
    copilot.install_smllm()
    nudges = [turn for n in range(1, 5) for turn in (
        _bash(f"smllm fire not-an-event-{n}", f"toolu_nudge{n}"), {"text": f"Done ({n})."})]
    run = copilot.run("Fix BUG-7.", [
        _bash("smllm fire enter --param stateMachine=fix", "toolu_enter"),
        {"text": "I am done."},
        *nudges,
        {"text": "[never asked for]"},
    ], extra={"SMLLM_IDS": f"{KEY},i-100001"})
    assert 0 == run.returncode, run.stderr[-3000:]
    audit = [json.loads(x) for x in
             (copilot.smllm_home / "audit" / f"{KEY}.jsonl").read_text().splitlines()]
    outcomes = [(ln["call"], ln.get("event"), ln["outcome"]) for ln in audit]
    # the fire from the agent's shell found the bound session; each stop in TRIAGE was
    # refused while the agent kept firing, and the fifth, a fourth block in one chain
    # later, was let through by smllm itself
    assert [("bind", None, "accepted"), ("fire", "enter", "accepted"),
            ("stop", None, "block"),
            *[line for n in range(1, 5) for line in (
                ("fire", f"not-an-event-{n}", "refused"),
                ("stop", None, "block" if n < 4 else "runaway"))]] == outcomes
    assert ("copilot", run.session_id) == (audit[0]["binding"]["harness"],
                                          audit[0]["binding"]["hostSession"])
    assert 10 == len(run.requests), "the last scripted turn is never asked for"
    # Copilot hands each block's reason to the model as a new user turn: seed 001's text
    events_text = (SEED / "stop.txt").read_text().replace("sm-nqvfvw", KEY).replace(
        "i-419405", "i-100001")
    texts = run.user_texts()
    turns = [t for t in texts if t.startswith("<current_datetime>") and "<smllm>" in t]
    assert 4 == len(turns), turns
    assert events_text.rstrip("\n") in turns[0]
    # the binding's offer, from SessionStart, reached the model before the prompt
    assert texts[0].startswith(f"<smllm>\nsession {KEY} · idle")
    assert "Arrived by: enter (new bug)" in run.tool_results()["toolu_enter"]
