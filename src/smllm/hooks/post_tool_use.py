"""PostToolUse / PostToolUseFailure: the effect's terminal record, with who authorized it.

``authorized_by`` is what was observed, never assumed: smllm's own allow
(``allow:policy``, ``allow:llm_judge``, …) when smllm answered ``allow``; otherwise the
call ran because Claude Code let it: ``allow:user`` if its prompt was shown
(PermissionRequest, or smllm escalated with ``ask``), else ``allow:host``. A pending
user approval is closed first with ``decision_applied`` (inferred from the call
running) and ``approval_wait.effect.terminal``.

A call Claude Code decided (smllm deferred or asked: ``defer:host``, ``ask:user``) is
different: its PermissionRequest may still be landing, and who let it run is in the
transcript's line of the call, written after this hook. This hook keeps what it observed
(the outcome, when) and the call closes once both are known, in the same records whichever
hook lands first (:mod:`smllm.journal.hostcall`).
"""

from __future__ import annotations

from smllm.base import osfast as os
from smllm.base.digest import tagged
from smllm.hooks._context import HookContext
from smllm.journal import hostcall, records, sidecar, transcript

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def scripts_after(scripts: object) -> dict[str, str] | None:
    """Each script analysed before the run: ``unchanged``, ``changed`` or ``missing`` now
    (a script edited between the check and the run is flagged; bypass-corpus K6)."""
    if not isinstance(scripts, dict) or not scripts:
        return None
    out: dict[str, str] = {}
    for path, digest in scripts.items():
        try:
            with open(str(path), "rb") as fh:
                now = tagged(fh.read())
        except OSError:
            out[str(path)] = "missing"
            continue
        out[str(path)] = "unchanged" if now == digest else "changed"
    return out


def _has_transcript(ctx: HookContext) -> bool:
    path = ctx.transcript
    return path is not None and os.path.isfile(path)


def _outcome(ctx: HookContext) -> tuple[str, dict[str, Any]]:
    """What the call came to, and what it gave: PostToolUseFailure (Claude Code) or an
    ``error`` in Gemini CLI's ``tool_response`` is a failure."""
    p = ctx.payload
    response = p.get("tool_response")
    if ctx.event == "PostToolUseFailure":
        return ("interrupted" if p.get("is_interrupt") else "failed"), {"error": p.get("error")}
    if ctx.harness == "gemini" and isinstance(response, dict) and response.get("error"):
        return "failed", {"output": response}
    return "succeeded", {"output": response}


def handle(ctx: HookContext) -> dict[str, Any] | None:
    p = ctx.payload
    call = ctx.call
    tool_use_id = str(call.tool_use_id)
    outcome, result = _outcome(ctx)
    with ctx.transaction() as txn:
        sidecar.ensure(txn)
        open_intents = dict(txn.state.get("open_intents") or {})
        if ctx.harness == "gemini":  # Gemini names no call: the oldest open one like it
            from smllm.harness import gemini  # noqa: PLC0415 - Gemini CLI's hooks only

            tool_use_id = gemini.open_call(open_intents, p)
        intent = open_intents.get(tool_use_id) or {}
        if hostcall.host_decides(intent):
            # Claude Code decided: who let it run is known from the transcript's line of the
            # call (written after this hook) or a PermissionRequest still landing; keep what
            # was observed here, and close when both are known (journal/hostcall.py)
            observed = hostcall.observe(
                intent, ctx.event, outcome, result, duration_ms=p.get("duration_ms"),
                scripts_after=scripts_after(intent.get("scripts")))
            open_intents[tool_use_id] = observed
            txn.set_state("open_intents", open_intents)
            if not _has_transcript(ctx):  # no line will tell: close on what was observed
                del open_intents[tool_use_id]
                txn.set_state("open_intents", open_intents)
                hostcall.remember_closed(txn, [hostcall.close(
                    txn, observed, tool_use_id, observed.get("key"), None,
                    observed_via=ctx.event)])
                return None
            transcript.ingest(txn, ctx.transcript)
            transcript.settle_call(txn, tool_use_id)
            return None
        transcript.ingest(txn, ctx.transcript)
        open_intents = dict(txn.state.get("open_intents") or {})
        intent = open_intents.pop(tool_use_id, {})
        pending = transcript.waits_on_user(intent)
        if pending is not None:  # the call ran: the person approved Claude Code's prompt
            txn.extend(records.prompt_answer(pending, tool_use_id, approved=True,
                                             observed_via=ctx.event))
        txn.append(
            records.new(
                "tool_batch.effect.terminal",
                tool_use_id=tool_use_id,
                idempotency_key=sidecar.idempotency_key(ctx.session_id, tool_use_id),
                intent_sequence=intent.get("seq"),
                operation=call.operation,
                outcome=outcome,
                observed_via="hook",
                authorized_by=transcript.authorized_by(intent),
                scripts_after=scripts_after(intent.get("scripts")),
                duration_ms=p.get("duration_ms"),
                **result,
            )
        )
        txn.set_state("open_intents", open_intents)
    return None
