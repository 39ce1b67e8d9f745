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

Hot path: ``os`` and smllm's base only.
"""

from __future__ import annotations

import os

from smllm.base import paths
from smllm.base.catalogue import ToolCall

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

HARNESS = "claude"
#: the one event whose answer gates a call
GATING_EVENT = "PreToolUse"


def tool_call(payload: dict[str, Any], env: Mapping[str, str]) -> ToolCall:
    """The call a (validated) PreToolUse or PermissionRequest payload asks for."""
    cwd = payload.get("cwd")
    where = cwd if isinstance(cwd, str) and cwd else os.getcwd()
    agent = payload.get("agent_id")
    mode = payload.get("permission_mode")
    use = payload.get("tool_use_id")
    return ToolCall(
        str(payload["tool_name"]),
        payload["tool_input"],
        cwd=where,
        project=paths.project_root(where, env),
        session_id=str(payload["session_id"]),
        tool_use_id=use if isinstance(use, str) else None,
        permission_mode=mode if isinstance(mode, str) else None,
        agent_id=agent if isinstance(agent, str) else None,
        harness=HARNESS,
    )


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
