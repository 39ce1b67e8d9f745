"""``smllm install|uninstall --harness gemini``: smllm's hooks for Gemini CLI 0.61.

Gemini CLI reads hooks from the ``hooks`` of its settings: the project's
``.gemini/settings.json`` (read only in a trusted folder) or the user's
``~/.gemini/settings.json`` (``--user``; ``$GEMINI_CLI_HOME/.gemini`` when that is set).
Install adds one group per event, under Gemini's event names
(:data:`smllm.harness.gemini.EVENTS`), each running ``<folder>/smllm-hook EVENT --harness
gemini`` (the executable Claude Code's install writes, :mod:`smllm.setup.install`: the
event first, so its start-up guard still blocks with exit 2 and the reason when smllm
cannot import, which Gemini treats as a block too), named ``smllm-<event>``, with its
timeout **in milliseconds** (Gemini's unit: the 30 of a migrated Claude Code hook is 30 ms).

Unless ``--no-sandbox``, install also turns on Gemini's tool sandbox in the same file
(``security.toolSandboxing``, bubblewrap on Linux; a value the file already sets is the
user's choice and is kept), and for a project adds ``.gemini/`` and ``.smllm/`` to its
``.geminiignore``, which that sandbox makes read-only (and empty) to the agent's tools: the
project's ``.gemini/`` would otherwise stay writable to them, hooks and all
(shared/ref/gemini-hooks.md §5). In a project it records smllm's hooks in
``~/.gemini/trusted_hooks.json`` (Gemini's list of project hooks it has announced), so
that Gemini does not warn about them as hooks someone planted.

Uninstall removes exactly what install added; a file install created and nothing else
uses goes away, and a file whose rest is unchanged gets its original bytes back.

>>> group = desired("/venv/bin/python", ["-I"])["BeforeTool"][0]
>>> group["matcher"], group["hooks"][0]["name"], group["hooks"][0]["timeout"]
('.*', 'smllm-PreToolUse', 300000)
"""

from __future__ import annotations

import contextlib
import copy
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from smllm.base.errors import InstallError
from smllm.harness import gemini
from smllm.hooks import INSTALLED
from smllm.setup import codex_install, install, settings
from smllm.setup.codex_install import Change, Plan

Scope = Literal["project", "user"]
HARNESS = gemini.HARNESS

#: the flag that makes a hook command Gemini's (after the event: see the module's text)
MARK = "--harness gemini"
#: an installed hook's command: the executable (or the inline form), the event, the harness
#: (then ``--home``, pinned last)
_SMLLM_GEMINI = re.compile(r"(?:smllm-hook|cli\(\))['\"]? ([A-Za-z]+) --harness gemini\b")
#: the prefix of the name of each hook smllm adds (Gemini's hooksConfig.disabled and its
#: trusted hooks know hooks by name)
NAME = "smllm-"
#: what install adds to a project's .geminiignore, after its marker line
IGNORE_MARK = ("# smllm: Gemini's tool sandbox keeps these read-only to the agent "
               "(smllm install --harness gemini)")
IGNORED = (".gemini/", ".smllm/")


def gemini_dir() -> Path:
    """The user's Gemini CLI folder (:func:`smllm.harness.gemini.gemini_home`)."""
    return Path(gemini.gemini_home())


def timeout_ms(event: str) -> int:
    """The timeout install gives ``event``'s hook, in Gemini's unit (milliseconds): the
    seconds of :data:`smllm.hooks.INSTALLED`, well past the hook's own deadline."""
    return INSTALLED[event][0] * 1000


def command(event: str, python: str, flags: list[str]) -> str:
    """The hook command for ``event``: Claude Code's, with the harness named after it."""
    return install.hook_command(event, python, flags, MARK)


def desired(python: str, flags: list[str]) -> dict[str, list[dict[str, Any]]]:
    """The matcher group install adds, by Gemini's event name."""
    out: dict[str, list[dict[str, Any]]] = {}
    for event, host_event in gemini.EVENTS:
        group: dict[str, Any] = {"matcher": ".*"} if INSTALLED[event][1] else {}
        group["hooks"] = [{"type": "command", "name": f"{NAME}{event}",
                           "command": command(event, python, flags),
                           "timeout": timeout_ms(event)}]
        out[host_event] = [group]
    return out


def smllm_event_of(hook: Any) -> str | None:
    """The smllm event an ``smllm install --harness gemini`` hook object runs, else None."""
    if not isinstance(hook, dict) or hook.get("type", "command") != "command":
        return None
    match = _SMLLM_GEMINI.search(str(hook.get("command", "")))
    return match.group(1) if match and match.group(1) in gemini.HOST_EVENTS else None


@dataclass(frozen=True)
class Target:
    scope: Scope
    path: Path  # the settings.json

    @property
    def project(self) -> Path | None:
        return self.path.parent.parent if self.scope == "project" else None


def resolve_target(project: str | None, user: bool) -> Target:
    """The settings file ``--project DIR | --user`` names."""
    root = install.project_root(project, user)
    if root is None:
        return Target("user", gemini_dir() / "settings.json")
    return Target("project", root / ".gemini" / "settings.json")


