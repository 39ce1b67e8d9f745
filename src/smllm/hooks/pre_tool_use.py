"""PreToolUse: decide, then make the intent durable before the tool may run.

The decision is :func:`smllm.gate.decide` on the call as Claude Code's adapter reads it
(:mod:`smllm.harness.claude`): the crash hold, self-protection, the state's tool rules,
then the policy, over one analysis of the call. An escalation's review chain runs next
(:func:`smllm.gate.review.evaluate`, which journals it first). Whatever the outcome, a
``side_effect_intent`` carrying ``policy_decision`` and the analysis' facts
(``known_safe``, ``targets``) is fsynced before this hook returns; a call smllm allows
also gets ``tool_batch.effect.started``. If the intent cannot be journaled, the call is denied
(the caller turns the exception into a deny).

A call smllm leaves to Claude Code (``defer:host``, ``ask:user``, ``allow:yolo``) gets its
intent only: its authorization is not known yet, so its ``tool_batch.effect.started`` waits
for it (:mod:`smllm.journal.hostcall`).
"""

from __future__ import annotations

from smllm import gate
from smllm.gate import policy
from smllm.harness import claude
from smllm.hooks import _features
from smllm.hooks._context import HookContext
from smllm.journal import hostcall, records, sidecar, transcript

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from smllm.base.catalogue import ToolCall
    from smllm.base.shapes import OpenIntent
    from smllm.harness.codex_fire import Plain
    from smllm.journal.codec import Entry


#: what the intent keeps of the call's one analysis (so no reader analyses it again)
ANALYSED = ("known_safe", "confined_to", "targets", "targets_omitted")


def _verdict(ctx: HookContext, call: ToolCall) -> gate.Verdict:
    compiled = policy.load(call.project)
    world = gate.World(
        compiled,
        held=lambda c: _features.held_effect(ctx, c),
        machine_rule=lambda c: _features.machine_tool_rule(ctx, c),
    )
    verdict = gate.decide(call, world)
    if verdict.review is None:  # nothing for a reviewer: the common case
        return verdict
    from smllm.gate import review  # noqa: PLC0415 - escalations to smllm's reviewers only

    def record(entries: list[Entry], first: bool) -> None:
        with ctx.transaction() as txn:
            sidecar.ensure(txn)
            if first:
                transcript.ingest(txn, ctx.transcript)
            txn.extend(entries)

    try:
        return review.evaluate(call, verdict, compiled, record)
    except Exception as exc:  # fail closed, but still journal the intent
        return gate.Verdict(
            "deny",
            "deny:policy",
            f"smllm could not evaluate this call and "
            f"denies it (fail closed): {type(exc).__name__}: {exc}",
            rule="gate.internal-error",
            facts=verdict.facts,
        )


def handle(ctx: HookContext) -> dict[str, Any] | None:
    call = ctx.call
    if ctx.harness == "codex":
        from smllm.harness import codex  # noqa: PLC0415 - Codex's hooks only

        verdict = codex.verdict(call, lambda c: _verdict(ctx, c),
                                lambda c: _features.held_effect(ctx, c))
        plain = _plain_fire(call, verdict)
        if plain is not None:
            return _fire_in_hook(ctx, call, verdict, plain)
    else:
        verdict = _verdict(ctx, call)
    facts = verdict.facts
    tool_use_id = str(call.tool_use_id)
    key = sidecar.idempotency_key(ctx.session_id, tool_use_id)
    op = call.operation
    allowed = verdict.decision in ("allow", "abstain", "ask")  # Codex: verdict() made ask deny
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
                tool_name=call.tool,
                tool_use_id=tool_use_id,
                idempotency_key=key,
                policy_decision=verdict.policy_decision,
                rule=verdict.rule,
                reason=verdict.reason,
                pending_action_id=verdict.pending_action_id,
                rule_source=facts.get("rule_source"),
                smllm_verdict=facts.get("smllm_verdict"),
                findings=facts.get("findings"),
                scripts=facts.get("scripts"),
                input=call.input,
                permission_mode=call.permission_mode,
                agent_id=ctx.agent_id,
                **{k: v for k, v in facts.items() if k in ANALYSED},
            )
        )
        if ctx.harness == "codex":
            from smllm.harness import codex  # noqa: PLC0415 - Codex's hooks only

            txn.extend(codex.refused_ask(verdict, tool_use_id))
        if allowed:
            host = verdict.decision in hostcall.HOST_DECISIONS
            if not host:  # smllm authorized it: the effect may start now
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
            entry: OpenIntent = {
                "seq": intent.sequence,
                "key": key,
                "operation": op,
                "input": call.input,
                "tool_name": call.tool,
                "decision": verdict.policy_decision,
                "pending": verdict.pending_action_id,
                "scripts": facts.get("scripts"),
            }
            if host:  # Claude Code decides: started once its authorization is known
                entry["host"] = True
            open_intents[tool_use_id] = entry
            txn.set_state("open_intents", open_intents)
    if ctx.harness == "codex":
        from smllm.harness import codex  # noqa: PLC0415 - Codex's hooks only

        return codex.pre_tool_use(verdict.decision, verdict.reason)
    return claude.pre_tool_use(verdict.decision, verdict.reason)


