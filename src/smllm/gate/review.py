"""The approval gate's place in PreToolUse: one function, :func:`evaluate`.

It returns a :class:`Verdict`: what smllm answers Claude Code (``decision``) and what
the journal stamps on the intent (``policy_decision``, e.g. ``allow:policy``). Any
approval chain it runs is journaled by the gate itself, before it returns, in this
order and threaded by one ``pending_action_id`` (seed 000)::

    approval.review (requested) -> approval_wait.effect.started
    -> stage_requirement_resolved (one per reviewer consulted) -> decision_applied
    -> approval_wait.effect.terminal

The journal lock is never held while a reviewer is thinking. Authority (product §6):
under ``authority = "guard"`` (default) an allow is an abstention (``defer:host``) so
Claude Code's own permissions decide, unless the host runs in ``bypassPermissions``;
``authority = "gate"`` makes smllm's allows authoritative (``allow:policy``,
``allow:llm_judge``, …).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing and dataclasses cost milliseconds on every tool call
if TYPE_CHECKING:
    from typing import Any, Literal

    from smllm.gate.policy.assess import Assessment
    from smllm.hooks._context import HookContext

    HostDecision = Literal["allow", "ask", "deny", "abstain"]

CHOICES = ["allow_once", "always_allow_in_workspace", "reject"]


class Verdict:
    """What smllm answers the host and what the intent is stamped with (immutable)."""

    __slots__ = ("decision", "facts", "pending_action_id", "policy_decision", "reason", "rule")
    decision: HostDecision
    policy_decision: str
    reason: str
    rule: str | None
    pending_action_id: str | None
    facts: dict[str, Any]

    def __init__(  # noqa: PLR0917 - the constructor callers already use
        self,
        decision: HostDecision,
        policy_decision: str,
        reason: str,
        rule: str | None = None,
        pending_action_id: str | None = None,
        facts: dict[str, Any] | None = None,
    ) -> None:
        set_ = object.__setattr__
        set_(self, "decision", decision)
        set_(self, "policy_decision", policy_decision)
        set_(self, "reason", reason)
        set_(self, "rule", rule)
        set_(self, "pending_action_id", pending_action_id)
        set_(self, "facts", facts if facts is not None else {})

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Verdict is frozen")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Verdict) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key()[:5])

    def _key(self) -> tuple[Any, ...]:
        return (
            self.decision,
            self.policy_decision,
            self.reason,
            self.rule,
            self.pending_action_id,
            self.facts,
        )

    def __repr__(self) -> str:
        return (
            f"Verdict({self.decision!r}, {self.policy_decision!r}, {self.reason!r}, "
            f"rule={self.rule!r})"
        )


def evaluate(ctx: HookContext) -> Verdict:
    """Decide on one tool call; journal any approval chain before returning."""
    from smllm.gate import policy  # noqa: PLC0415
    from smllm.gate.policy.assess import assess  # noqa: PLC0415

    p = ctx.payload
    project = policy.project_root(ctx.cwd)
    compiled = policy.load(project)
    if compiled.get("error"):
        return Verdict(
            "deny",
            "deny:policy",
            f"smllm's approval policy is invalid, so every call is denied "
            f"(fail closed): {compiled['error']}",
            rule="policy.invalid",
        )
    tool, tool_input = str(p["tool_name"]), p["tool_input"]
    a = assess(
        tool,
        tool_input,
        cwd=ctx.cwd,
        project=project,
        compiled=compiled,
        home=os.environ.get("HOME"),
    )
    facts: dict[str, Any] = {
        "rule_source": a.source,
        "findings": a.facts()[:20],
        "mode": compiled["mode"],
        "authority": compiled["authority"],
    }
    if a.scripts:
        facts["scripts"] = dict(a.scripts)
    authoritative = (
        compiled["authority"] == "gate" or p.get("permission_mode") == "bypassPermissions"
    )
    if compiled["mode"] == "yolo":
        return Verdict(
            "abstain",
            "allow:yolo",
            f"yolo mode: no approvals (analysis: {a.decision}, {a.reason})",
            rule="mode.yolo",
            facts=facts,
        )
    if a.decision == "deny":
        return Verdict(
            "deny",
            "deny:policy",
            f"smllm policy denies this call: {a.reason} (rule {a.rule}, {a.source})",
            rule=a.rule,
            facts=facts,
        )
    if a.decision == "allow":
        return _allowed("policy", a.reason, a.rule, None, authoritative, facts)
    from smllm.gate import grants  # noqa: PLC0415

    grant = grants.find(str(project), tool, tool_input)
    if grant is not None:
        facts["grant"] = grant["id"]
        return _allowed(
            "policy",
            f"allowed by the workspace amendment {grant['id']} "
            f"(granted by {grant.get('granted_by')})",
            f"amendment:{grant['id']}",
            None,
            authoritative,
            facts,
        )
    return _review(ctx, a, compiled, str(project), authoritative, facts)


def _allowed(  # noqa: PLR0917 - private helper, called once
    authorizer: str,
    reason: str,
    rule: str | None,
    pending: str | None,
    authoritative: bool,
    facts: dict[str, Any],
) -> Verdict:
    if authoritative:
        return Verdict("allow", f"allow:{authorizer}", reason, rule, pending, facts)
    facts = {**facts, "smllm_verdict": f"allow:{authorizer}"}
    return Verdict(
        "abstain",
        "defer:host",
        f"{reason}; Claude Code's own permissions decide (authority = guard)",
        rule,
        pending,
        facts,
    )


def _append(ctx: HookContext, records: list[tuple[str, dict[str, Any]]]) -> None:
    from smllm import journal  # noqa: PLC0415
    from smllm.journal import sidecar, transcript  # noqa: PLC0415

    with ctx.transaction() as txn:
        sidecar.ensure(txn)
        transcript.ingest(txn, ctx.transcript)  # the model's request precedes its review
        for payload_type, record in records:
            txn.append(journal.fact(payload_type, record))


def _review(  # noqa: PLR0917 - private helper, called once
    ctx: HookContext,
    a: Assessment,
    compiled: dict[str, Any],
    project: str,
    authoritative: bool,
    facts: dict[str, Any],
) -> Verdict:
    from smllm.base import clock  # noqa: PLC0415
    from smllm.gate import reviewers  # noqa: PLC0415
    from smllm.journal import sidecar  # noqa: PLC0415

    p = ctx.payload
    pending = clock.new_id("pa-")
    tool_use_id = str(p["tool_use_id"])
    chain = list(compiled["reviewers"])
    _append(
        ctx,
        [
            (
                "approval.review",
                {
                    "state": "requested",
                    "pending_action_id": pending,
                    "tool_use_id": tool_use_id,
                    "operation": sidecar.operation(str(p["tool_name"])),
                    "tool_name": p["tool_name"],
                    "action": p["tool_input"],
                    "choices": CHOICES,
                    "reviewers": chain,
                    "rule": a.rule,
                    "rule_source": a.source,
                    "reason": a.reason,
                },
            ),
            (
                "approval_wait.effect.started",
                {"pending_action_id": pending, "tool_use_id": tool_use_id, "reviewers": chain},
            ),
        ],
    )
    request = reviewers.Request(
        str(p["tool_name"]),
        p["tool_input"],
        ctx.cwd,
        ctx.session_id,
        pending,
        a.rule,
        a.reason,
        tuple(i.reason for i in a.items),
    )
    failures: list[dict[str, Any]] = []
    for kind in chain:
        if kind == "user":
            _append(
                ctx,
                [
                    (
                        "stage_requirement_resolved",
                        {
                            "pending_action_id": pending,
                            "stage": "user",
                            "outcome": "delegated",
                            "detail": "Claude Code's own permission prompt decides",
                        },
                    )
                ],
            )
            return Verdict(
                "ask",
                "ask:user",
                f"smllm escalates this call for your review: {a.reason} (rule {a.rule})",
                a.rule,
                pending,
                facts,
            )
        result = reviewers.review(kind, request, dict(compiled.get(kind) or {}))
        if result.choice is None:
            failures.append({"kind": kind, "error": result.error})
            _append(
                ctx,
                [
                    (
                        "stage_requirement_resolved",
                        {
                            "pending_action_id": pending,
                            "stage": kind,
                            "outcome": "failed",
                            "error": result.error,
                            "decision_source": result.source,
                        },
                    )
                ],
            )
            continue
        return _decided(ctx, result, a, pending, project, authoritative, facts)
    errors = "; ".join(f"{f['kind']}: {f['error']}" for f in failures) or "no reviewer configured"
    _append(
        ctx,
        [
            (
                "decision_applied",
                {
                    "pending_action_id": pending,
                    "decision": "rejected",
                    "policy_result": "deny",
                    "decision_source": {"kind": "fallback", "failures": failures},
                },
            ),
            (
                "approval_wait.effect.terminal",
                {"pending_action_id": pending, "outcome": "rejected", "tool_use_id": tool_use_id},
            ),
        ],
    )
    return Verdict(
        "deny",
        "deny:policy",
        f"smllm escalated this call ({a.reason}) but no "
        f"reviewer could decide ({errors}); denied (fail closed)",
        "reviewer.fallback",
        pending,
        facts,
    )


def _decided(  # noqa: PLR0917 - private helper, called once
    ctx: HookContext,
    result: Any,
    a: Assessment,
    pending: str,
    project: str,
    authoritative: bool,
    facts: dict[str, Any],
) -> Verdict:
    p = ctx.payload
    approved = result.choice != "reject"
    records: list[tuple[str, dict[str, Any]]] = [
        (
            "stage_requirement_resolved",
            {
                "pending_action_id": pending,
                "stage": result.kind,
                "outcome": "approved" if approved else "rejected",
                "choice": result.choice,
            },
        ),
        (
            "decision_applied",
            {
                "pending_action_id": pending,
                "decision": "approved" if approved else "rejected",
                "policy_result": "allow" if approved else "deny",
                "choice": result.choice,
                "reason": result.reason,
                "decision_source": result.source,
            },
        ),
    ]
    if result.choice == "always_allow_in_workspace":
        from smllm.gate import grants  # noqa: PLC0415

        grant = grants.add(
            workspace=project,
            tool_name=str(p["tool_name"]),
            tool_input=p["tool_input"],
            granted_by=result.kind,
            session_id=ctx.session_id,
            pending_action_id=pending,
        )
        records.append(("policy.amendment", {"action": "added", **grant}))
        facts = {**facts, "grant": grant["id"]}
    records.append(
        (
            "approval_wait.effect.terminal",
            {
                "pending_action_id": pending,
                "outcome": "approved" if approved else "rejected",
                "tool_use_id": str(p["tool_use_id"]),
            },
        )
    )
    _append(ctx, records)
    if approved:
        return _allowed(
            result.kind,
            f"approved by the {result.kind} reviewer: {result.reason}",
            a.rule,
            pending,
            authoritative,
            facts,
        )
    return Verdict(
        "deny",
        f"deny:{result.kind}",
        f"rejected by the {result.kind} reviewer: {result.reason}",
        a.rule,
        pending,
        facts,
    )