def read_settings(path: Path) -> tuple[str | None, dict[str, Any]]:
    """A Gemini settings file's text and content (``{}`` when absent); an error with
    ``file:line`` for a file smllm cannot edit safely."""
    text = codex_install.read_text(path)
    if text is None or not text.strip():
        return text, {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InstallError(f"{path}:{exc.lineno}: not plain JSON ({exc.msg}; Gemini CLI "
                           f"accepts comments, smllm does not edit a file that has them)",
                           "remove the comments or fix the file, then run this again"
                           ) from None
    hooks = data.get("hooks", {}) if isinstance(data, dict) else None
    if not isinstance(hooks, dict) or not all(isinstance(g, list) for g in hooks.values()):
        raise InstallError(f"{path}:1: not a Gemini CLI settings file (an object whose "
                           f"'hooks' maps events to lists)",
                           "fix the file by hand, then run this again")
    return text, data


def ours(data: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """smllm's hook objects in a settings file's content, by Gemini's event name."""
    found: dict[str, list[dict[str, Any]]] = {}
    for event, groups in (data.get("hooks") or {}).items():
        for group in groups:
            for hook in (group.get("hooks") or []) if isinstance(group, dict) else []:
                if smllm_event_of(hook) is not None:
                    found.setdefault(event, []).append(hook)
    return found


def strip(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` without smllm's hooks (:func:`smllm.setup.codex_install.strip`)."""
    return codex_install.strip(data, smllm_event_of)


def _dump(text: str | None, data: dict[str, Any]) -> str:
    """``data`` in the layout of ``text`` (two spaces and a newline for a new file)."""
    layout = settings.detect_layout(text) if text and text.strip() else settings.Layout()
    return layout.dump(data)


# ------------------------------------------------------------------ plans


def load_record(target: Target) -> dict[str, Any] | None:
    """What install recorded about ``target`` (the bytes it found), if anything."""
    return codex_install.load_record(target, HARNESS)


def with_sandbox(data: dict[str, Any], ours: bool = False) -> tuple[dict[str, Any], str]:
    """``data`` with Gemini's tool sandbox on, and a line for the summary; unchanged when
    the file chooses it itself (on or off; ``ours``: install turned it on before)."""
    security = data.get("security")
    if isinstance(security, dict) and "toolSandboxing" in security and not ours:
        state = "on" if security["toolSandboxing"] is True else "off"
        return data, (f"sandbox: the file turns Gemini's tool sandbox {state} itself "
                      f"(security.toolSandboxing), so smllm leaves it as it is")
    out = copy.deepcopy(data)
    out["security"] = {**(security if isinstance(security, dict) else {}),
                       "toolSandboxing": True}
    return out, ("sandbox: Gemini's tool sandbox on (security.toolSandboxing): the agent's "
                 "commands and file tools cannot write smllm's files")


def without_sandbox(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` without the ``security.toolSandboxing`` install added."""
    out = copy.deepcopy(data)
    security = out.get("security")
    if isinstance(security, dict) and security.get("toolSandboxing") is True:
        del security["toolSandboxing"]
        if not security:
            del out["security"]
    return out


def with_ignored(text: str | None) -> str:
    """A .geminiignore with smllm's block (its marker line and :data:`IGNORED`) at the end,
    once."""
    body = text or ""
    if IGNORE_MARK in body:
        return body
    if body and not body.endswith("\n"):
        body += "\n"
    return body + "\n".join([IGNORE_MARK, *IGNORED]) + "\n"


def without_ignored(text: str) -> str:
    """``text`` without the block :func:`with_ignored` added."""
    block = "\n".join([IGNORE_MARK, *IGNORED]) + "\n"
    return text.replace(block, "", 1) if block in text else text


def _trusted_keys(python: str, flags: list[str]) -> list[str]:
    """Gemini's key of each hook install adds (``<name>:<command>``)."""
    return [f"{h['name']}:{h['command']}" for groups in desired(python, flags).values()
            for g in groups for h in g["hooks"]]


def with_trusted(text: str | None, project: Path, keys: list[str]) -> str | None:
    """``~/.gemini/trusted_hooks.json`` with ``keys`` listed for ``project`` (the hooks
    Gemini has announced there); unchanged when they are listed already."""
    try:
        data = json.loads(text) if text and text.strip() else {}
    except ValueError:
        return text  # Gemini starts over from an unreadable file: it will announce them
    if not isinstance(data, dict):
        return text
    found = data.get(str(project))
    listed: list[Any] = found if isinstance(found, list) else []
    missing = [k for k in keys if k not in listed]
    if not missing:
        return text
    return json.dumps({**data, str(project): [*listed, *missing]}, indent=2)


def without_trusted(text: str | None, project: Path) -> str | None:
    """``trusted_hooks.json`` without smllm's keys for ``project`` (the project's entry and
    the file dropped when nothing else is left)."""
    try:
        data = json.loads(text) if text and text.strip() else None
    except ValueError:
        return text
    if not isinstance(data, dict) or not isinstance(data.get(str(project)), list):
        return text
    kept = [k for k in data[str(project)] if not (
        isinstance(k, str) and k.startswith(NAME)
        and smllm_event_of({"command": k.partition(":")[2]}) is not None)]
    if kept == data[str(project)]:
        return text
    rest = {k: v for k, v in data.items() if k != str(project)}
    if kept:
        rest[str(project)] = kept
    return json.dumps(rest, indent=2) if rest else None


def plan_install(target: Target, python: str, flags: list[str], *, sandbox: bool = True
                 ) -> Plan:
    """Our hooks in the settings file (replacing earlier ones of ours); unless ``sandbox`` is
    False the tool sandbox on, and in a project the .geminiignore block and the hooks
    recorded as announced."""
    before, data = read_settings(target.path)
    new = strip(data)
    hooks = new.setdefault("hooks", {})
    for event, groups in desired(python, flags).items():
        hooks.setdefault(event, []).extend(groups)
    record = load_record(target) or {"path": str(target.path), "settings_before": before,
                                     "created_dir": not target.path.parent.exists()}
    lines = []
    if sandbox:
        new, boxed = with_sandbox(new, bool(record.get("sandbox")))
        lines.append(boxed)
    after = before if before is not None and json.loads(before or "{}") == new \
        else _dump(before, new)
    record["sandbox"] = bool(record.get("sandbox")) or (
        sandbox and "toolSandboxing" not in (data.get("security") or {}))
    changes = [Change(target.path, before, after)]
    project = target.project
    if project is not None:
        if sandbox:
            ignore = project / ".geminiignore"
            ignore_before = codex_install.read_text(ignore)
            changes.append(Change(ignore, ignore_before, with_ignored(ignore_before)))
            record.setdefault("ignore_before", ignore_before)
            lines.append(f"sandbox: {', '.join(IGNORED)} in {ignore}: read-only (and empty) to "
                         f"the agent's tools")
        trusted = gemini_dir() / "trusted_hooks.json"
        trusted_before = codex_install.read_text(trusted)
        changes.append(Change(trusted, trusted_before,
                              with_trusted(trusted_before, project, _trusted_keys(python, flags))))
        record.setdefault("trusted_before", trusted_before)
        record.setdefault("created_gemini_dir", not gemini_dir().exists())
    head = [f"{'installed' if after != before else 'already installed'}: smllm's Gemini CLI "
            f"hooks ({len(gemini.EVENTS)} events, timeouts in milliseconds) in {target.path}"]
    if project is not None:
        head.append(f"note: Gemini CLI runs a project's hooks only in a trusted folder: trust "
                    f"{project} when Gemini asks (headless: GEMINI_CLI_TRUST_WORKSPACE=true)")
    return Plan("install", target, tuple(changes), "\n".join(head + lines), record,
                install.executable_plan(python, flags))


def plan_uninstall(target: Target) -> Plan:
    """Exactly what install added, out again."""
    before, data = read_settings(target.path)
    record = load_record(target) or {}
    stripped = strip(data)
    if record.get("sandbox"):
        stripped = without_sandbox(stripped)
    changes = [codex_install.json_undone(target.path, before, data, stripped=stripped,
                                         original=record.get("settings_before"),
                                         record=record, dump=lambda rest: _dump(before, rest))]
    project = target.project
    if project is not None:
        ignore = project / ".geminiignore"
        now = codex_install.read_text(ignore)
        if now is not None and "ignore_before" in record and \
                now == with_ignored(record["ignore_before"]):
            changes.append(Change(ignore, now, record["ignore_before"]))  # the rest unchanged
        else:
            changes.append(Change(ignore, now, without_ignored(now) if now is not None
                                  else None))
        trusted = gemini_dir() / "trusted_hooks.json"
        now = codex_install.read_text(trusted)
        cleaned = without_trusted(now, project)
        original = record.get("trusted_before")
        if cleaned is not None and original is not None and \
                json.loads(cleaned) == json.loads(original or "{}"):
            cleaned = original
        changes.append(Change(trusted, now, cleaned if cleaned != now else now))
    removed = sum(len(v) for v in ours(data).values())
    summary = (f"uninstalled: {removed} smllm hook(s) from {target.path}" if removed
               else f"not installed: no smllm hook in {target.path}")
    return Plan("uninstall", target, tuple(changes), summary, record or None)


def apply(plan: Plan) -> None:
    """Write the plan: atomic replacements of what changes, the install record (and on
    uninstall the user's .gemini folder, when install made it and nothing else is in it);
    arm the tripwire with Gemini's files, or stop watching them
    (:func:`smllm.setup.install.protect_for`)."""
    codex_install.apply(plan, HARNESS)
    if plan.action == "uninstall" and plan.record and plan.record.get("created_gemini_dir"):
        with contextlib.suppress(OSError):  # not empty: something else lives there
            gemini_dir().rmdir()
    target = plan.target
    assert isinstance(target, Target)
    install.protect_for(HARNESS, plan.action, target.scope, target.project or Path.cwd())


diff = codex_install.diff
