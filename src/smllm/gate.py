"""The approval gate's place in PreToolUse: one function, :func:`evaluate`.

It returns a :class:`Verdict`: what smllm answers Claude Code (``decision``) and what
the journal stamps on the intent (``policy_decision``, e.g. ``allow:policy``). Any
approval chain it runs (review requested → wait → decision) is journaled by the gate
itself, before it returns, in the session's journal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from smllm.hooks._context import HookContext

HostDecision = Literal["allow", "ask", "deny", "abstain"]


@dataclass(frozen=True)
class Verdict:
    decision: HostDecision
    policy_decision: str
    reason: str
    rule: str | None = None
    pending_action_id: str | None = None
    facts: dict[str, Any] = field(default_factory=dict)


def evaluate(ctx: HookContext) -> Verdict:
    """Decide on one tool call. Every call passes by static policy for now."""
    return Verdict("abstain", "allow:policy", "ordinary tool call", rule="default")
