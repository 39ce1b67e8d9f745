"""PermissionRequest: Claude Code is about to show its own approval prompt.

The request is journaled as an ``approval.review`` requested of the ``user`` reviewer;
smllm does not answer it (the person at the prompt does).
"""

from __future__ import annotations

from typing import Any

from smllm import journal, sessionstate, transcript
from smllm.hooks._context import HookContext


def handle(ctx: HookContext) -> dict[str, Any] | None:
    p = ctx.payload
    with ctx.transaction() as txn:
        sessionstate.ensure(txn)
        transcript.ingest(txn, ctx.transcript)
        txn.append(
            journal.fact(
                "approval.review",
                {
                    "state": "requested",
                    "reviewer": "user",
                    "operation": sessionstate.operation(str(p["tool_name"])),
                    "tool_name": p["tool_name"],
                    "action": p["tool_input"],
                    "choices": ["allow_once", "always_allow_in_workspace", "reject"],
                    "permission_suggestions": p.get("permission_suggestions"),
                },
            )
        )
    return None
