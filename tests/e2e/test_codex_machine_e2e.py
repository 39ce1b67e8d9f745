"""The ``fix`` state machine drives a real Codex session (scripted model): SessionStart
binds the Codex thread (harness ``codex`` in the audit line), the agent enters ``fix`` with
``smllm fire`` from Codex's shell (the session found from ``$CODEX_THREAD_ID``), its first
stop in TRIAGE is refused with the events text, which Codex hands the model, and a second
stop without a fire is let through by the runaway rule (Codex itself has no cap)."""

from __future__ import annotations

import html
import json
import sys
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
    # Codex runs commands in a login shell, which resets PATH: the user's profile puts
    # smllm back on it, as a user's own profile would
    (codex.home / ".profile").write_text(f'export PATH="{Path(sys.executable).parent}:$PATH"\n')
    # the agent runs smllm fire from its shell, which writes smllm's store: without the
    # permission profile that keeps that store read-only to commands (as on Claude Code)
    codex.install_smllm("--no-sandbox")
    run = codex.run("Fix BUG-7.", [
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
    assert 3 == len(run.requests), "one block only: the second stop was let through"
    # Codex hands the block reason to the model as a user message, the text escaped
    prompts = [html.unescape(part["text"]) for item in run.requests[-1]["input"]
               if item.get("role") == "user" for part in item.get("content") or []
               if "<hook_prompt" in str(part.get("text"))]
    assert 1 == len(prompts), prompts
    assert events_text.rstrip("\n") in prompts[0]
    assert "Arrived by: enter (new bug)" in run.tool_outputs()["c_enter"]
