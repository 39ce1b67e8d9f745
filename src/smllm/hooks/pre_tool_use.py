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
from smllm.base import catalogue
from smllm.gate import policy
from smllm.harness import claude
from smllm.hooks import _features
from smllm.hooks._context import HookContext
from smllm.journal import hostcall, records, sidecar, transcript

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType
    from typing import Any

    from smllm.base.catalogue import ToolCall
    from smllm.base.shapes import OpenIntent
    from smllm.harness import journal_commands
    from smllm.harness.codex_fire import Plain, Ran
    from smllm.journal import Transaction
    from smllm.journal.codec import Entry


#: the kinds of call whose tool writes files outside the sandbox (Claude Code's own, MCP)
WRITING = frozenset({catalogue.WRITE, catalogue.MCP})
#: what the intent keeps of the call's one analysis (so no reader analyses it again)
ANALYSED = ("known_safe", "confined_to", "targets", "targets_omitted")
#: the rule of a call denied because smllm's worker socket was not smllm's (smllm.worker)
FOREIGN_WORKER = "worker.foreign-listener"
#: and of the decision, when there is one: a workspace grant of this very call that no
#: longer covers it (its id, and what changed since it was reviewed)
KEPT = (*ANALYSED, "grant_mismatch")


def _verdict(ctx: HookContext, call: ToolCall) -> gate.Verdict:
    if ctx.refusal is not None:  # nothing was handed to the impostor: denied, journaled here
        return gate.Verdict("deny", "deny:policy", ctx.refusal, rule=FOREIGN_WORKER)
    compiled = policy.load(call.project)
    world = gate.World(
        compiled,
        held=lambda c: _features.held_effect(ctx, c),
        machine_rule=lambda c: _features.machine_tool_rule(ctx, c),
        tripped=ctx.tripped,
        fresh=lambda: _features.fresh(ctx),
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


def _adapter(ctx: HookContext) -> ModuleType | None:
    """The adapter of a host without smllm's prompt (Codex, Copilot, Gemini CLI:
    ``verdict``, ``refused_ask``, ``pre_tool_use``, ``deny``); None for Claude Code."""
    if ctx.harness == "codex":
        from smllm.harness import codex  # noqa: PLC0415 - Codex's hooks only

        return codex
    if ctx.harness == "copilot":
        from smllm.harness import copilot  # noqa: PLC0415 - Copilot's hooks only

        return copilot
    if ctx.harness == "gemini":
        from smllm.harness import gemini  # noqa: PLC0415 - Gemini CLI's hooks only

        return gemini
    return None


def handle(ctx: HookContext) -> dict[str, Any] | None:
    call = ctx.call
    adapter = _adapter(ctx)
    if adapter is not None:
        verdict: gate.Verdict = adapter.verdict(call, lambda c: _verdict(ctx, c),
                                                lambda c: _features.held_effect(ctx, c))
        # Codex and Gemini keep smllm's store read-only to the agent's commands, so a plain
        # fire runs here; Copilot's commands write it like its hooks (docs/harness/copilot.md)
        plain = _plain_fire(call, verdict) if ctx.harness in ("codex", "gemini") else None
        if plain is not None:
            return _fire_in_hook(ctx, call, verdict, plain)
    else:
        verdict = _verdict(ctx, call)
        own = _journal_command(call, verdict)
        if own is not None:
            return _journal_in_hook(ctx, call, verdict, own)
    facts = verdict.facts
    tool_use_id = str(call.tool_use_id)
    op = call.operation
    allowed = verdict.decision in ("allow", "abstain", "ask")  # no prompt: verdict() made ask deny
    host_tool = ctx.payload.get("tool_name") if ctx.payload.get("tool_name") != call.tool else None
    with ctx.transaction() as txn:
        sidecar.ensure(txn)
        tool_use_id = _unique_id(ctx, txn, tool_use_id)
        key = sidecar.idempotency_key(ctx.session_id, tool_use_id)
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
                # the host's own name of a tool the catalogue names otherwise (Copilot)
                **({"host_tool": host_tool} if host_tool else {}),
                **{k: v for k, v in facts.items() if k in KEPT},
            )
        )
        if adapter is not None:
            txn.extend(adapter.refused_ask(verdict, tool_use_id))
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
            if call.kind in WRITING:  # the folders the file tool will make are the host's
                _features.record_host_folder(txn, call)
    if adapter is not None:
        answer: dict[str, Any] | None = adapter.pre_tool_use(verdict.decision, verdict.reason)
        return answer
    return claude.pre_tool_use(verdict.decision, verdict.reason)


def _unique_id(ctx: HookContext, txn: Transaction, tool_use_id: str) -> str:
    """The call's id: Gemini CLI gives none, so smllm's (:func:`smllm.harness.gemini.call_id`)
    is made unique among the open calls, under the journal's lock."""
    if ctx.harness != "gemini":
        return tool_use_id
    from smllm.harness import gemini  # noqa: PLC0415 - Gemini CLI's hooks only

    return gemini.unique(tool_use_id, txn.state.get("open_intents") or {})


def _smllm_command(call: ToolCall, verdict: gate.Verdict) -> str | None:
    """The command line of a Bash call that names ``smllm`` and that the gate lets run (a
    candidate for a command smllm runs from this hook), else None."""
    command = call.command
    if call.tool != "Bash" or verdict.decision not in ("allow", "abstain") \
            or command is None or "smllm" not in command:
        return None
    return command


def _plain_fire(call: ToolCall, verdict: gate.Verdict) -> Plain | None:
    """Codex and Gemini CLI: the plain ``smllm fire``/``status`` this call is, when the gate
    lets it run (:mod:`smllm.harness.codex_fire`), else None."""
    command = _smllm_command(call, verdict)
    if command is None:
        return None
    from smllm.harness import codex_fire  # noqa: PLC0415 - a Bash call naming smllm only

    return codex_fire.parse(command)


