"""Per-state tool rules (``meta.tools: {allow: [...], deny: [...]}``), for PreToolUse.

A rule is ``Tool`` or ``Tool(glob)``: the glob matches a file tool's path relative
to the project (``Edit(tests/**)``), or the start of a Bash command (``Bash(pytest*)``).
``deny`` wins; when ``allow`` is given, a call must match one of its rules. Firing
events is always allowed (the ``smllm`` MCP tool, and a plain ``smllm fire`` in Bash
without shell operators), so that a state's rules can never trap the agent.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from smllm.base import catalogue
from smllm.base import osfast as os

if TYPE_CHECKING:
    from smllm.base.shapes import ToolRules

PATH_KEYS = catalogue.PATH_KEYS
_FIRE = re.compile(r"\s*smllm\s+(fire|status|reconcile)(\s[^;&|`$<>\n\\()]*)?\s*")


@lru_cache(maxsize=256)
def _glob(pattern: str) -> re.Pattern[str]:
    out = ""
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
        elif pattern.startswith("**", i):
            out += ".*"
            i += 2
        elif pattern[i] == "*":
            out += "[^/]*"
            i += 1
        elif pattern[i] == "?":
            out += "[^/]"
            i += 1
        else:
            out += re.escape(pattern[i])
            i += 1
    return re.compile(out, re.DOTALL)


def _subject(tool: str, tool_input: dict[str, Any], root: str) -> str | None:
    if tool == "Bash":
        cmd = tool_input.get("command")
        return cmd.strip() if isinstance(cmd, str) else None
    for key in PATH_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            full = os.path.normpath(os.path.join(root, value))
            rel = os.path.relpath(full, root)
            return full if rel.startswith("..") else rel
    return None


def matches(rule: str, tool: str, tool_input: dict[str, Any], root: str) -> bool:
    name, _, rest = rule.partition("(")
    if not _glob(name).fullmatch(tool):
        return False
    if not rest:
        return True
    subject = _subject(tool, tool_input, root)
    if subject is None:
        return False
    pattern = rest[:-1]
    if tool == "Bash":
        return _glob(pattern.replace("*", "**")).fullmatch(subject) is not None
    return _glob(pattern).fullmatch(subject) is not None


#: smllm's own MCP tool: from ``smllm install``'s server, and from the plugin's
OWN_MCP_TOOLS = frozenset({"mcp__smllm__smllm", "mcp__plugin_smllm_smllm__smllm"})


def own_fire(tool: str, tool_input: dict[str, Any]) -> bool:
    """Is this call smllm's own firing (its MCP tool, or a plain ``smllm fire``/``status``,
    or ``smllm reconcile`` after a crash, in Bash: one simple command, no shell operator,
    substitution or redirection)?"""
    if tool in OWN_MCP_TOOLS:
        return True
    if tool == "Bash":
        cmd = tool_input.get("command")
        return isinstance(cmd, str) and _FIRE.fullmatch(cmd) is not None
    return False


def check(rules: ToolRules | None, tool: str, tool_input: dict[str, Any],
          root: str) -> str | None:
    """Why the state's rules forbid this call, or None when they allow it (smllm's own
    firing always: firing events must stay possible in every state)."""
    if not rules or own_fire(tool, tool_input):
        return None
    for rule in rules.get("deny") or []:
        if matches(rule, tool, tool_input, root):
            return f"denied by {rule}"
    allow = rules.get("allow")
    if allow is not None and not any(matches(r, tool, tool_input, root) for r in allow):
        return f"not allowed (allowed: {', '.join(allow) or 'nothing'})"
    return None


def describe_call(tool: str, tool_input: dict[str, Any], root: str) -> str:
    subject = _subject(tool, tool_input, root)
    if subject is None:
        return tool
    if len(subject) > 80:
        subject = subject[:77] + "..."
    return f"{tool}({subject})"