def _plain_fire(call: ToolCall, verdict: gate.Verdict) -> Plain | None:
    """Codex: the plain ``smllm fire``/``status`` this call is, when the gate lets it run
    (:mod:`smllm.harness.codex_fire`), else None."""
    command = call.command
    if call.tool != "Bash" or verdict.decision not in ("allow", "abstain") \
            or command is None or "smllm" not in command:
        return None
    from smllm.harness import codex_fire  # noqa: PLC0415 - a Bash call naming smllm only

    return codex_fire.parse(command)


def _fire_in_hook(ctx: HookContext, call: ToolCall, verdict: gate.Verdict,
                  plain: Plain) -> dict[str, Any]:
    """Codex: run a plain fire or status here, outside Codex's sandbox (which keeps smllm's
    store read-only to the agent's commands), and deny the call with what it printed. The
    intent keeps the gate's decision under rule ``machine.fire-in-hook``; the terminal says
    what the fire did (``fire: accepted|refused``), run by smllm, not by Codex."""
    from smllm.harness import codex, codex_fire  # noqa: PLC0415 - Codex's hooks only

    tool_use_id = str(call.tool_use_id)
    key = sidecar.idempotency_key(ctx.session_id, tool_use_id)
    op = call.operation
    refusal = codex_fire.guarded(plain, call, ctx.env)
    with ctx.transaction() as txn:
        sidecar.ensure(txn)
        transcript.ingest(txn, ctx.transcript)
        intent = txn.append(records.new(
            "side_effect_intent", operation=op, tool_name=call.tool, tool_use_id=tool_use_id,
            idempotency_key=key,
            policy_decision="deny:machine" if refusal else verdict.policy_decision,
            rule=codex_fire.RULE_GUARDED if refusal else codex_fire.RULE,
            reason=refusal or verdict.reason, pending_action_id=None,
            gate_rule=verdict.rule, input=call.input, permission_mode=call.permission_mode,
            agent_id=ctx.agent_id, ran_by=None if refusal else "smllm",
            **{k: v for k, v in verdict.facts.items() if k in ANALYSED}))
        if refusal:
            return codex.deny(refusal)
        txn.append(records.new("tool_batch.effect.started", tool_use_id=tool_use_id,
                               idempotency_key=key, intent_sequence=intent.sequence,
                               operation=op, ran_by="smllm"))
        open_intents = dict(txn.state.get("open_intents") or {})
        open_intents[tool_use_id] = {"seq": intent.sequence, "key": key, "operation": op,
                                     "input": call.input, "tool_name": call.tool,
                                     "decision": verdict.policy_decision, "pending": None,
                                     "scripts": None}
        txn.set_state("open_intents", open_intents)
    ran = codex_fire.run(plain, call, ctx.env)
    with ctx.transaction() as txn:
        open_intents = dict(txn.state.get("open_intents") or {})
        open_intents.pop(tool_use_id, None)
        txn.append(records.new(
            "tool_batch.effect.terminal", tool_use_id=tool_use_id, idempotency_key=key,
            intent_sequence=intent.sequence, operation=op,
            outcome="succeeded" if ran.ok else "failed", observed_via="PreToolUse",
            ran_by="smllm", command=plain.command, event=plain.event,
            fire=None if plain.command != "fire" else ("accepted" if ran.ok else "refused"),
            session=ran.session, exit_code=ran.code, output=ran.text))
        txn.set_state("open_intents", open_intents)
    return codex.deny(codex_fire.reason(ran))
