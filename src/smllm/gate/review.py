"""The approval gate's place in PreToolUse: :func:`evaluate` = :func:`decide` + the review chain.

:func:`smllm.gate.decide` gives the verdict of the policy, the analysis and the
grants. When it escalates, the review chain runs here and is journaled before
:func:`evaluate` returns, in this order and threaded by one ``pending_action_id``
(seed 000)::

    approval.review (requested) -> approval_wait.effect.started
    -> stage_requirement_resolved (one per reviewer consulted) -> decision_applied
    -> approval_wait.effect.terminal

The ``user`` reviewer is Claude Code's own prompt: the chain stops there with ``ask``
(``stage_requirement_resolved`` ``delegated``), and the person's answer is observed later.
A machine reviewer's answer takes effect under either authority
(:func:`smllm.gate.reviewed`): its approval answers ``allow``, its rejection ``deny``.
The journal lock is never held while a reviewer is thinking.
"""

from __future__ import annotations

from smllm.base import clock
from smllm.gate import Verdict, ask_user, decide, no_reviewer_decided, policy, reviewed
from smllm.journal import records, sidecar, transcript

TYPE_CHECKING = False  # typing costs milliseconds on every tool call
if TYPE_CHECKING:
    from typing import Any

    from smllm.base.shapes import CompiledPolicy
    from smllm.gate import Escalation
    from smllm.gate.reviewers import Result
    from smllm.hooks._context import HookContext
    from smllm.journal.log import Entry


def evaluate(ctx: HookContext) -> Verdict:
    """Decide on one tool call; journal any approval chain before returning."""
    p = ctx.payload
    project = policy.project_root(ctx.cwd)
    compiled = policy.load(project)
    verdict = decide(str(p["tool_name"]), p["tool_input"], cwd=ctx.cwd, project=project,
                     compiled=compiled, permission_mode=p.get("permission_mode"))
    if verdict.review is None:
        return verdict
    return _review(ctx, verdict.review, compiled, project, verdict.facts)


def _append(ctx: HookContext, entries: list[Entry], *, first: bool = False) -> None:
    """Journal part of the chain. The first part ingests the transcript, so that the model's
    request precedes its review; the later ones do not, so that nothing the transcript gains
    while a reviewer thinks lands inside the chain (PreToolUse ingests it next)."""
    with ctx.transaction() as txn:
        sidecar.ensure(txn)
        if first:
            transcript.ingest(txn, ctx.transcript)
        txn.extend(entries)


def _stage(pending: str, stage: str, outcome: str, **detail: Any) -> Entry:
    return records.new("stage_requirement_resolved", pending_action_id=pending, stage=stage,
                       outcome=outcome, **detail)


def _review(ctx: HookContext, esc: Escalation, compiled: CompiledPolicy, project: str,
            facts: dict[str, Any]) -> Verdict:
    from smllm.gate import reviewers  # noqa: PLC0415 - json, dataclasses: escalations only

    p = ctx.payload
    tool_name = str(p["tool_name"])
    pending = clock.new_id("pa-")
    tool_use_id = str(p["tool_use_id"])
    chain = list(esc.reviewers)
    _append(ctx, [
        records.approval_requested(pending, tool_use_id, sidecar.operation(tool_name),
                                   p["tool_name"], p["tool_input"], chain, rule=esc.rule,
                                   rule_source=esc.source, reason=esc.reason),
        records.new("approval_wait.effect.started", pending_action_id=pending,
                    tool_use_id=tool_use_id, reviewers=chain),
    ], first=True)
    request = reviewers.Request(tool_name, p["tool_input"], ctx.cwd, ctx.session_id, pending,
                                esc.rule, esc.reason, esc.findings)
    failures: list[dict[str, Any]] = []
    for reviewer in chain:
        if reviewer == "user":
            _append(ctx, [_stage(pending, "user", "delegated",
                                 detail="Claude Code's own permission prompt decides")])
            return ask_user(esc, pending, facts)
        config = compiled.get("llm_judge") if reviewer == "llm_judge" else compiled.get("command")
        result = reviewers.review(reviewer, request, dict(config or {}))
        if result.choice is None:
            failures.append({"kind": reviewer, "error": result.error})
            _append(ctx, [_stage(pending, reviewer, "failed", error=result.error,
                                 decision_source=result.source)])
            continue
        return _decided(ctx, result, esc, pending, project, facts)
    _append(ctx, [
        records.new("decision_applied", pending_action_id=pending, decision="rejected",
                    policy_result="deny",
                    decision_source={"kind": "fallback", "failures": failures}),
        records.new("approval_wait.effect.terminal", pending_action_id=pending,
                    outcome="rejected", tool_use_id=tool_use_id),
    ])
    return no_reviewer_decided(esc, failures, pending, facts)


def _decided(  # noqa: PLR0917 - private helper, called once
    ctx: HookContext, result: Result, esc: Escalation, pending: str, project: str,
    facts: dict[str, Any],
) -> Verdict:
    p = ctx.payload
    approved = result.choice != "reject"
    outcome = "approved" if approved else "rejected"
    entries = [
        _stage(pending, result.kind, outcome, choice=result.choice),
        records.new("decision_applied", pending_action_id=pending, decision=outcome,
                    policy_result="allow" if approved else "deny", choice=result.choice,
                    reason=result.reason, decision_source=result.source),
    ]
    if result.choice == "always_allow_in_workspace":
        from smllm.gate import grants  # noqa: PLC0415 - json and pathlib: only for a grant

        grant = grants.add(
            workspace=project,
            tool_name=str(p["tool_name"]),
            tool_input=p["tool_input"],
            granted_by=result.kind,
            session_id=ctx.session_id,
            pending_action_id=pending,
        )
        entries.append(records.new("policy.amendment", action="added", **grant))
        facts = {**facts, "grant": grant["id"]}
    entries.append(records.new("approval_wait.effect.terminal", pending_action_id=pending,
                               outcome=outcome, tool_use_id=str(p["tool_use_id"])))
    _append(ctx, entries)
    return reviewed(esc, result.kind, approved, result.reason, pending, facts)
