"""Stop: the turn ends (``completed``), unless the state machine refuses the stop.

The machine is asked first; its block reason is the seed's ``<smllm>`` events text.
A stop that follows a block without any fire is allowed (the machine's ``runaway``
rule), and a stop with ``stop_hook_active`` is never blocked by the journal itself.
"""

from __future__ import annotations

from smllm.hooks import _features
from smllm.hooks._context import HookContext
from smllm.journal import records, sidecar, transcript

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PREVIEW = 2000


def handle(ctx: HookContext) -> dict[str, Any] | None:
    block = _features.machine_stop(ctx)
    # Claude Code and Codex say what the agent said last; Gemini CLI calls it prompt_response
    last = ctx.payload.get("last_assistant_message", ctx.payload.get("prompt_response"))
    with ctx.transaction() as txn:
        sidecar.ensure(txn)
        transcript.ingest(txn, ctx.transcript)
        turn = int(txn.state.get("turns", 0))
        if block:
            txn.append(records.new("stop_blocked", turn=turn, reason=block))
        else:
            txn.append(
                records.new(
                    "completed",
                    turn=turn,
                    last_assistant_message=last[:PREVIEW] if isinstance(last, str) else None,
                    stop_hook_active=bool(ctx.payload.get("stop_hook_active")),
                )
            )
    _features.ship_in_background(ctx)
    if block:
        return {"decision": "block", "reason": block}
    return None
