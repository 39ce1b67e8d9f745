"""What lets an agent fire events in every permission mode, and what install adds for it.

Claude Code asks before it runs a Bash command or an MCP tool that no rule allows, and
where nobody can answer (``claude -p``, ``dontAsk`` mode) the ask is a refusal: an
agent in a state machine could not move on. smllm's PreToolUse hook therefore allows its
own firing itself (rule ``machine.fire``, :data:`OWN_FIRE`) in a session bound to a state
machine: a plain ``smllm fire …`` or ``smllm status …`` and its MCP tool.

So install writes **no permission rules**. Earlier versions added narrow allow rules
(:data:`OLD_RULES`), but Claude Code ignores a project's ``permissions.allow`` (and a
git-tracked ``settings.local.json``'s) until the folder is trusted, and says so on every
``claude -p`` ("Ignoring 4 permissions.allow entries … not been trusted"); the hook made
them redundant. Install and uninstall remove them (:func:`remove`).

In project scope, where the project uses state machines (its ``.smllm/config.toml`` names
machine files, or the user's config does: :func:`uses_machines`), install registers the
MCP server ``smllm`` (``<python> -I -m smllm mcp``) in the project's ``.mcp.json`` and
``"smllm"`` in ``enabledMcpjsonServers``, so the tool the ``<smllm>`` texts name
(``smllm({ session, event, params })``) exists in this route too. Claude Code starts every
registered server at every session start and stops it at the end (about 140 ms a session,
issue 25), so a project without machines, where nothing fires, gets none. A local or user
install registers no MCP server (a local-scope or user-scope one would live in Claude
Code's own ``~/.claude.json``). Wherever no server is registered (also where machines are
added after install) the texts name ``smllm fire`` instead (:mod:`smllm.machine.channel`);
re-running ``smllm install`` then registers the server.

What install added is written in its record, so that uninstall removes exactly that.
"""

from __future__ import annotations

import os
from typing import Any

#: the allow rules earlier versions of install added (removed by install and uninstall)
ALLOW_BASH = ("Bash(smllm fire *)", "Bash(smllm status)", "Bash(smllm status *)")
MCP_SERVER = "smllm"
MCP_TOOL = "mcp__smllm__smllm"
MCP_FILE = ".mcp.json"
OLD_RULES = (*ALLOW_BASH, MCP_TOOL)
#: why no permission rule is needed, in plain words (install's summary, doctor)
OWN_FIRE = ("smllm's own hook lets the agent run `smllm fire` and `smllm status` (and "
            "smllm's MCP tool) in a session bound to a state machine, in every permission "
            "mode")


def uses_machines(project: str | os.PathLike[str]) -> bool:
    """Are state machines configured for ``project``: does its ``.smllm/config.toml`` or
    the user's config name machine files? A config that cannot be
    read counts as using them (firing must work once it is fixed)."""
    from smllm import machine  # noqa: PLC0415 - install and doctor only
    from smllm.base.errors import SmllmError  # noqa: PLC0415 - install and doctor only
    from smllm.machine import catalog  # noqa: PLC0415 - install and doctor only: tomllib, pydantic

    for config in machine.project_configs(os.fspath(project)):
        try:
            if catalog.read_config(config):
                return True
        except SmllmError:
            return True
    return False


def registers_mcp(scope: str, project: str | os.PathLike[str] | None = None) -> bool:
    """Does an install in this scope, into ``project``, register the MCP server (in the
    project's .mcp.json)? A project install where the project uses machines; without a
    project to look at, no."""
    return scope == "project" and project is not None and uses_machines(project)


def add(data: dict[str, Any], scope: str, project: str | os.PathLike[str] | None = None
        ) -> tuple[dict[str, Any], dict[str, Any]]:
    """``data`` with the MCP server's approval (a project install into a project that uses
    machines), and what was added."""
    out = dict(data)
    enabled = False
    if registers_mcp(scope, project):
        servers = list(out.get("enabledMcpjsonServers") or [])
        if MCP_SERVER not in servers:
            out["enabledMcpjsonServers"] = [*servers, MCP_SERVER]
            enabled = True
    return out, {"allow": [], "enabledMcpjsonServers": enabled}


def old_rules(data: dict[str, Any]) -> list[str]:
    """The allow rules of earlier installs that ``data`` still holds."""
    allow = (data.get("permissions") or {}).get("allow") if isinstance(
        data.get("permissions"), dict) else None
    return [r for r in OLD_RULES if isinstance(allow, list) and r in allow]


def remove(data: dict[str, Any], added: dict[str, Any] | None, *,
           servers: bool = True) -> tuple[dict[str, Any], int]:
    """``data`` without what install added (all of smllm's rules when the record is lost),
    and how many entries went; ``servers=False`` keeps the MCP server's approval. A list
    or object left empty by the removal goes too."""
    rules = set(added["allow"]) if added else set(OLD_RULES)
    out = dict(data)
    removed = 0
    permissions = out.get("permissions")
    if isinstance(permissions, dict) and isinstance(permissions.get("allow"), list):
        allow = [r for r in permissions["allow"] if r not in rules]
        removed += len(permissions["allow"]) - len(allow)
        if len(allow) != len(permissions["allow"]):
            permissions = {k: (allow if k == "allow" else v) for k, v in permissions.items()
                           if k != "allow" or allow}
            out = {k: (permissions if k == "permissions" else v) for k, v in out.items()
                   if k != "permissions" or permissions}
    enabled = out.get("enabledMcpjsonServers")
    if servers and (added is None or added.get("enabledMcpjsonServers")) \
            and isinstance(enabled, list) and MCP_SERVER in enabled:
        kept = [s for s in enabled if s != MCP_SERVER]
        removed += 1
        if kept:
            out["enabledMcpjsonServers"] = kept
        else:
            del out["enabledMcpjsonServers"]
    return out, removed


# ------------------------------------------------------------------ the MCP server entry


def mcp_entry(python: str, flags: list[str]) -> dict[str, Any]:
    """The ``.mcp.json`` server entry: this interpreter, ``-m smllm mcp``."""
    return {"command": python, "args": [*(["-I"] if "-I" in flags else []),
                                         "-m", "smllm", "mcp"]}


def is_ours(entry: Any) -> bool:
    """Is this ``.mcp.json`` entry one that ``smllm install`` wrote?"""
    if not isinstance(entry, dict) or not isinstance(entry.get("args"), list):
        return False
    return [str(a) for a in entry["args"][-3:]] == ["-m", "smllm", "mcp"]


def with_server(data: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    servers = dict(data.get("mcpServers") or {})
    servers[MCP_SERVER] = entry
    return {**data, "mcpServers": servers}


def without_server(data: dict[str, Any]) -> dict[str, Any]:
    servers = {k: v for k, v in (data.get("mcpServers") or {}).items() if k != MCP_SERVER}
    out = {k: v for k, v in data.items() if k != "mcpServers"}
    return {**out, "mcpServers": servers} if servers else out
