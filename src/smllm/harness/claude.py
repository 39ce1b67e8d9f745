"""Claude Code's hooks: its PreToolUse payload as a :class:`ToolCall`, and the decision
JSON it reads back (``hookSpecificOutput.permissionDecision``).

>>> call = tool_call({"tool_name": "Bash", "tool_input": {"command": "ls"},
...                   "cwd": "/work/p", "tool_use_id": "t1", "session_id": "s"},
...                  {"CLAUDE_PROJECT_DIR": "/work/p"})
>>> call.project, call.tool_use_id
('/work/p', 't1')
>>> pre_tool_use("deny", "no")["hookSpecificOutput"]["permissionDecision"]
'deny'
>>> pre_tool_use("abstain", "Claude Code decides") is None
True

Hot path: smllm's base and :mod:`smllm.harness` only.
"""

from __future__ import annotations

from smllm import harness

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from smllm.base.catalogue import ToolCall

HARNESS = "claude"
#: the one event whose answer gates a call
GATING_EVENT = "PreToolUse"


def tool_call(payload: dict[str, Any], env: Mapping[str, str]) -> ToolCall:
    """The call a (validated) PreToolUse or PermissionRequest payload asks for (the project
    declared by ``CLAUDE_PROJECT_DIR`` in ``env``; Claude Code's own tool names)."""
    return harness.tool_call(payload, HARNESS, env=env)


def pre_tool_use(decision: str, reason: str) -> dict[str, Any] | None:
    """The PreToolUse answer: ``allow``, ``ask`` or ``deny`` with its reason; nothing for
    ``abstain`` (Claude Code's own permissions decide)."""
    return None if decision == "abstain" else _answer(decision, reason)


def deny(reason: str) -> dict[str, Any]:
    """A PreToolUse deny with its reason (the fail-closed answer on every error path)."""
    return _answer("deny", reason)


def _answer(decision: str, reason: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": GATING_EVENT,
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }
