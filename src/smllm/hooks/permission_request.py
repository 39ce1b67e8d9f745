"""PermissionRequest: Claude Code is about to show its own approval prompt.

The request is journaled as an ``approval.review`` requested of the ``user`` reviewer,
threaded to the call's intent: the open intent with the same tool and input gets the
``pending_action_id`` (the gate's own, when smllm escalated with ``ask``; a new one
with an ``approval_wait.effect.started`` otherwise). When the call then runs,
PostToolUse records the person's approval (``allow:user``). smllm does not answer the
prompt itself.
"""

from __future__ import annotations

from smllm.base import clock
from smllm.hooks._context import HookContext
from smllm.journal import records, sidecar, transcript

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
    return None