def _journal_command(call: ToolCall, verdict: gate.Verdict) -> journal_commands.Plain | None:
    """Claude Code: the plain ``smllm ledger``/``export``/``verify`` of the agent's own
    session this call is, when the gate lets it run
    (:mod:`smllm.harness.journal_commands`), else None."""
    command = _smllm_command(call, verdict)
    if command is None:
        return None
    from smllm.harness import journal_commands  # noqa: PLC0415 - a Bash call naming smllm only

    return journal_commands.parse(command)


def _journal_in_hook(ctx: HookContext, call: ToolCall, verdict: gate.Verdict,
                     plain: journal_commands.Plain) -> dict[str, Any]:
    """Claude Code: run the agent's journal command here, outside the sandbox (which hides
    every journal), on this session's journal only, and deny the call with its output."""
    from smllm.harness import journal_commands  # noqa: PLC0415 - a Bash call naming smllm only

    log = ctx.main_log_path
    refused = journal_commands.refusal(plain, ctx.session_id, log)
    ran = _run_in_hook(
        ctx, call, verdict, refused=refused,
        rule=journal_commands.RULE_REFUSED if refused else journal_commands.RULE,
        run=lambda: journal_commands.run(plain, call, log), allowed_as="allow:policy",
        fields={"command": plain.command})
    return claude.deny(refused or journal_commands.reason(ran))


def _fire_in_hook(ctx: HookContext, call: ToolCall, verdict: gate.Verdict,
                  plain: Plain) -> dict[str, Any]:
    """Codex and Gemini CLI: run a plain fire or status here, outside the host's sandbox
    (which keeps smllm's store read-only to the agent's commands), and deny the call with
    what it printed. The intent keeps the gate's decision under rule
    ``machine.fire-in-hook``; the terminal says what the fire did (``fire:
    accepted|refused``), run by smllm, not by the host."""
    from smllm.harness import codex_fire  # noqa: PLC0415 - Codex's and Gemini's hooks only

    host = _adapter(ctx)
    assert host is not None  # a host without smllm's prompt: see handle()

    ran = _run_in_hook(
        ctx, call, verdict, refused=None, rule=codex_fire.RULE,
        run=lambda: codex_fire.run(plain, call, ctx.env),
        fields={"command": plain.command, "event": plain.event},
        outcome=lambda r: {"fire": None if plain.command != "fire" else
                           ("accepted" if r.ok else "refused"), "session": r.session})
    answer: dict[str, Any] = host.deny(codex_fire.reason(ran, ctx.harness))
    return answer


def _run_in_hook(ctx: HookContext, call: ToolCall, verdict: gate.Verdict, *,
                 refused: str | None, rule: str, run: Callable[[], Ran],
                 fields: dict[str, Any], refused_by: str = "deny:policy",
                 allowed_as: str | None = None,
                 outcome: Callable[[Ran], dict[str, Any]] | None = None) -> Ran:
    """A command smllm runs itself from this hook (outside the agent's sandbox) instead of
    letting the host run it: the intent (the gate's decision kept as ``gate_rule``; or,
    ``refused``, smllm's deny), ``started`` and ``terminal`` records ``ran_by: smllm``
    around :func:`run`. ``allowed_as``: the intent's decision when smllm's own rule, not the
    gate's answer to the host, authorized running it. Returns what it gave (nothing ran
    when ``refused``)."""
    decision = allowed_as or verdict.policy_decision
    op = call.operation
    with ctx.transaction() as txn:
        sidecar.ensure(txn)
        tool_use_id = _unique_id(ctx, txn, str(call.tool_use_id))
        key = sidecar.idempotency_key(ctx.session_id, tool_use_id)
        transcript.ingest(txn, ctx.transcript)
        intent = txn.append(records.new(
            "side_effect_intent", operation=op, tool_name=call.tool, tool_use_id=tool_use_id,
            idempotency_key=key,
            policy_decision=refused_by if refused else decision,
            rule=rule, reason=refused or verdict.reason, pending_action_id=None,
            gate_rule=verdict.rule, input=call.input, permission_mode=call.permission_mode,
            agent_id=ctx.agent_id, ran_by=None if refused else "smllm",
            **{k: v for k, v in verdict.facts.items() if k in ANALYSED}))
        if refused:
            from smllm.harness.codex_fire import Ran  # noqa: PLC0415 - a refusal only

            return Ran(False, 1, refused, None)
        txn.append(records.new("tool_batch.effect.started", tool_use_id=tool_use_id,
                               idempotency_key=key, intent_sequence=intent.sequence,
                               operation=op, ran_by="smllm"))
        open_intents = dict(txn.state.get("open_intents") or {})
        open_intents[tool_use_id] = {"seq": intent.sequence, "key": key, "operation": op,
                                     "input": call.input, "tool_name": call.tool,
                                     "decision": decision, "pending": None,
                                     "scripts": None}
        txn.set_state("open_intents", open_intents)
    ran = run()
    with ctx.transaction() as txn:
        open_intents = dict(txn.state.get("open_intents") or {})
        open_intents.pop(tool_use_id, None)
        txn.append(records.new(
            "tool_batch.effect.terminal", tool_use_id=tool_use_id, idempotency_key=key,
            intent_sequence=intent.sequence, operation=op,
            outcome="succeeded" if ran.ok else "failed", observed_via="PreToolUse",
            ran_by="smllm", **fields, **(outcome(ran) if outcome is not None else {}),
            exit_code=ran.code, output=ran.text))
        txn.set_state("open_intents", open_intents)
    return ran
