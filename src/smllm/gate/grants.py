"""Policy amendments: "always allow in this workspace" grants, and their revocation.

A grant is recorded when a reviewer answers ``always_allow_in_workspace``. It lives in
``<state dir>/policy-grants.json`` (a list; revoked grants stay, with ``revoked_at``),
is journaled as a ``policy.amendment`` fact in the session that made it, and allows
later calls of the same tool with the same input in the same workspace, with the rule
``amendment:<id>``. ``smllm policy grants --revoke ID`` ends it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from smllm.base import catalogue, clock, paths
from smllm.base.errors import SmllmError
from smllm.base.lockfile import locked


def store_path() -> Path:
    return paths.state_dir() / "policy-grants.json"


def match_key(tool_name: str, tool_input: dict[str, Any]) -> str:
    """What a grant pins: the exact command, the file path, or the whole input."""
    if tool_name == "Bash" and isinstance(tool_input.get("command"), str):
        return " ".join(str(tool_input["command"]).split())
    path = catalogue.path_of(tool_name, tool_input)
    if path is not None:
        return path
    return json.dumps({k: v for k, v in tool_input.items() if k != "description"}, sort_keys=True)


def _read() -> list[dict[str, Any]]:
    try:
        data = json.loads(store_path().read_bytes())
    except (OSError, ValueError):
        return []
    grants = data.get("grants") if isinstance(data, dict) else None
    return [g for g in grants if isinstance(g, dict)] if isinstance(grants, list) else []


def _write(grants: list[dict[str, Any]]) -> None:
    path = store_path()
    paths.ensure_private_tree(path.parent, paths.state_dir())
    data = json.dumps({"grants": grants}, indent=1, sort_keys=True) + "\n"
    paths.write_private(path, data.encode())  # 0600 from the first byte


def _lock() -> locked:
    """The grants' lock, in smllm's locks folder (the agent's sandbox cannot open it)."""
    return locked(paths.lock_path("policy-grants.lock"))


def add(
    *,
    workspace: str,
    tool_name: str,
    tool_input: dict[str, Any],
    granted_by: str,
    session_id: str,
    pending_action_id: str,
) -> dict[str, Any]:
    """Record a grant; return it."""
    grant = {
        "id": clock.new_id("g-"),
        "workspace": workspace,
        "tool_name": tool_name,
        "match": match_key(tool_name, tool_input),
        "granted_by": granted_by,
        "session_id": session_id,
        "pending_action_id": pending_action_id,
        "created_at": clock.iso_utc(clock.now_ms()),
        "revoked_at": None,
    }
    with _lock():
        grants = _read()
        grants.append(grant)
        _write(grants)
    return grant


def find(workspace: str, tool_name: str, tool_input: dict[str, Any]) -> dict[str, Any] | None:
    """The active grant covering this call, if any."""
    if not store_path().exists():
        return None
    key = match_key(tool_name, tool_input)
    for g in _read():
        if (
            g.get("revoked_at") is None
            and g.get("workspace") == workspace
            and g.get("tool_name") == tool_name
            and g.get("match") == key
        ):
            return g
    return None


def list_grants(*, include_revoked: bool = False) -> list[dict[str, Any]]:
    return [g for g in _read() if include_revoked or g.get("revoked_at") is None]


def revoke(grant_id: str) -> dict[str, Any]:
    """Mark a grant revoked; return it. Unknown or already revoked ids are errors."""
    with _lock():
        grants = _read()
        for g in grants:
            if g.get("id") == grant_id:
                if g.get("revoked_at") is not None:
                    raise SmllmError(
                        f"grant {grant_id} was already revoked at {g['revoked_at']}",
                        "see `smllm policy grants`",
                    )
                g["revoked_at"] = clock.iso_utc(clock.now_ms())
                _write(grants)
                return g
    active = ", ".join(str(g.get("id")) for g in grants if g.get("revoked_at") is None)
    raise SmllmError(
        f"no grant {grant_id!r}",
        f"active grants: {active}" if active else "there are no active grants",
    )
