"""PostToolUse / PostToolUseFailure: the effect's terminal record."""

from __future__ import annotations

from typing import Any

from smllm import journal, sessionstate, transcript
from smllm.hooks._context import HookContext


def handle(ctx: HookContext) -> dict[str, Any] | None:
    p = ctx.payload
    tool_use_id = str(p["tool_use_id"])
    failed = ctx.event == "PostToolUseFailure"
    outcome = "interrupted" if failed and p.get("is_interrupt") else ("failed" if failed else
                                                                     "succeeded")
    with ctx.transaction() as txn:
        sessionstate.ensure(txn)
        transcript.ingest(txn, ctx.transcript)
        open_intents = dict(txn.state.get("open_intents") or {})
        intent = open_intents.pop(tool_use_id, None) or {}
        record: dict[str, Any] = {
            "tool_use_id": tool_use_id,
            "idempotency_key": sessionstate.idempotency_key(ctx.session_id, tool_use_id),
            "intent_sequence": intent.get("seq"),
            "operation": sessionstate.operation(str(p["tool_name"])),
            "outcome": outcome,
            "observed_via": "hook",
            "duration_ms": p.get("duration_ms"),
        }
        if failed:
            record["error"] = p.get("error")
        else:
            record["output"] = p.get("tool_response")
        txn.append(journal.fact("tool_batch.effect.terminal", record))
        txn.set_state("open_intents", open_intents)
        txn.set_state("last_activity_ms", ctx.now_ms)
    return None
