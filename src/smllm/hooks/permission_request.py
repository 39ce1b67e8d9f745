"""PermissionRequest: Claude Code is about to show its own approval prompt.

The request is journaled as an ``approval.review`` requested of the ``user`` reviewer,
threaded to the call's intent: the open intent with the same tool and input gets the
``pending_action_id`` (the gate's own, when smllm escalated with ``ask``; a new one
with an ``approval_wait.effect.started`` otherwise). When the call then runs,
PostToolUse records the person's approval (``allow:user``). smllm does not answer the
prompt itself.

This hook runs while the person answers, so it may land after PostToolUse: a call Claude
Code decides stays open until the transcript's line of it says who decided
(:mod:`smllm.journal.hostcall`), so the journal is the same either way; a prompt of a call
already closed with its prompt read from the transcript adds nothing.
"""

from __future__ import annotations

from smllm.base import clock
from smllm.hooks._context import HookContext
from smllm.journal import hostcall, records, sidecar, transcript

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from smllm.base.shapes import OpenIntent


def _matching_intent(open_intents: dict[str, OpenIntent], tool_name: str,
                     tool_input: Any) -> str | None:
    best: tuple[int, str] | None = None
    for tool_use_id, entry in open_intents.items():
        if entry.get("prompted"):
            continue
        if entry.get("tool_name") == tool_name and entry.get("input") == tool_input:
            seq = int(entry.get("seq") or 0)
            if best is None or seq > best[0]:
                best = (seq, tool_use_id)
    return best[1] if best else None


def handle(ctx: HookContext) -> dict[str, Any] | None:
    call = ctx.call
    with ctx.transaction() as txn:
        sidecar.ensure(txn)
        transcript.ingest(txn, ctx.transcript)
        open_intents = dict(txn.state.get("open_intents") or {})
        tool_use_id = _matching_intent(open_intents, call.tool, call.input)
        if tool_use_id is None:
            late = hostcall.closed_match(txn, call.tool, call.input)
            if late is not None and late.get("reviewed"):
                # the call closed before this hook landed, its prompt already recorded from
                # the transcript: the journal is the one an earlier landing gives
                return None
        entry: OpenIntent = open_intents[tool_use_id].copy() if tool_use_id else {}
        pending = entry.get("pending") or clock.new_id("pa-")
        txn.append(
            records.approval_requested(
                pending, tool_use_id, call.operation, call.tool, call.input, ["user"],
                permission_suggestions=ctx.payload.get("permission_suggestions"),
            )
        )
        if not entry.get("pending"):
            txn.append(
                records.new(
                    "approval_wait.effect.started",
                    pending_action_id=pending,
                    tool_use_id=tool_use_id,
                    reviewers=["user"],
                )
            )
        if tool_use_id:
            entry["prompted"] = True
            entry["pending"] = pending
            open_intents[tool_use_id] = entry
            txn.set_state("open_intents", open_intents)
        else:  # no open call to thread it to: the wait cannot be answered, say so now
            txn.append(records.new(
                "approval_wait.effect.terminal", pending_action_id=pending, outcome="unknown",
                tool_use_id=None, inferred="no open call of this session matches the prompt"))
    return None
