"""One tool call, as every part of smllm sees it, whichever host sent it.

A harness adapter (:mod:`smllm.harness.claude` for Claude Code) parses the host's hook
payload into a :class:`ToolCall` once; the gate (:func:`smllm.gate.decide`), the state
machine's tool rules and the crash hold read it, and nothing outside ``hooks/`` and the
adapters sees the raw payload.

>>> c = ToolCall("Bash", {"command": "ls"}, cwd="/work/p", project="/work/p")
>>> c.kind, c.command
('shell', 'ls')

Hot path: no imports beyond :mod:`smllm.base.catalogue`.
"""

from __future__ import annotations

from smllm.base import catalogue as tools

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class ToolCall:
    """A tool call: what the agent asked to run, where, and under which session."""

    __slots__ = ("agent_id", "cwd", "harness", "input", "kind", "permission_mode", "project",
                 "session_id", "tool", "tool_use_id")

    def __init__(
        self,
        tool: str,
        tool_input: dict[str, Any],
        *,
        cwd: str,
        project: str,
        session_id: str | None = None,
        tool_use_id: str | None = None,
        permission_mode: str | None = None,
        agent_id: str | None = None,
        harness: str = "claude",
    ) -> None:
        self.tool = tool
        self.kind = tools.kind(tool)
        self.input = tool_input
        self.cwd = cwd
        self.project = project
        self.session_id = session_id
        self.tool_use_id = tool_use_id
        self.permission_mode = permission_mode
        self.agent_id = agent_id
        self.harness = harness

    @property
    def command(self) -> str | None:
        """The shell command of a shell call (None for other calls, or a malformed one)."""
        value = self.input.get("command") if self.kind == tools.SHELL else None
        return value if isinstance(value, str) else None

    @property
    def operation(self) -> str:
        """The journal's name for what the call does (``tool:bash``)."""
        return tools.operation(self.tool)

    def __repr__(self) -> str:
        return f"ToolCall({self.tool!r}, cwd={self.cwd!r}, project={self.project!r})"
