"""PreToolUse: decide, then make the intent durable before the tool may run.

Order: reconciliation hold → the state's tool rules → the approval gate
(:func:`smllm.gate.review.evaluate`, which journals any approval chain first). Whatever
the outcome, a ``side_effect_intent`` carrying ``policy_decision`` is fsynced before
this hook returns; an allowed call also gets ``tool_batch.effect.started``. If the
intent cannot be journaled, the call is denied (the caller turns the exception into
a deny).
"""

from __future__ import annotations

from smllm import gate
from smllm.gate import review
from smllm.hooks import _features
from smllm.hooks._context import HookContext
from smllm.journal import records, sidecar, transcript

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _output(decision: str, reason: str) -> dict[str, Any] | None:
    if decision == "abstain":
        return None
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }


def _verdict(ctx: HookContext) -> gate.Verdict:
    held = _features.held_effect(ctx)
    if held:
        return gate.Verdict("deny", "deny:reconcile", held, rule="reconcile.unknown-effect")
    p = ctx.payload
    guarded = gate.protected(str(p["tool_name"]), p["tool_input"], ctx.cwd,
                             ctx.project or ctx.cwd)
    if guarded is not None:  # self-protection: before any policy, in every mode
        return guarded
    rule = _features.machine_tool_rule(ctx)
    if rule is not None:
        decision, reason = rule
        if decision == "allow":  # smllm's own firing (smllm.machine.hostview.tool_rule)
            return gate.Verdict("allow", "allow:policy", reason, rule="machine.fire")
        return gate.Verdict(
            "deny" if decision == "deny" else "ask",
            f"{decision}:machine",
            reason,
            rule="machine.tools",
        )
    try:
        return review.evaluate(ctx)
    except Exception as exc:  # fail closed, but still journal the intent
        return gate.Verdict(
            "deny",
            "deny:policy",
            f"smllm could not evaluate this call and "
            f"denies it (fail closed): {type(exc).__name__}: {exc}",
            rule="gate.internal-error",
        )


def handle(ctx: HookContext) -> dict[str, Any] | None:
    verdict = _verdict(ctx)
    p = ctx.payload
    tool_use_id = str(p["tool_use_id"])
    key = sidecar.idempotency_key(ctx.session_id, tool_use_id)
    op = sidecar.operation(str(p["tool_name"]))
    allowed = verdict.decision in ("allow", "abstain", "ask")
    with ctx.transaction() as txn:
        sidecar.ensure(txn)
        if verdict.pending_action_id is None:
            # the review chain, when one ran, ingested the transcript before its first record:
            # what the transcript gained since waits for the next hook, so the chain, the
            # intent and the start stay together (seed 000's order)
            transcript.ingest(txn, ctx.transcript)
        intent = txn.append(
            records.new(
                "side_effect_intent",
                operation=op,
                tool_name=p["tool_name"],
                tool_use_id=tool_use_id,
                idempotency_key=key,
                policy_decision=verdict.policy_decision,
                rule=verdict.rule,
                reason=verdict.reason,
                pending_action_id=verdict.pending_action_id,
                rule_source=verdict.facts.get("rule_source"),
                smllm_verdict=verdict.facts.get("smllm_verdict"),
                findings=verdict.facts.get("findings"),
                scripts=verdict.facts.get("scripts"),
                input=p["tool_input"],
                permission_mode=p.get("permission_mode"),
                agent_id=ctx.agent_id,
            )
        )
        if allowed:
            txn.append(
                records.new(
                    "tool_batch.effect.started",
                    tool_use_id=tool_use_id,
                    idempotency_key=key,
                    intent_sequence=intent.sequence,
                    operation=op,
                )
            )
            open_intents = dict(txn.state.get("open_intents") or {})
            open_intents[tool_use_id] = {
                "seq": intent.sequence,
                "key": key,
                "operation": op,
                "input": p["tool_input"],
                "tool_name": p["tool_name"],
                "decision": verdict.policy_decision,
                "pending": verdict.pending_action_id,
                "scripts": verdict.facts.get("scripts"),
            }
            txn.set_state("open_intents", open_intents)
    return _output(verdict.decision, verdict.reason)
