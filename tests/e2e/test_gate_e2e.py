"""The approval gate through the real Claude Code CLI and a scripted model (issue 4).

Seed 000's sample: an in-place edit and a run pass by static policy, ``rm -rf`` goes to
the LLM judge (the mock's judge queue), and the journal holds the approval chain.
"""


from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from typing import Any

import pytest
from harness import Harness, Run

pytestmark = pytest.mark.e2e

CHECK_COSTS = '''#!/usr/bin/env python3
"""Quokkascale billing rollup for the Frobnitz-9 tier."""

TIER_RATE_FROBNITZ9 = 0.0417  # dollars per Quokkascale compute-unit

def monthly_cost(compute_units):
    return round(compute_units * TIER_RATE_FROBNITZ9, 2)

if __name__ == "__main__":
    print(monthly_cost(1000))
'''
GATE_JUDGE = ('authority = "gate"\nreviewers = ["llm_judge"]\n[llm_judge]\ntimeout = {t}\n'
              'model = "claude-haiku-4-5"\n')
CHAIN = ["approval.review", "approval_wait.effect.started", "stage_requirement_resolved",
         "decision_applied", "approval_wait.effect.terminal", "side_effect_intent",
         "tool_batch.effect.started"]


def _sample(claude: Harness, policy: str | None) -> None:
    """The seed's billing_demo project, committed, with smllm installed and a policy."""
    (claude.project / "check_costs.py").write_text(CHECK_COSTS)
    (claude.project / "stale_cache.txt").write_text("cached rollup 2026-07-01\n")
    git = ["git", "-C", str(claude.project), "-c", "user.email=demo@x", "-c", "user.name=demo"]
    subprocess.run([*git, "add", "-A"], check=True, capture_output=True, env=claude.env())
    subprocess.run([*git, "commit", "-qm", "init"], check=True, capture_output=True,
                   env=claude.env())
    claude.install_smllm()
    if policy is not None:
        (claude.project / ".smllm").mkdir(exist_ok=True)
        (claude.project / ".smllm" / "policy.toml").write_text(policy)


def _script(claude: Harness, final_command: str = "rm -rf stale_cache.txt") -> list[dict[str, Any]]:
    path = str(claude.project / "check_costs.py")
    return [
        {"tool_use": {"name": "Read", "input": {"file_path": path}}},
        {"tool_use": {"name": "Edit", "input": {
            "file_path": path, "old_string": "TIER_RATE_FROBNITZ9 = 0.0417  # dollars per "
            "Quokkascale compute-unit", "new_string": "TIER_RATE_FROBNITZ9 = 0.0417  # dollars "
            "per Quokkascale compute-unit\nTIER_RATE_FROBNITZ12 = 0.0625"}}},
        {"tool_use": {"name": "Bash", "input": {"command": "python3 check_costs.py",
                                                "description": "run it"}}},
        {"tool_use": {"name": "Bash", "input": {"command": final_command,
                                                "description": "delete the stale cache"}}},
        {"text": "done"},
    ]


def _records(run: Run, name: str) -> list[dict[str, Any]]:
    out = []
    for rec in run.journal():
        payload = rec.get("payload") or {}
        ev = payload.get("event")
        if isinstance(ev, dict) and ev.get("kind") == name:
            out.append(ev)
        elif rec.get("payload_type") == name:
            out.append(payload.get("record") or {})
    return out


def _stamps(run: Run) -> list[tuple[str, str]]:
    return [(str(i.get("tool_name")), str(i.get("policy_decision")))
            for i in _records(run, "side_effect_intent")]


def _judge_digest(body: dict[str, Any]) -> str:
    raw = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(raw.encode("utf-8")).hexdigest()


def test_seed_sample_judge_approves(claude: Harness) -> None:
    """Edit and run pass as allow:policy; rm -rf goes to the judge, which approves."""
    _sample(claude, GATE_JUDGE.format(t=20))
    verdict = {"verdict": "allow_once", "reason": "a stale cache file the user asked to delete"}
    run = claude.run("edit, run, then delete the stale cache", script=_script(claude),
                     judge=[{"text": json.dumps(verdict)}], permission_mode="default")
    assert [("Read", "allow:policy"), ("Edit", "allow:policy"), ("Bash", "allow:policy"),
            ("Bash", "allow:llm_judge")] == _stamps(run), run.stderr
    kinds = run.journal_kinds()
    start = kinds.index("approval.review")
    assert CHAIN == kinds[start:start + len(CHAIN)]
    pending = {r.get("pending_action_id") for r in _records(run, "approval.review")
               + _records(run, "decision_applied") + _records(run, "approval_wait.effect.terminal")}
    applied = _records(run, "decision_applied")[0]
    assert 1 == len(pending)
    assert {"kind": "llm_judge", "prompt_version": 2, "params_version": 2,
            "context_digest": _judge_digest(run.judge_requests[0])} == {
        k: applied["decision_source"][k] for k in ("kind", "prompt_version", "params_version",
                                                    "context_digest")}
    assert (False, True) == ((claude.project / "stale_cache.txt").exists(),
                             "FROBNITZ12" in (claude.project / "check_costs.py").read_text())


