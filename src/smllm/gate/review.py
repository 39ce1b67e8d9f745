"""The approval gate's place in PreToolUse: :func:`evaluate` = :func:`decide` + the review chain.

:func:`smllm.gate.decide` gives the verdict of the policy, the analysis and the
grants. When it escalates, the review chain runs here (:func:`evaluate`) and is journaled before
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
from smllm.gate import Verdict, ask_user, no_reviewer_decided, reviewed
from smllm.journal import records

TYPE_CHECKING = False  # typing costs milliseconds on every tool call
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from smllm.base.catalogue import ToolCall
    from smllm.base.shapes import CompiledPolicy, VerdictFacts
    from smllm.gate import Escalation
    from smllm.gate.reviewers import Result
    from smllm.journal.codec import Entry

    #: journals part of the chain; ``first`` for the first part, which ingests the
    #: transcript so that the model's request precedes its review (the later parts do not,
    #: so nothing the transcript gains while a reviewer thinks lands inside the chain)
    Record = Callable[[list[Entry], bool], None]


def evaluate(call: ToolCall, verdict: Verdict, compiled: CompiledPolicy,
             record: Record) -> Verdict:
    """Run the review chain of an escalated ``verdict`` (:func:`smllm.gate.decide`), each
    step journaled through ``record`` before this returns; any other verdict as it is."""
    if verdict.review is None:
        return verdict
    return _review(call, record, verdict.review, compiled, verdict.facts)


def _stage(pending: str, stage: str, outcome: str, **detail: Any) -> Entry:
    return records.new("stage_requirement_resolved", pending_action_id=pending, stage=stage,
                       outcome=outcome, **detail)


def _review(call: ToolCall, record: Record, esc: Escalation, compiled: CompiledPolicy,
            facts: VerdictFacts) -> Verdict:
    from smllm.gate import reviewers  # noqa: PLC0415 - json, dataclasses: escalations only

    pending = clock.new_id("pa-")
    tool_use_id = str(call.tool_use_id)
    chain = list(esc.reviewers)
    record([
        records.approval_requested(pending, tool_use_id, call.operation, call.tool,
                                   call.input, chain, rule=esc.rule,
                                   rule_source=esc.source, reason=esc.reason),
        records.new("approval_wait.effect.started", pending_action_id=pending,
                    tool_use_id=tool_use_id, reviewers=chain),
    ], True)
    request = reviewers.Request(call.tool, call.input, call.cwd, str(call.session_id), pending,
                                esc.rule, esc.reason, esc.findings, esc.scripts)
    failures: list[dict[str, Any]] = []
    for reviewer in chain:
        if reviewer == "user":
            record([_stage(pending, "user", "delegated",
                           detail="Claude Code's own permission prompt decides")], False)
            return ask_user(esc, pending, facts)
        config = compiled.get("llm_judge") if reviewer == "llm_judge" else compiled.get("command")
        result = reviewers.review(reviewer, request, dict(config or {}))
        if result.choice is None:
            failures.append({"kind": reviewer, "error": result.error})
            record([_stage(pending, reviewer, "failed", error=result.error,
                           decision_source=result.source)], False)
            continue
        return _decided(call, record, result, esc, pending, facts)
    record([
        records.new("decision_applied", pending_action_id=pending, decision="rejected",
                    policy_result="deny",
                    decision_source={"kind": "fallback", "failures": failures}),
        records.new("approval_wait.effect.terminal", pending_action_id=pending,
                    outcome="rejected", tool_use_id=tool_use_id),
    ], False)
    return no_reviewer_decided(esc, failures, pending, facts)


def _decided(  # noqa: PLR0917 - private helper, called once
    call: ToolCall, record: Record, result: Result, esc: Escalation, pending: str,
    facts: VerdictFacts,
) -> Verdict:
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
            workspace=call.project,
            tool_name=call.tool,
            tool_input=call.input,
            granted_by=result.kind,
            session_id=str(call.session_id),
            pending_action_id=pending,
            pins=grants.Pins({path: digest for path, digest, _ in esc.scripts}, esc.findings),
        )
        entries.append(records.new("policy.amendment", action="added", **grant))
        facts = {**facts, "grant": grant["id"]}
    entries.append(records.new("approval_wait.effect.terminal", pending_action_id=pending,
                               outcome=outcome, tool_use_id=str(call.tool_use_id)))
    record(entries, False)
    return reviewed(esc, result.kind, approved, result.reason, pending, facts)
