"""How the agent of a Claude Code session fires events: the MCP tool, or Bash.

The ``<smllm>`` texts end with one way to fire (seed 001's ``smllm({ session, event,
params })``: smllm's MCP tool). That tool exists in the plugin route (the plugin serves
it) and in a project install (``smllm install`` registers the server in the project's
``.mcp.json`` and approves it); a local or user install registers no server, and the
texts then name ``smllm fire`` instead. Decided once, when SessionStart binds the
session (slow path: a few small JSON files), and kept in the binding.

The Bash form is chosen only where the route is known to lack the tool: smllm's hooks
are installed in a settings file and no ``smllm`` MCP server is registered. Anything
else (the plugin, a registered server, hooks run by hand) keeps seed 001's MCP text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from smllm.base import osfast as os
from smllm.base import paths

MCP = "mcp"
BASH = "bash"
SERVER = "smllm"


def _read(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _settings(root: str, env: Mapping[str, str]) -> list[dict[str, Any]]:
    """The user, project and local settings Claude Code reads for ``root``."""
    return [_read(f) for f in (os.path.join(paths.claude_root(env), "settings.json"),
                               os.path.join(root, ".claude", "settings.json"),
                               os.path.join(root, ".claude", "settings.local.json"))]


def _approved(sources: list[dict[str, Any]]) -> bool:
    """Do these settings (and the project's entry in ``~/.claude.json``) have Claude Code
    start the project's ``.mcp.json`` server named smllm?"""
    approved = False
    for data in sources:
        if SERVER in (data.get("disabledMcpjsonServers") or []):
            return False
        if data.get("enableAllProjectMcpServers") is True \
                or SERVER in (data.get("enabledMcpjsonServers") or []):
            approved = True
    return approved


def _claude_json(env: Mapping[str, str]) -> dict[str, Any]:
    return _read(paths.claude_json(env))


def _project_state(claude_json: dict[str, Any], root: str) -> dict[str, Any]:
    """What Claude Code keeps about the project in ``~/.claude.json`` (the /mcp approvals,
    local-scope servers)."""
    projects = claude_json.get("projects")
    entry = projects.get(root) if isinstance(projects, dict) else None
    return entry if isinstance(entry, dict) else {}


def _has_server(data: dict[str, Any]) -> bool:
    servers = data.get("mcpServers")
    return isinstance(servers, dict) and SERVER in servers


def _our_hooks(data: dict[str, Any]) -> bool:
    from smllm.setup import settings  # noqa: PLC0415 - json, re: reading a settings file only

    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return False
    for groups in hooks.values():
        for group in groups if isinstance(groups, list) else []:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if any(settings.smllm_event_of(h) is not None
                   for h in (inner if isinstance(inner, list) else [])):
                return True
    return False


def detect(cwd: str, env: Mapping[str, str], harness: str = "claude") -> str:
    """``bash`` where smllm's hooks come from a settings file and no MCP server named
    smllm is registered for the session, and on Gemini CLI (no smllm MCP tool there: its
    hook runs a plain ``smllm fire --session KEY EVENT`` itself); ``mcp`` otherwise."""
    if harness == "gemini":
        return BASH
    if env.get("CLAUDE_PLUGIN_ROOT"):
        return MCP
    root = paths.declared_project(env) or cwd
    settings = _settings(root, env)
    claude_json = _claude_json(env)  # each file read once: ~/.claude.json may be large
    project = _project_state(claude_json, root)
    if _has_server(_read(os.path.join(root, ".mcp.json"))) and _approved([*settings, project]):
        return MCP
    if _has_server(claude_json) or _has_server(project):
        return MCP  # a user-scope or local-scope server (`claude mcp add`)
    return BASH if any(_our_hooks(d) for d in settings) else MCP
