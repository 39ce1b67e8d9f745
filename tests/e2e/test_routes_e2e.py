"""Order and provenance on every route a call takes, through the real Claude Code CLI
(issue 20, acceptance 1), with the stdio permission driver as the person at the prompt.

Routes: smllm's own decision (``allow:policy`` under ``authority = "gate"``), a reviewer
(the LLM judge), Claude Code's prompt answered by a person (allow and deny), Claude Code
refusing on its own (``-p``, nobody at the prompt), Claude Code allowing without a prompt
(``acceptEdits``), and ``--dangerously-skip-permissions``. Each driven route runs with the
person answering at once and after 1.5 s (PermissionRequest races the answer): for each
``tool_use_id`` the records are in causal order, the authorization smllm derives (the
ledger, from the whole chain) is the one observed, every approval wait is closed, and both
timings give the same sequence of kinds.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from harness import Harness, Run

from smllm import journal

pytestmark = pytest.mark.e2e

GATE = 'authority = "gate"\n'
JUDGE = 'reviewers = ["llm_judge"]\n[llm_judge]\ntimeout = 20\nmodel = "claude-haiku-4-5"\n'
APPROVE = [{"text": json.dumps({"verdict": "allow_once", "reason": "a stale cache file"})}]
#: the kinds of one call, in causal order (a later kind never comes before an earlier one)
ORDER = {"side_effect_intent": 1, "approval.review": 2, "approval_wait.effect.started": 3,
         "decision_applied": 4, "approval_wait.effect.terminal": 5,
         "tool_batch.effect.started": 6, "tool_batch.effect.terminal": 7}
#: the gate's own chain, before the intent it leads to (seed 000's order)
GATE_CHAIN = ("stage_requirement_resolved",)


def _project(claude: Harness, policy: str | None) -> None:
    """The person's project: its policy written, then smllm installed (which records the
    protected files as they are, so the first session adopts nothing)."""
    (claude.project / "stale_cache.txt").write_text("cached rollup\n")
    if policy is not None:
        (claude.project / ".smllm").mkdir(exist_ok=True)
        (claude.project / ".smllm" / "policy.toml").write_text(policy)
    claude.install_smllm()


def _write(claude: Harness) -> dict[str, Any]:
    return {"tool_use": {"name": "Write", "input": {
        "file_path": str(claude.project / "notes.md"), "content": "hello\n"}}}


def _bash(command: str) -> dict[str, Any]:
    return {"tool_use": {"name": "Bash", "input": {"command": command, "description": "x"}}}


def _by_call(run: Run) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """Every record of the journal that belongs to a call, by tool_use_id (a chain record
    by its pending_action_id, threaded to the call)."""
    pending: dict[str, str] = {}
    calls: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for rec in run.journal():
        kind, body = journal.kind_of(rec), journal.body_of(rec)
        tid, pa = body.get("tool_use_id"), body.get("pending_action_id")
        if isinstance(tid, str) and isinstance(pa, str):
            pending[pa] = tid
        if not isinstance(tid, str) and isinstance(pa, str):
            tid = pending.get(pa, f"(pending {pa})")
        if isinstance(tid, str) and (kind in ORDER or kind in GATE_CHAIN):
            calls.setdefault(tid, []).append((kind, body))
    # a gate chain written before its intent names its pending id only: thread it back
    for tid in [t for t in calls if t.startswith("(pending ")]:
        pa = tid[len("(pending "):-1]
        if pa in pending:
            calls[pending[pa]] = calls.pop(tid) + calls[pending[pa]]
    return calls


def _ledger_auth(claude: Harness, run: Run) -> list[str]:
    out = claude.project.parent / f"export{len(claude.runs)}.json"
    claude.smllm("export", "--journal", str(run.journal_path), "--out", str(out), check=True)
    ledger = claude.smllm("ledger", str(out), "--json", check=True)
    return [row["auth"] for row in map(json.loads, ledger.stdout.splitlines())
            if row.get("lane") not in ("model", "approval") and "lane" in row]


def _check(claude: Harness, run: Run) -> tuple[list[str], list[list[str]]]:
    """Causal order per call and every wait closed; (the terminals' authorizations, the
    kinds of each call)."""
    calls = _by_call(run)
    assert calls, run.stderr
    kinds, auth = [], []
    waits: dict[str, str] = {}
    for tid, recs in calls.items():
        names = [k for k, _ in recs]
        # the gate's own chain (a reviewer's, or its ask) comes before the intent
        cut = names.index("side_effect_intent")
        ranks = [0] * cut + [ORDER[k] for k in names[cut:]]
        assert ranks == sorted(ranks), (tid, names)
        assert names.count("tool_batch.effect.terminal") == 1, (tid, names)
        assert names.count("tool_batch.effect.started") <= 1, (tid, names)
        for k, body in recs:
            if k == "approval_wait.effect.started":
                waits[str(body["pending_action_id"])] = "open"
            elif k == "approval_wait.effect.terminal":
                waits[str(body["pending_action_id"])] = str(body["outcome"])
            elif k == "tool_batch.effect.terminal":
                auth.append(str(body.get("authorized_by")))
        kinds.append(names)
    assert "open" not in waits.values(), waits
    assert auth == _ledger_auth(claude, run), auth
    return auth, kinds


DRIVEN = [
    # (route, policy, script, answers, permission mode, judge, expected authorizations)
    ("prompt-allow", None, "write", ["allow"], "default", None, ["allow:user"]),
    ("prompt-deny", None, "write", ["deny"], "default", None, ["deny:user"]),
    ("prompt-allow-bash", None, "touch made.txt", ["allow"], "default", None, ["allow:user"]),
    ("prompt-deny-bash", None, "touch made.txt", ["deny"], "default", None, ["deny:user"]),
    ("ask-user-allow", 'reviewers = ["user"]\n', "rm -rf stale_cache.txt", ["allow"],
     "default", None, ["allow:user"]),
    ("smllm-policy", GATE, "touch made.txt", [], "default", None, ["allow:policy"]),
    ("judge", JUDGE, "rm -rf stale_cache.txt", [], "default", APPROVE, ["allow:llm_judge"]),
    ("no-prompt", None, "write", [], "acceptEdits", None, ["allow:host"]),
    ("skip-permissions", None, "touch made.txt", [], "bypass", None, ["allow:policy"]),
    ("skip-permissions-ask", 'reviewers = ["user"]\n', "rm -rf stale_cache.txt", ["allow"],
     "bypass", None, ["allow:user"]),
]


@pytest.mark.parametrize(("route", "policy", "call", "answers", "mode", "judge", "expected"),
                         DRIVEN, ids=[d[0] for d in DRIVEN])
def test_route_in_order_with_the_observed_authorizer_at_both_timings(
        claude: Harness, route: str, policy: str | None, call: str, answers: list[str],
        mode: str, judge: list[dict[str, Any]] | None, expected: list[str]) -> None:
    """The person answers at once, then after 1.5 s: the same kinds, in causal order, the
    observed authorization (terminal and ledger), every wait closed."""
    _project(claude, policy)
    seen = []
    for delay in (0.0, 1.5):
        (claude.project / "stale_cache.txt").write_text("cached rollup\n")
        for made in ("made.txt", "notes.md"):
            (claude.project / made).unlink(missing_ok=True)
        step = _write(claude) if call == "write" else _bash(call)
        run = claude.drive(f"{route} at {delay}", script=[step, {"text": "done"}],
                           judge=judge, answers=answers, default="deny", delay=delay,
                           permission_mode=mode)
        assert 0 == run.returncode, run.stderr
        assert len(answers) == len(run.extra["prompts"]), run.extra["prompts"]
        auth, kinds = _check(claude, run)
        assert expected == auth, (delay, kinds)
        seen.append((kinds, [journal.kind_of(r) for r in run.journal()]))
    assert seen[0] == seen[1]


def test_host_refusing_without_a_person_closes_its_prompt(claude: Harness) -> None:
    """``-p`` in the default mode: Claude Code shows its prompt (PermissionRequest), nobody
    can answer, it refuses the Write on its own: deny:host, the wait closed rejected."""
    _project(claude, None)
    run = claude.run("write it", script=[_write(claude), {"text": "done"}],
                     permission_mode="default")
    auth, kinds = _check(claude, run)
    applied = [journal.body_of(r) for r in run.journal()
               if journal.kind_of(r) == "decision_applied"]
    assert (["deny:host"], False, [("rejected", "host")]) == (
        auth, (claude.project / "notes.md").exists(),
        [(a["decision"], a["decision_source"]["kind"]) for a in applied]), kinds
    assert "tool_batch.effect.started" not in kinds[0]
