"""SessionEnd: an orderly ``session.end`` with ``exit_reason`` and ``uptime_ms``, after
closing what the transcript left open."""

from __future__ import annotations

from smllm.hooks import _features
from smllm.hooks._context import HookContext
from smllm.journal import hostcall, records, sidecar, transcript

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def handle(ctx: HookContext) -> dict[str, Any] | None:
    reason = ctx.payload.get("reason")
    with ctx.transaction() as txn:
        sidecar.ensure(txn)
        transcript.ingest(txn, ctx.transcript, flush=True)
        # a call Claude Code decided whose line the transcript never showed: close it on
        # what PostToolUse saw (inferred); the rest stay open (journal/hostcall.py)
        txn.set_state("open_intents", hostcall.close_in_flight(
            txn, dict(txn.state.get("open_intents") or {}), crashed=False))
        started = int(txn.state.get("started_at_ms") or ctx.now_ms)
        txn.append(records.new("session.end", exit_reason="clean", host_reason=reason,
                               uptime_ms=max(0, ctx.now_ms - started)))
        txn.set_state("open", False)
    _features.tripwire_end(ctx)
    _features.ship_in_background(ctx)
    return None
