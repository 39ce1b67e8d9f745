"""What ``smllm install`` adds so that an agent can fire events in every permission mode.

Claude Code asks before it runs a Bash command or an MCP tool that no rule allows, and
where nobody can answer (``claude -p``, ``dontAsk`` mode) the ask is a refusal: an
agent in a state machine could not move on. So install adds, beside the hooks:

* narrow allow rules (:func:`allow_rules`): ``Bash(smllm fire *)``, ``Bash(smllm status)``,
  ``Bash(smllm status *)``; Claude Code checks each part of a compound command on its own,
  so ``smllm fire x && rm -rf ~`` still asks for the ``rm``; and, where the MCP server is
  registered, ``mcp__smllm__smllm`` (smllm's one MCP tool, nothing else of any server);
* in project scope, where the project uses state machines (its ``.smllm/config.toml``
  names machine files, or the user's config does: :func:`uses_machines`), the MCP server
  ``smllm`` (``<python> -I -m smllm mcp``) in the project's ``.mcp.json`` and ``"smllm"``
  in ``enabledMcpjsonServers``, so the tool the ``<smllm>`` texts name
  (``smllm({ session, event, params })``) exists in this route too. Claude Code starts
  every registered server at every session start and stops it at the end (about 140 ms
  a session, issue 25), so a project without machines, where nothing fires, gets none.
  A local or user install registers no MCP server (a local-scope or user-scope one would
  live in Claude Code's own ``~/.claude.json``). Wherever no server is registered (also
  where machines are added after install) the texts name ``smllm fire`` instead
  (:mod:`smllm.machine.channel`); re-running ``smllm install`` then registers the server.

Claude Code ignores a project's allow rules until the folder is trusted (the dialog of a
first interactive run; ``-p`` never shows it), so smllm's PreToolUse hook also allows its
own firing (rule ``machine.fire``) in a session bound to a state machine.

What install added is written in its record, so that uninstall removes exactly that.
"""

from __future__ import annotations

import os
from typing import Any

ALLOW_BASH = ("Bash(smllm fire *)", "Bash(smllm status)", "Bash(smllm status *)")
MCP_SERVER = "smllm"
MCP_TOOL = "mcp__smllm__smllm"
MCP_FILE = ".mcp.json"


def uses_machines(project: str | os.PathLike[str]) -> bool:
    """Are state machines configured for ``project``: does its ``.smllm/config.toml`` (the
    nearest upwards) or the user's config name machine files? A config that cannot be
    read counts as using them (firing must work once it is fixed)."""
    from smllm import machine  # noqa: PLC0415 - install and doctor only
    from smllm.base.errors import SmllmError  # noqa: PLC0415 - install and doctor only
    from smllm.machine import catalog  # noqa: PLC0415 - install and doctor only: tomllib, pydantic

    for config in machine.find_configs(os.fspath(project)):
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


def allow_rules(scope: str, project: str | os.PathLike[str] | None = None) -> list[str]:
    """The allow rules an install in ``scope`` (into ``project``) adds."""
    return [*ALLOW_BASH, *([MCP_TOOL] if registers_mcp(scope, project) else [])]


def add(data: dict[str, Any], scope: str, project: str | os.PathLike[str] | None = None
        ) -> tuple[dict[str, Any], dict[str, Any]]:
    """``data`` with the allow rules (and the MCP server's approval), and what was added."""
    out = dict(data)
    mcp = registers_mcp(scope, project)
    permissions = dict(out.get("permissions") or {})
    allow = list(permissions.get("allow") or [])
    added = [r for r in [*ALLOW_BASH, *([MCP_TOOL] if mcp else [])] if r not in allow]
    if added:
        permissions["allow"] = allow + added
        out["permissions"] = permissions
    enabled = False
    if mcp:
        servers = list(out.get("enabledMcpjsonServers") or [])
        if MCP_SERVER not in servers:
            out["enabledMcpjsonServers"] = [*servers, MCP_SERVER]
            enabled = True
    return out, {"allow": added, "enabledMcpjsonServers": enabled}


def present(data: dict[str, Any], scope: str,
            project: str | os.PathLike[str] | None = None) -> bool:
    """Are all of this scope's rules (and the server's approval) in ``data``?"""
    mcp = registers_mcp(scope, project)
    allow = (data.get("permissions") or {}).get("allow") or []
    wanted = [*ALLOW_BASH, *([MCP_TOOL] if mcp else [])]
    if not isinstance(allow, list) or any(r not in allow for r in wanted):
        return False
    return not mcp or MCP_SERVER in (data.get("enabledMcpjsonServers") or [])


def remove(data: dict[str, Any], added: dict[str, Any] | None) -> tuple[dict[str, Any], int]:
    """``data`` without what install added (all of smllm's rules when the record is lost),
    and how many entries went. A list or object left empty by the removal goes too."""
    rules = set(added["allow"]) if added else {*ALLOW_BASH, MCP_TOOL}
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
    servers = out.get("enabledMcpjsonServers")
    if (added is None or added.get("enabledMcpjsonServers")) and isinstance(servers, list) \
            and MCP_SERVER in servers:
        kept = [s for s in servers if s != MCP_SERVER]
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
