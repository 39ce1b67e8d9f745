"""smllm chain: seed 000's approval evidence chain, threaded by pending_action_id."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers import base, hook, smllm
from smllm import journal

FIXTURES = Path(__file__).parent / "fixtures" / "sessions" / "billing"
BILLING_ID = "c7dfaecc-adf6-4348-87df-95576e15136e"
DIGEST = "sha256:092e6c9694355f789a98a62f46a292c225af4ec3a183735fbe02ac3146597e86"


@pytest.fixture
def trajectory(tmp_path: Path) -> Path:
    log = tmp_path / BILLING_ID / "session.jsonl"
    log.parent.mkdir()
    shutil.copyfile(FIXTURES / BILLING_ID / "session.jsonl", log)
    out = tmp_path / "trajectory.json"
    expected = 0
    assert expected == smllm("export", "--journal", str(log), "--out", str(out)).returncode
    return out


def test_chain_is_the_golden_file(trajectory: Path) -> None:
    """The chain of the billing session matches the reviewed golden file."""
    proc = smllm("chain", str(trajectory))
    assert (0, (FIXTURES / "chain.txt").read_text()) == (proc.returncode, proc.stdout)


def test_chain_reads_requested_wait_decision_intent_started(trajectory: Path) -> None:
    """Sequence and step of each link, in seed 000's order, with the authorizer named."""
    lines = smllm("chain", str(trajectory), "--action", "pa-7f3e2c1d9b").stdout.splitlines()
    steps = [(int(ln.split()[0]), ln.split()[3]) for ln in lines[1:]]
    decision = next(ln for ln in lines if " decision " in ln)
    expected = ([(193, "requested"), (194, "wait"), (195, "resolved"), (196, "decision"),
                 (197, "discharged"), (200, "intent"), (201, "started"), (202, "result")],
                True, True)
    assert expected == (steps, "by llm_judge  prompt_version=1  params_version=2" in decision,
                        decision.endswith(f"context_digest={DIGEST}"))


def test_unknown_action_lists_the_known_ones(trajectory: Path) -> None:
    """--action with an id not in the export names the ids that are."""
    proc = smllm("chain", str(trajectory), "--action", "pa-nope")
    expected = (1, f"smllm: error: no approval chain 'pa-nope' in {trajectory} "
                   "(pending_action_ids in this export: pa-7f3e2c1d9b)\n")
    assert expected == (proc.returncode, proc.stderr)


def test_export_without_approvals_says_so(tmp_path: Path) -> None:
    """An export with no approval records gets seed 000's explanation, not an empty chain."""
    log = tmp_path / "sid-plain" / "session.jsonl"
    log.parent.mkdir()
    journal.append(log, [journal.fact("session.start", {"session_id": "sid-plain"})])
    out = tmp_path / "t.json"
    smllm("export", "--journal", str(log), "--out", str(out))
    proc = smllm("chain", str(out))
    expected = (1, f"smllm: error: no approval records in {out} (every action passed by static "
                   "policy or approvals were off (yolo); give the model an action the policy "
                   "escalates, such as rm -rf on a file)\n")
    assert expected == (proc.returncode, proc.stderr)


def test_chain_of_a_real_escalation_through_the_hooks(tmp_path: Path) -> None:
    """The gate's own records (rm -rf escalated to Claude Code's prompt) thread into one chain."""
    sid = "12345678-1c2d-4e5f-8a9b-0c1d2e3f4a5b"
    rm = {"command": "rm -rf stale_cache.txt"}
    extra = {"cwd": str(tmp_path), "tool_name": "Bash", "tool_input": rm}
    hook("SessionStart", base("SessionStart", sid, cwd=str(tmp_path), source="startup"))
    hook("PreToolUse", base("PreToolUse", sid, tool_use_id="t1", **extra))
    hook("PermissionRequest", base("PermissionRequest", sid, **extra))
    hook("PostToolUse", base("PostToolUse", sid, tool_use_id="t1", tool_response={}, **extra))
    out = tmp_path / "t.json"
    smllm("export", "--journal", sid, "--out", str(out))
    lines = smllm("chain", str(out)).stdout.splitlines()
    steps = [ln.split()[3] for ln in lines[1:]]
    decision = next(ln for ln in lines if " decision " in ln)
    # ask:user: the gate's chain, the intent, Claude Code's prompt, its answer (inferred from
    # the call running), and only then the start (journal/hostcall.py)
    expected = (["requested", "wait", "resolved", "intent", "requested", "decision",
                 "discharged", "started"], "by user", True)
    assert expected == (steps[:8], decision.split(") ", 1)[1][:7], "(inferred: " in decision)
