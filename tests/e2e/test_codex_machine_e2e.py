"""The ``fix`` state machine drives a real Codex session (scripted model), with the sandbox
profile smllm installs in force (smllm's store read-only to the agent's commands):
SessionStart binds the Codex thread (harness ``codex`` in the audit line), the agent enters
``fix`` with ``smllm fire`` from Codex's shell, which smllm's PreToolUse hook runs itself
outside the sandbox (the session found from the thread) and answers with the fire's output,
its first stop in TRIAGE is refused with the events text, which Codex hands the model, and
a second stop without a fire is let through by the runaway rule (Codex itself has no cap)."""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent.parent
SEED = REPO / "tests" / "golden" / "seed001"
KEY = "sm-eoneab"


def _audit(codex: Any) -> list[dict[str, Any]]:
    path = codex.smllm_home / "audit" / f"{KEY}.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_fix_machine_through_codex(codex: Any) -> None:
    smllm_dir = codex.project / ".smllm"
    smllm_dir.mkdir()
    for name in ("config.toml", "fix.smllm.yaml"):
        (smllm_dir / name).write_text((SEED / name).read_text())
    # yolo: the gate lets the store probe below run, so that only the sandbox stops it
    (smllm_dir / "policy.toml").write_text('mode = "yolo"\n')
    codex.write_config(sandbox_mode=None)  # no sandbox chosen here: smllm's profile decides
    codex.install_smllm()
    assert 'default_permissions = "smllm"' in (codex.project / ".codex" / "config.toml"
                                               ).read_text()
    store = base64.b64encode(str(codex.smllm_home).encode()).decode()
    probe = f"s=$(echo {store} | base64 -d); echo y > $s/probe; echo rc=$?"
    run = codex.run("Fix BUG-7.", [
        {"shell": probe, "call_id": "c_probe"},
        {"shell": "smllm fire enter --param stateMachine=fix", "call_id": "c_enter"},
        {"text": "I am done."},
        {"text": "Stopping anyway."},
    ], extra={"SMLLM_IDS": f"{KEY},i-100001"})
    assert 0 == run.returncode, run.stderr[-3000:]
    audit = _audit(codex)
    assert [("bind", None, "accepted"), ("fire", "enter", "accepted"),
            ("stop", None, "block"), ("stop", None, "runaway")] == [
        (ln["call"], ln["event"], ln["outcome"]) for ln in audit]
    assert ("codex", run.thread_id) == (audit[0]["binding"]["harness"],
                                        audit[0]["binding"]["hostSession"])
    events_text = (SEED / "stop.txt").read_text().replace("sm-nqvfvw", KEY).replace(
        "i-419405", "i-100001")
    assert "rc=1" in run.tool_outputs()["c_probe"], "the sandbox keeps the store read-only"
    assert not (codex.smllm_home / "probe").exists()
    assert 4 == len(run.requests), "one block only: the second stop was let through"
    # Codex hands the block reason to the model as a user message, the text escaped
    prompts = [html.unescape(part["text"]) for item in run.requests[-1]["input"]
               if item.get("role") == "user" for part in item.get("content") or []
               if "<hook_prompt" in str(part.get("text"))]
    assert 1 == len(prompts), prompts
    assert events_text.rstrip("\n") in prompts[0]
    entered = run.tool_outputs()["c_enter"]
    assert "smllm ran this command itself, from its Codex hook" in entered
    assert "Arrived by: enter (new bug)" in entered
    journal = codex.smllm("export", "--journal", run.thread_id, "--out", "/dev/stdout")
    assert 0 == journal.returncode, journal.stderr
    about = [d for d in _dicts(json.loads(journal.stdout)) if d.get("tool_use_id") == "c_enter"]
    # the journal: the gate's decision under rule machine.fire-in-hook, the fire run by smllm
    assert [("allow:policy", "machine.fire-in-hook")] == [
        (d["policy_decision"], d["rule"]) for d in about if "policy_decision" in d]
    assert [("succeeded", "accepted", "smllm")] == [
        (d["outcome"], d["fire"], d["ran_by"]) for d in about if "outcome" in d]


def _dicts(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, dict):
        return [value, *(d for v in value.values() for d in _dicts(v))]
    if isinstance(value, list):
        return [d for v in value for d in _dicts(v)]
    return []