def test_seed_sample_judge_rejects(claude: Harness) -> None:
    """The judge rejects: the file stays and the model receives the reason."""
    _sample(claude, GATE_JUDGE.format(t=20))
    verdict = {"verdict": "reject", "reason": "keep-the-quokka-cache: the user may need it"}
    run = claude.run("delete the stale cache", script=_script(claude),
                     judge=[{"text": json.dumps(verdict)}], permission_mode="default")
    assert ("Bash", "deny:llm_judge") == _stamps(run)[-1]
    assert (True, True) == ((claude.project / "stale_cache.txt").exists(),
                            run.model_saw("keep-the-quokka-cache"))


@pytest.mark.parametrize(("answer", "policy_extra", "error_part"), [
    ({"text": "certainly, go ahead"}, "", "not one JSON object"),
    ({"text": '{"verdict": "allow_once", "reason": "ok"}', "delay": 4}, "", "cannot reach"),
    ({"text": '{"verdict": "allow_once", "reason": "ok"}'}, 'base_url = "http://127.0.0.1:9"\n',
     "cannot reach"),
])
def test_judge_failure_never_allows(claude: Harness, answer: dict[str, Any], policy_extra: str,
                                    error_part: str) -> None:
    """Garbage, too slow, or unreachable: the call is denied and the fallback journaled."""
    _sample(claude, GATE_JUDGE.format(t=1) + policy_extra)
    run = claude.run("delete the stale cache", script=_script(claude), judge=[answer],
                     permission_mode="default")
    failed = [r for r in _records(run, "stage_requirement_resolved") if r.get("outcome") ==
              "failed"]
    applied = _records(run, "decision_applied")
    assert (True, ("Bash", "deny:policy"), "fallback", True) == (
        (claude.project / "stale_cache.txt").exists(), _stamps(run)[-1],
        applied[-1]["decision_source"]["kind"], error_part in failed[-1]["error"])


@pytest.mark.parametrize(("policy", "created", "stamp"), [
    (None, False, "defer:host"),
    ('authority = "guard"\n', False, "defer:host"),
    ('authority = "gate"\n', True, "allow:policy"),
])
def test_default_mode_not_made_more_permissive(claude: Harness, policy: str | None,
                                               created: bool, stamp: str) -> None:
    """In Claude Code's default mode a call it would prompt for is not allowed by smllm,
    unless the policy opts in (authority = "gate")."""
    _sample(claude, policy)
    target = claude.project / "made_by_agent.txt"
    script = [{"tool_use": {"name": "Bash", "input": {"command": f"touch {target.name}",
                                                      "description": "make a file"}}},
              {"text": "done"}]
    run = claude.run("make a file", script=script, permission_mode="default")
    observed = [r.get("authorized_by") for r in _records(run, "tool_batch.effect.terminal")]
    # the host showed its prompt (PermissionRequest), nobody could answer it in -p, and the
    # call did not run: Claude Code refused it on its own (deny:host, not deny:user)
    expected_observed = ["allow:policy"] if created else ["deny:host"]
    prompts = [r.get("reviewers") for r in _records(run, "approval.review")]
    answers = [(r["decision"], r["decision_source"]["kind"])
               for r in _records(run, "decision_applied")]
    assert (created, [("Bash", stamp)], expected_observed, [] if created else [["user"]],
            [] if created else [("rejected", "host")]) == (
        target.exists(), _stamps(run), observed, prompts, answers)


