"""UserPromptSubmit: a turn starts (``proposed`` then ``accepted``)."""

from __future__ import annotations

from smllm.hooks import _features
from smllm.hooks._context import HookContext
from smllm.journal import records, sidecar, transcript

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def handle(ctx: HookContext) -> dict[str, Any] | None:
    p = ctx.payload
    with ctx.transaction() as txn:
        sidecar.ensure(txn)
        transcript.ingest(txn, ctx.transcript)
        turn = int(txn.state.get("turns", 0)) + 1
        proposed = txn.append(
            records.new("proposed", turn=turn, prompt=p.get("prompt"),
                          prompt_id=p.get("prompt_id"), source=p.get("source"))
        )
        txn.append(records.new("accepted", turn=turn, proposed_sequence=proposed.sequence))
        txn.set_state("turns", turn)
    location = _features.machine_prompt(ctx)
    if not location:
        return None
    return {
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": location}
    }
