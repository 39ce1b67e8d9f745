"""Harness adapters: how each host's hooks speak, mapped onto smllm's one model.

An adapter owns three mappings for its host: the hook payload -> :class:`ToolCall`
(:mod:`smllm.base.catalogue`), a :class:`smllm.gate.Verdict` -> the decision JSON that is
safe on that host, and the deny that is printed when nothing else can be. Claude Code's
is :mod:`smllm.harness.claude`, Codex's :mod:`smllm.harness.codex`.

The first mapping is the same for every host once its adapter has the payload in the
shared shape (``tool_name``, ``tool_input``, ``session_id``, ``cwd`` and, where the host
has them, ``tool_use_id``, ``permission_mode``, ``agent_id``): :func:`tool_call` here. What
differs between hosts is two facts the adapter gives it:

* where the project is: declared by the host (Claude Code's ``CLAUDE_PROJECT_DIR``, read
  from ``env``), or found from the call's ``cwd`` alone (``env={}``: a host that declares
  none, so an inherited variable naming another project is not read);
* the host's tool names and argument shapes: ``tools`` maps a host's tool onto the
  catalogue's with its input keys renamed, so the gate, the machines' tool rules and the
  ledger see ``Bash``/``Write``/``Edit`` whichever host sent the call.

>>> tools = {"create": ("Write", (("path", "file_path"), ("file_text", "content")))}
>>> call = tool_call({"tool_name": "create", "tool_input": {"path": "/p/a.md", "file_text": "x"},
...                   "session_id": "s", "cwd": "/p"}, "copilot", env={}, tools=tools)
>>> call.tool, call.input, call.harness
('Write', {'file_path': '/p/a.md', 'content': 'x'}, 'copilot')

Hot path: ``os`` and smllm's base only (the modules every tool event loads anyway), so the
builder costs a hook no module of its own.
"""

from __future__ import annotations

import os

from smllm.base import paths
from smllm.base.catalogue import ToolCall

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

def renamed(tool_input: Mapping[str, Any], keys: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    """``tool_input`` with each of the host's keys renamed to the catalogue's (the other keys
    kept as they are).

    >>> renamed({"path": "a", "view_range": [1, 2]}, (("path", "file_path"),))
    {'view_range': [1, 2], 'file_path': 'a'}
    """
    out = dict(tool_input)
    for theirs, ours in keys:
        if theirs in out:
            out[ours] = out.pop(theirs)
    return out


def _text(payload: Mapping[str, Any], key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) else None


def tool_call(payload: Mapping[str, Any], harness: str, *, env: Mapping[str, str],
              tools: dict[str, tuple[str, tuple[tuple[str, str], ...]]] | None = None,
              ) -> ToolCall:
    """The call a (validated) tool event's payload names, for ``harness``: the project from
    ``env``'s declared folder or else from ``cwd``; a tool ``tools`` names as the
    catalogue's tool with its keys renamed, any other as the host named it."""
    where = _text(payload, "cwd") or os.getcwd()
    name = str(payload["tool_name"])
    tool_input: dict[str, Any] = payload["tool_input"]
    mapped = tools.get(name) if tools else None
    if mapped is not None:
        name, keys = mapped
        tool_input = renamed(tool_input, keys)
    return ToolCall(
        name,
        tool_input,
        cwd=where,
        project=paths.project_root(where, env),
        session_id=str(payload["session_id"]),
        tool_use_id=_text(payload, "tool_use_id"),
        permission_mode=_text(payload, "permission_mode"),
        agent_id=_text(payload, "agent_id"),
        harness=harness,
    )
