"""The enforced half of the trust boundary: Claude Code's own Bash sandbox, configured.

A shell analyser can never see every way a program writes a file, so ``smllm install``
also turns on Claude Code's sandbox (bubblewrap on Linux, Seatbelt on macOS) for the
agent's Bash commands, with smllm's *protected set* read-only inside it:

* the project's ``.claude/`` and ``.smllm/`` folders;
* the user's Claude Code folder (settings, plugins: ``~/.claude``) and ``~/.claude.json``;
* smllm's data (journals), state and config folders, and the installed smllm code;
* the paths the policy lists under ``sensitive``.

and smllm's journal key and Claude Code's transcripts unreadable
(:func:`smllm.base.protected.unreadable`, whatever the policy says).

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
    deny_read += [_abs(p) for p in protected_set.unreadable()]
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


def with_domains(data: dict[str, Any], domains: list[str]) -> dict[str, Any]:
    """``data`` whose sandbox lets commands reach ``domains`` too (``--allow-domain``)."""
    box = data.get("sandbox")
    if not domains or not isinstance(box, dict):
        return data
    network = dict(box["network"]) if isinstance(box.get("network"), dict) else {}
    old = network.get("allowedDomains")
    network["allowedDomains"] = list(dict.fromkeys([*(old if isinstance(old, list) else []),
                                                    *domains]))
    return {**data, "sandbox": {**box, "network": network}}


#: how to let the agent's commands reach a host (install's summary, doctor, the docs)
ALLOW_DOMAIN = "smllm install --allow-domain DOMAIN"


def network_text(box: dict[str, Any]) -> str:
    """The sandbox's network rule in plain words."""
    network = box.get("network") if isinstance(box.get("network"), dict) else {}
    domains = [str(d) for d in (network or {}).get("allowedDomains") or []]
    if domains:
        return (f"network: the agent's commands may reach {', '.join(domains)} and no other "
                f"host; to allow one more: {ALLOW_DOMAIN}")
    return ("network: the agent's commands reach no host until you allow its domain "
            "(pip install, npm install, git push, curl: a prompt per domain in an "
            f"interactive session, a failure under claude -p); to allow one: {ALLOW_DOMAIN}")


def check_domain(domain: str) -> str:
    """A host name for ``network.allowedDomains`` (``pypi.org``, ``*.github.com``), or a
    usage error that says what is wrong."""
    import re  # noqa: PLC0415 - install only

    name = domain.strip().lower()
    if not re.fullmatch(r"(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*",
                        name):
        from smllm.base.errors import UsageError  # noqa: PLC0415 - install only

        raise UsageError(f"--allow-domain {domain!r} is not a host name",
                         "give the domain alone, as in --allow-domain pypi.org or "
                         "--allow-domain '*.github.com' (no scheme, port or path)")
    return name


def missing_tools() -> list[str]:
    """What the sandbox needs and this machine lacks (Debian package names)."""
    if sys.platform == "darwin":
        return []
    if not sys.platform.startswith("linux"):
        return ["a supported platform (Linux or macOS)"]
    return [pkg for tool, pkg in LINUX_TOOLS.items() if shutil.which(tool) is None]


def status(data: dict[str, Any], fix: str) -> tuple[str, str]:
    """(``ok``|``warn``|``error``, text): is the boundary enforced for the settings ``data``?
    ``fix`` is the install command that writes the sandbox on the route in use (it never
    registers the hooks a second time)."""
    box: dict[str, Any] = data["sandbox"] if isinstance(data.get("sandbox"), dict) else {}
    lacking = missing_tools()
    how = f"apt-get install -y {' '.join(lacking)}" if sys.platform.startswith("linux") \
        else "use Linux or macOS"
    if not box.get("enabled"):
        return "warn", ("sandbox: off, so the trust boundary is advisory only: the gate denies "
                        "the writes it can see, but a command can still change smllm's policy, "
                        f"hooks or journal (turn it on: {fix})")
    if lacking and box.get("failIfUnavailable"):
        return "error", (f"sandbox: required (failIfUnavailable) but it cannot run here "
                         f"({', '.join(lacking)} missing), so Claude Code will not start a "
                         f"session in this project: install it ({how}), or run {fix} again "
                         f"to let sessions start without it (the trust boundary is then "
                         f"advisory only)")
    if lacking:
        return "warn", (f"sandbox: cannot run here ({', '.join(lacking)} missing), so the trust "
                        f"boundary is advisory only (install it: {how}; then run {fix} "
                        f"again, so that sessions refuse to start without it)")
    if box.get("allowUnsandboxedCommands", True):
        return "warn", ("sandbox: on, but commands may ask to run outside it "
                        "(allowUnsandboxedCommands), so the trust boundary is advisory only "
                        f"({fix} sets it to false)")
    others = [c for c in box.get("excludedCommands") or [] if c not in OWN_COMMANDS]
    if others:
        return "warn", (f"sandbox: on, but excludedCommands {', '.join(map(str, others))} run "
                        f"outside it with anything chained to them, so for those the trust "
                        f"boundary is advisory only")
    fs: dict[str, Any] = box["filesystem"] if isinstance(box.get("filesystem"), dict) else {}
    return "ok", (f"sandbox: on, commands cannot escape it; {len(fs.get('denyWrite') or [])} "
                  f"protected paths are read-only to them")