def test_always_allow_amendment(claude: Harness) -> None:
    """'Always allow in this workspace' is journaled, applies to a later session, and
    `smllm policy grants --revoke` removes it."""
    _sample(claude, GATE_JUDGE.format(t=20))
    always = {"verdict": "always_allow_in_workspace", "reason": "routine cache cleanup"}
    first = claude.run("delete the cache", script=_script(claude), judge=[{"text":
                       json.dumps(always)}], permission_mode="default")
    grant = _records(first, "policy.amendment")[0]
    (claude.project / "stale_cache.txt").write_text("again\n")
    second = claude.run("delete it again", script=_script(claude), judge=[],
                        permission_mode="default")
    later = _records(second, "side_effect_intent")[-1]
    assert ("added", "allow:policy", f"amendment:{grant['id']}", False) == (
        grant["action"], later["policy_decision"], later["rule"],
        (claude.project / "stale_cache.txt").exists())
    revoked = claude.smllm("policy", "grants", "--revoke", grant["id"])
    (claude.project / "stale_cache.txt").write_text("third\n")
    third = claude.run("and again", script=_script(claude), judge=[{"text": json.dumps(
        {"verdict": "reject", "reason": "not now"})}], permission_mode="default")
    assert (0, True, ("Bash", "deny:llm_judge")) == (
        revoked.returncode, (claude.project / "stale_cache.txt").exists(), _stamps(third)[-1])


def _rm_script(claude: Harness) -> list[dict[str, Any]]:
    return [{"tool_use": {"name": "Bash", "input": {"command": "rm -rf stale_cache.txt",
                                                    "description": "delete the stale cache"}}},
            {"text": "done"}]


def test_judge_approval_takes_effect_under_guard(claude: Harness) -> None:
    """Under the default authority (guard) and Claude Code's default permission mode, the
    judge's approval of an escalated rm -rf lets it run: the intent, the terminal record
    and the ledger say allow:llm_judge, and Claude Code showed no prompt of its own."""
    _sample(claude, 'reviewers = ["llm_judge"]\n[llm_judge]\ntimeout = 20\n')
    verdict = {"verdict": "allow_once", "reason": "a stale cache file the user asked to delete"}
    run = claude.run("delete the stale cache", script=_rm_script(claude),
                     judge=[{"text": json.dumps(verdict)}], permission_mode="default")
    export = claude.project.parent / "judged.json"
    exported = claude.smllm("export", "--journal", str(run.journal_path), "--out", str(export))
    ledger = claude.smllm("ledger", str(export), "--json")
    auth = [row["auth"] for row in map(json.loads, ledger.stdout.splitlines())
            if row.get("what") == "bash"]
    assert (False, [("Bash", "allow:llm_judge")], ["allow:llm_judge"], [], (0, 0),
            ["allow:llm_judge"]) == (
        (claude.project / "stale_cache.txt").exists(), _stamps(run),
        [r.get("authorized_by") for r in _records(run, "tool_batch.effect.terminal")],
        run.hook_responses("PermissionRequest"), (exported.returncode, ledger.returncode),
        auth), run.stderr


def test_command_reviewer_rejection_under_guard(claude: Harness) -> None:
    """A command reviewer's rejection under guard denies the call: the file stays, the intent
    says deny:command, and the model receives the reviewer's reason."""
    reviewer = claude.project.parent / "reviewer.py"
    reviewer.write_text("import json, sys\njson.load(sys.stdin)\nprint(json.dumps({'verdict': "
                        "'reject', 'reason': 'keep-the-quokka-cache: ask the owner first'}))\n")
    _sample(claude, f'reviewers = ["command"]\n[command]\nargv = ["{sys.executable}", '
                    f'"{reviewer}"]\n')
    run = claude.run("delete the stale cache", script=_rm_script(claude),
                     permission_mode="default")
    stages = [(r.get("stage"), r.get("outcome")) for r in _records(run,
                                                                    "stage_requirement_resolved")]
    assert (True, [("Bash", "deny:command")], [("command", "rejected")], True) == (
        (claude.project / "stale_cache.txt").exists(), _stamps(run), stages,
        run.model_saw("keep-the-quokka-cache")), run.stderr


def test_claude_code_deny_rule_wins_over_a_judge_approval(claude: Harness) -> None:
    """A deny rule in Claude Code's own settings still refuses a call the judge approved:
    the file stays, and the terminal record says the host refused it."""
    _sample(claude, 'reviewers = ["llm_judge"]\n[llm_judge]\ntimeout = 20\n')
    settings = claude.home / ".claude" / "settings.json"
    data = json.loads(settings.read_text()) if settings.exists() else {}
    data.setdefault("permissions", {}).setdefault("deny", []).append("Bash(rm -rf *)")
    claude.write_settings(data, which="user")
    verdict = {"verdict": "allow_once", "reason": "a stale cache file"}
    run = claude.run("delete the stale cache", script=_rm_script(claude),
                     judge=[{"text": json.dumps(verdict)}], permission_mode="default")
    assert (True, [("Bash", "allow:llm_judge")], ["deny:host"]) == (
        (claude.project / "stale_cache.txt").exists(), _stamps(run),
        [r.get("authorized_by") for r in _records(run, "tool_batch.effect.terminal")]), \
        run.stderr
