"""Seed 001's ``fix`` state machine drives a real Gemini CLI session (scripted model), with
Gemini's tool sandbox on as install sets it (smllm's store out of the agent's reach):
SessionStart binds the Gemini session (harness ``gemini`` in the audit line), the agent
enters ``fix`` with ``smllm fire`` from Gemini's shell, which smllm's BeforeTool hook runs
itself outside the sandbox, its first stop in TRIAGE is refused with the events text,
which Gemini hands the model as its next prompt, and the second stop in a row without a
fire is let through by the machine's runaway rule. Gemini CLI sets no cap on AfterAgent
blocks: without that rule the loop would not end, so the run must end by itself, before
the script's spare turns are asked for."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gemini_harness import dicts

REPO = Path(__file__).resolve().parent.parent.parent
SEED = REPO / "tests" / "golden" / "seed001"
KEY = "sm-eoneab"


def _audit(gemini: Any) -> list[dict[str, Any]]:
    path = gemini.smllm_home / "audit" / f"{KEY}.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_fix_machine_refuses_an_early_stop_and_the_runaway_rule_ends_the_loop(gemini: Any
                                                                              ) -> None:
    smllm_dir = gemini.project / ".smllm"
    smllm_dir.mkdir()
    for name in ("config.toml", "fix.smllm.yaml"):
        (smllm_dir / name).write_text((SEED / name).read_text())
    gemini.install_smllm()
    spare = [{"text": f"spare turn {n}: the loop went on"} for n in range(3)]
    run = gemini.run("Fix BUG-7.", [
        {"shell": f"smllm fire --session {KEY} enter --param stateMachine=fix",
         "call_id": "c_enter"},
        {"text": "I am done."},
        {"text": "Stopping anyway."},
        *spare,
    ], extra={"SMLLM_IDS": f"{KEY},i-100001"})
    assert (True, 0) == (run.ended, run.returncode), run.stderr[-3000:]
    audit = _audit(gemini)
    assert [("bind", None, "accepted"), ("fire", "enter", "accepted"),
            ("stop", None, "block"), ("stop", None, "runaway")] == [
        (ln["call"], ln["event"], ln["outcome"]) for ln in audit]
    assert ("gemini", run.session_id, "bash") == (
        audit[0]["binding"]["harness"], audit[0]["binding"]["hostSession"],
        audit[0]["binding"]["channel"])
    assert 3 == len(run.requests), "one block only: the second stop was let through"
    # Gemini hands the block reason to the model as the next user turn: the seed's text,
    # with the way to fire that works on Gemini (smllm fire, run by smllm's hook)
    events_text = (SEED / "stop.txt").read_text().replace("sm-nqvfvw", KEY).replace(
        "i-419405", "i-100001").replace(
        f'Fire one event: smllm({{ session: "{KEY}", event, params }})',
        f"Fire one event: smllm fire --session {KEY} EVENT [--param NAME=VALUE]...")
    assert events_text.rstrip("\n") in "\n".join(run.user_texts())
    # SessionStart's location text comes before the prompt, Gemini escaping its tags
    first = json.dumps(run.requests[0]["contents"])
    assert f"&lt;smllm&gt;\\nsession {KEY}" in first, first[:3000]
    entered = run.tool_outputs()["c_enter"]
    assert "smllm ran this command itself, from its Gemini CLI hook" in entered
    assert "Arrived by: enter (new bug)" in entered
    journal = gemini.smllm("export", "--journal", run.session_id, "--out", "/dev/stdout")
    assert 0 == journal.returncode, journal.stderr
    doc = json.loads(journal.stdout)
    about = [d for d in dicts(doc) if d.get("tool_name") == "Bash" or d.get("ran_by")]
    assert [("allow:policy", "machine.fire-in-hook")] == [
        (d["policy_decision"], d["rule"]) for d in about if "policy_decision" in d]
    assert [("succeeded", "accepted", "smllm")] == [
        (d["outcome"], d["fire"], d["ran_by"]) for d in about if "outcome" in d]
    kinds = [d.get("kind") for d in dicts(doc) if d.get("kind") in ("stop_blocked",
                                                                        "completed")]
    assert ["stop_blocked", "completed"] == kinds

