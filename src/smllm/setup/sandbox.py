"""The enforced half of the trust boundary: Claude Code's own Bash sandbox, configured.

A shell analyser can never see every way a program writes a file, so ``smllm install``
also turns on Claude Code's sandbox (bubblewrap on Linux, Seatbelt on macOS) for the
agent's Bash commands, with smllm's *protected set* read-only inside it:

* the project's ``.claude/`` and ``.smllm/`` folders;
* the user's Claude Code folder (settings, plugins: ``~/.claude``) and ``~/.claude.json``;
* smllm's data (journals), state and config folders, and the installed smllm code;
* the paths the policy lists under ``sensitive``.

Escaping the sandbox per call (``dangerouslyDisableSandbox``) is turned off
(``allowUnsandboxedCommands: false``). smllm's hooks run outside the sandbox, so the
journal keeps being written. Two choices come from the policy's ``[sandbox]`` table, with
safe defaults: ``read_credentials = false`` hides the usual credential stores
(:data:`CREDENTIALS`) from commands, and ``allowed_domains = []`` lets no command reach
the network (list the hosts a build needs).

``smllm fire`` and ``smllm status`` must write smllm's state, so they are listed in
``excludedCommands``; Claude Code then runs any command naming them outside the sandbox,
and the gate admits only the plain form (:func:`smllm.gate.protect.unsandboxed_fire`).

Path syntax (Claude Code settings): ``//abs/path`` is absolute, ``~/`` the home folder.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

from smllm.base import credentials
from smllm.base import protected as protected_set
from smllm.gate import protect

#: credential stores hidden from sandboxed commands unless the policy allows reading them
CREDENTIALS = tuple(credentials.sandbox_hidden())
#: what Linux needs for the sandbox (Debian package names)
LINUX_TOOLS = {"bwrap": "bubblewrap", "socat": "socat"}
#: smllm's own commands the agent runs, which must write smllm's state: Claude Code runs
#: them outside the sandbox, and the gate admits them only as one plain command
#: (:func:`smllm.gate.protect.unsandboxed_fire`)
OWN_COMMANDS = protect.EXCLUDED_COMMANDS


def _abs(path: str | os.PathLike[str]) -> str:
    """A settings path for an absolute location (``//`` prefix)."""
    return "/" + os.path.abspath(os.fspath(path))


def _policy(project: Path) -> tuple[dict[str, Any], list[str]]:
    """The ``[sandbox]`` table and the ``sensitive`` list of the compiled policy (the
    defaults when it does not compile: the policy's error is reported by doctor and by
    every call's deny, not here)."""
    try:
        from smllm.gate import policy  # noqa: PLC0415 - may fail: then the defaults

        compiled = policy.load(project)
    except Exception:  # no policy support: defaults
        return {}, []
    if compiled.get("error"):
        return {}, []
    return dict(compiled.get("sandbox") or {}), list(compiled.get("sensitive") or [])


def protected(project: Path, sensitive: list[str]) -> list[str]:
    """The protected set (:func:`smllm.base.protected.with_policy`: the same set the gate
    protects, with the policy's ``sensitive`` paths), and what ``smllm`` resolves to on
    ``PATH`` (the command ``smllm fire`` runs, outside the sandbox)."""
    out = list(protected_set.protected_set(str(project)))
    command = shutil.which("smllm")
    if command:
        out += [command, os.path.realpath(command)]
    out += protected_set.with_policy(str(project), sensitive)
    return list(dict.fromkeys(os.path.abspath(p) for p in out))


def block(project: Path, *, available: bool) -> dict[str, Any]:
    """The ``sandbox`` settings object install writes."""
    table, sensitive = _policy(project)  # the policy files, read once
    deny_read = [] if table.get("read_credentials") is True else list(CREDENTIALS)
    domains = [d for d in table.get("allowed_domains") or [] if isinstance(d, str)]
    return {
        "enabled": True,
        "allowUnsandboxedCommands": False,
        "excludedCommands": list(OWN_COMMANDS),
        "failIfUnavailable": available,
        "filesystem": {"denyWrite": [_abs(p) for p in protected(project, sensitive)],
                       "denyRead": deny_read},
        "network": {"allowedDomains": domains},
    }


def with_block(data: dict[str, Any], ours: dict[str, Any],
               original: dict[str, Any] | None) -> dict[str, Any]:
    """``data`` with ``ours`` merged into the user's own ``sandbox`` object (``original``):
    their extra paths and domains are kept; the settings that hold the boundary are ours."""
    mine: dict[str, Any] = dict(original or {})
    merged = {**mine, **{k: v for k, v in ours.items() if k not in ("filesystem", "network")}}
    theirs_excluded = mine.get("excludedCommands")
    if isinstance(theirs_excluded, list):
        merged["excludedCommands"] = list(dict.fromkeys([*theirs_excluded,
                                                         *ours["excludedCommands"]]))
    for key in ("filesystem", "network"):
        theirs: dict[str, Any] = mine[key] if isinstance(mine.get(key), dict) else {}
        combined = dict(theirs)
        for field, values in ours[key].items():
            old: list[Any] = theirs[field] if isinstance(theirs.get(field), list) else []
            if field == "allowedDomains" and "allowedDomains" in theirs:
                combined[field] = old  # the user's own network choice stands
            else:
                combined[field] = list(dict.fromkeys([*old, *values]))
        merged[key] = combined
    return {**data, "sandbox": merged}


def missing_tools() -> list[str]:
    """What the sandbox needs and this machine lacks (Debian package names)."""
    if sys.platform == "darwin":
        return []
    if not sys.platform.startswith("linux"):
        return ["a supported platform (Linux or macOS)"]
    return [pkg for tool, pkg in LINUX_TOOLS.items() if shutil.which(tool) is None]


def status(data: dict[str, Any]) -> tuple[str, str]:
    """(``ok``|``warn``, text): is the boundary enforced for the settings ``data``?"""
    box: dict[str, Any] = data["sandbox"] if isinstance(data.get("sandbox"), dict) else {}
    lacking = missing_tools()
    if not box.get("enabled"):
        return "warn", ("sandbox: off, so the trust boundary is advisory only: the gate denies "
                        "the writes it can see, but a command can still change smllm's policy, "
                        "hooks or journal (run `smllm install` without --no-sandbox)")
    if lacking:
        how = f"apt-get install -y {' '.join(lacking)}" if sys.platform.startswith("linux") \
            else "use Linux or macOS"
        return "warn", (f"sandbox: cannot run here ({', '.join(lacking)} missing), so the trust "
                        f"boundary is advisory only (install it: {how})")
    if box.get("allowUnsandboxedCommands", True):
        return "warn", ("sandbox: on, but commands may ask to run outside it "
                        "(allowUnsandboxedCommands), so the trust boundary is advisory only")
    others = [c for c in box.get("excludedCommands") or [] if c not in OWN_COMMANDS]
    if others:
        return "warn", (f"sandbox: on, but excludedCommands {', '.join(map(str, others))} run "
                        f"outside it with anything chained to them, so for those the trust "
                        f"boundary is advisory only")
    fs: dict[str, Any] = box["filesystem"] if isinstance(box.get("filesystem"), dict) else {}
    return "ok", (f"sandbox: on, commands cannot escape it; {len(fs.get('denyWrite') or [])} "
                  f"protected paths are read-only to them")
