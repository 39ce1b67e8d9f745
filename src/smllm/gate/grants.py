"""Policy amendments: "always allow in this workspace" grants, and their revocation.

A grant is recorded when a reviewer answers ``always_allow_in_workspace``. It lives in
``<state dir>/policy-grants.json`` (a list; revoked grants stay, with ``revoked_at``),
is journaled as a ``policy.amendment`` fact in the session that made it, and allows
later calls of the same tool with the same input in the same workspace, with the rule
``amendment:<id>``. ``smllm policy grants --revoke ID`` ends it.

A grant pins what the reviewer was shown, not only the command text: ``scripts``, the
digest of every script file the command runs as the shell analysis read it (a Python or
shell script, the Makefile or package.json whose target or script it runs, ...), and
``findings``, the policy's reasons for escalating it. A later call matches only when both
are the same (:func:`find`); any change (a script rewritten, a new file run, other
findings) makes it a :class:`Mismatch`, and the call is reviewed again. A grant written
before these pins existed (no ``scripts`` key) still covers a call that runs no script
file, never one that does: what it would run was never shown to its reviewer.
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


class Pins:
    """What a grant pins beside the command: the digest of each script file it runs, and
    the policy's findings (the reasons it was escalated for)."""

    __slots__ = ("findings", "scripts")

    def __init__(self, scripts: dict[str, str] | None, findings: list[str] | tuple[str, ...]
                 ) -> None:
        self.scripts = dict(scripts or {})
        self.findings = list(findings)


class Mismatch:
    """A grant for the same call that no longer covers it, and what changed."""

    __slots__ = ("changed", "grant")

    def __init__(self, grant: dict[str, Any], changed: list[str]) -> None:
        self.grant = grant
        self.changed = changed

    def text(self) -> str:
        return (f"the workspace amendment {self.grant.get('id')} (granted by "
                f"{self.grant.get('granted_by')}) no longer matches: "
                f"{'; '.join(self.changed)}")

    def as_json(self) -> dict[str, Any]:
        return {"id": self.grant.get("id"), "changed": self.changed}


def add(
    *,
    workspace: str,
    tool_name: str,
    tool_input: dict[str, Any],
    granted_by: str,
    session_id: str,
    pending_action_id: str,
    pins: Pins,
) -> dict[str, Any]:
    """Record a grant pinned to ``pins``; return it."""
    grant = {
        "id": clock.new_id("g-"),
        "workspace": workspace,
        "tool_name": tool_name,
        "match": match_key(tool_name, tool_input),
        "scripts": dict(sorted(pins.scripts.items())),
        "findings": pins.findings,
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


def changes(grant: dict[str, Any], pins: Pins) -> list[str]:
    """What differs between what ``grant`` pinned and the call's ``pins`` (empty: none)."""
    pinned = grant.get("scripts")
    if not isinstance(pinned, dict):  # a grant made before scripts were pinned
        return [f"it runs {_names(pins.scripts)}, which the grant never pinned (made before "
                "smllm pinned the scripts a command runs)"] if pins.scripts else []
    out = []
    for path in sorted(set(pinned) | set(pins.scripts)):
        before, now = pinned.get(path), pins.scripts.get(path)
        if before == now:
            continue
        if before is None:
            out.append(f"it now runs {path}, which was not reviewed")
        elif now is None:
            out.append(f"it no longer runs {path}")
        else:
            out.append(f"{path} changed since it was reviewed ({str(before)[:19]}… is now "
                       f"{now[:19]}…)")
    if grant.get("findings", pins.findings) != pins.findings:
        out.append("the policy's findings on it differ from those it was granted for")
    return out


def _names(scripts: dict[str, str]) -> str:
    return ", ".join(sorted(scripts))


def find(workspace: str, tool_name: str, tool_input: dict[str, Any], pins: Pins
         ) -> tuple[dict[str, Any] | None, Mismatch | None]:
    """The active grant covering this call (with the same pins), if any; else the latest
    grant of the same call whose pins differ, and how (None: no grant of this call)."""
    if not store_path().exists():
        return None, None
    key = match_key(tool_name, tool_input)
    stale = None
    for g in _read():
        if (
            g.get("revoked_at") is None
            and g.get("workspace") == workspace
            and g.get("tool_name") == tool_name
            and g.get("match") == key
        ):
            changed = changes(g, pins)
            if not changed:
                return g, None
            stale = Mismatch(g, changed)
    return None, stale


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
