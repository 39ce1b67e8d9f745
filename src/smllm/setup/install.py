"""``smllm install`` / ``uninstall``: smllm's hooks in a Claude Code settings file.

What install owns: one matcher group per event of product.md §4, whose single hook
runs ``'<absolute python>' [-I] -c 'from smllm.hooks import cli; cli()' EVENT`` (``-c``, not
``-m smllm hook``, because ``-m`` imports runpy on every call). That command *is* the mark:
:func:`smllm.setup.settings.smllm_event_of` recognises it, and uninstall removes exactly the
hook objects that carry it (and a group, event or ``hooks`` key only when removing ours
left it empty). Everything else in the file is kept, in order.

Byte-for-byte round trip: before the first change, install saves the file's original
text in a private record under ``paths.state_dir()/installs/``. Uninstall restores that
text verbatim when what is left after removing our hooks equals it as data (nobody
changed anything else meanwhile); otherwise it writes the structural result in the
file's own layout.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from smllm.base import paths
from smllm.base.errors import InstallError, UsageError
from smllm.setup import settings

#: product.md §4's events -> timeout in seconds. PreToolUse and PermissionRequest may
#: wait on a reviewer (LLM judge, command); the others only journal.
EVENTS: dict[str, int] = {
    "SessionStart": 30,
    "UserPromptSubmit": 30,
    "PreToolUse": 300,
    "PermissionRequest": 300,
    "PostToolUse": 30,
    "PostToolUseFailure": 30,
    "Stop": 30,
    "SubagentStart": 30,
    "SubagentStop": 30,
    "SessionEnd": 30,
}
#: events whose matcher is a tool name: register for every tool
TOOL_EVENTS = frozenset({"PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure"})

Action = Literal["install", "uninstall"]


@dataclass(frozen=True)
class Target:
    scope: settings.Scope
    path: Path


@dataclass(frozen=True)
class Plan:
    """What install/uninstall would do to one file."""

    action: Action
    target: Target
    before: str | None  # None: the file does not exist
    after: str | None  # None: the file is to be removed
    summary: str
    record: dict[str, Any] | None = None  # the install record to save (install) or drop

    @property
    def changed(self) -> bool:
        return self.before != self.after


def resolve_target(project: str | None, user: bool, local: bool) -> Target:
    """The settings file named by ``--project DIR | --user`` and ``--local``."""
    if user and project is not None:
        raise UsageError("--user and --project name different files", "give one of them")
    if user and local:
        raise UsageError("--local applies to a project",
                         "use --project DIR --local, or --user alone")
    if user:
        return Target("user", settings.settings_path("user"))
    root = Path(project).expanduser().absolute() if project else Path.cwd()
    if not root.is_dir():
        raise InstallError(f"project folder {root} does not exist", "create it or fix the path")
    scope: settings.Scope = "local" if local else "project"
    return Target(scope, settings.settings_path(scope, root))


# ------------------------------------------------------------------ the hooks we own


def import_paths() -> list[str]:
    """Where this interpreter finds smllm and its dependencies (for hooks run with ``-S``)."""
    import site  # noqa: PLC0415

    import smllm  # noqa: PLC0415

    found = [str(Path(smllm.__file__).resolve().parent.parent), *site.getsitepackages()]
    return list(dict.fromkeys(p for p in found if os.path.isdir(p)))


def _imports_the_same(python: str, flags: list[str], code_prefix: str, here: str) -> bool:
    probe = (f"{code_prefix}import smllm, smllm.hooks, yaml, pydantic, platformdirs; "
             "print(smllm.__file__)")
    try:
        out = subprocess.run([python, *flags, "-c", probe], capture_output=True, text=True,
                             timeout=30, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and str(Path(out.stdout.strip()).resolve()) == here


def interpreter() -> tuple[str, list[str]]:
    """This interpreter's absolute path and its flags for hooks.

    ``-I -S`` when smllm and its dependencies import that way with :func:`import_paths`
    put on ``sys.path`` (skipping ``site`` saves a few milliseconds on every tool call),
    else ``-I`` if smllm imports isolated, else none.
    """
    python = sys.executable
    if not python or not os.path.isabs(python):
        raise InstallError("cannot tell which Python runs smllm (sys.executable is empty)",
                           "run `smllm install` with the interpreter smllm is installed in")
    import smllm  # noqa: PLC0415

    here = str(Path(smllm.__file__).resolve())
    if _imports_the_same(python, ["-I", "-S"], _path_prefix(), here):
        return python, ["-I", "-S"]
    return python, (["-I"] if _imports_the_same(python, ["-I"], "", here) else [])


def _path_prefix() -> str:
    return f"import sys; sys.path[:0] = {json.dumps(import_paths())}; "


#: what an installed hook runs with ``python -c``: the hook entry point, without runpy
HOOK_CODE = "from smllm.hooks import cli; cli()"


def hook_command(event: str, python: str, flags: list[str]) -> str:
    code = (_path_prefix() if "-S" in flags else "") + HOOK_CODE
    return " ".join([shlex.quote(python), *flags, "-c", shlex.quote(code), event])


def desired(python: str, flags: list[str]) -> dict[str, dict[str, Any]]:
    """The matcher group install adds for each event."""
    out: dict[str, dict[str, Any]] = {}
    for event, timeout in EVENTS.items():
        group: dict[str, Any] = {"matcher": "*"} if event in TOOL_EVENTS else {}
        group["hooks"] = [{"type": "command", "command": hook_command(event, python, flags),
                           "timeout": timeout}]
        out[event] = group
    return out


def owned(data: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Our hook objects in ``data``, by event."""
    found: dict[str, list[dict[str, Any]]] = {}
    hooks = data.get("hooks")
    for event, groups in (hooks.items() if isinstance(hooks, dict) else []):
        for group in groups:
            for hook in group.get("hooks", []):
                if settings.smllm_event_of(hook) is not None:
                    found.setdefault(event, []).append(hook)
    return found


def strip(data: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """``data`` without our hooks, and how many were removed."""
    out = copy.deepcopy(data)
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out, 0
    removed = 0
    for event in list(hooks):
        groups = []
        for group in hooks[event]:
            kept = [h for h in group.get("hooks", []) if settings.smllm_event_of(h) is None]
            removed += len(group.get("hooks", [])) - len(kept)
            if kept or not group.get("hooks"):
                groups.append({**group, "hooks": kept} if kept != group.get("hooks") else group)
        if groups or not hooks[event]:
            hooks[event] = groups
        else:
            del hooks[event]
    if not hooks and data.get("hooks"):
        del out["hooks"]
    return out, removed


def with_ours(data: dict[str, Any], python: str, flags: list[str]) -> dict[str, Any]:
    out, _ = strip(data)
    hooks = out.setdefault("hooks", {})
    for event, group in desired(python, flags).items():
        hooks.setdefault(event, []).append(group)
    return out


# ------------------------------------------------------------------ records


def _record_path(path: Path) -> Path:
    key = hashlib.sha256(str(path.absolute()).encode()).hexdigest()[:32]
    return paths.state_dir() / "installs" / f"{key}.json"


def load_record(path: Path) -> dict[str, Any] | None:
    try:
        rec = json.loads(_record_path(path).read_text())
    except (OSError, ValueError):
        return None
    return rec if isinstance(rec, dict) and rec.get("path") == str(path.absolute()) else None


def _save_record(path: Path, record: dict[str, Any]) -> None:
    rp = _record_path(path)
    paths.ensure_private_tree(rp.parent, paths.state_dir())
    settings.write_atomic(rp, json.dumps(record, ensure_ascii=False) + "\n", mode=0o600)


def _drop_record(path: Path) -> None:
    _record_path(path).unlink(missing_ok=True)


# ------------------------------------------------------------------ plans


def plan_install(target: Target, python: str, flags: list[str]) -> Plan:
    """Install into ``target`` (raises ``ConfigError`` on a malformed file)."""
    current = settings.read(target.path)
    want = desired(python, flags)
    have = owned(current.data)
    if {e: [g["hooks"][0]] for e, g in want.items()} == have:
        return Plan("install", target, current.text, current.text,
                    f"smllm is already installed in {target.path} (no change)")
    after = current.layout.dump(with_ours(current.data, python, flags))
    # the first install saves the original; an update keeps the record it finds
    record = load_record(target.path) if have else {
        "path": str(target.path.absolute()), "original": current.text,
        "created_dir": not target.path.parent.exists()}
    verb = "updated" if have else "installed"
    return Plan("install", target, current.text, after,
                f"{verb} smllm's hooks for {len(want)} events in {target.path}\n"
                f"  hooks run: {hook_command('EVENT', python, flags)}", record)


def plan_uninstall(target: Target) -> Plan:
    """Remove our hooks from ``target``, restoring the original bytes when nothing else
    changed."""
    current = settings.read(target.path)
    remaining, removed = strip(current.data)
    if not removed:
        return Plan("uninstall", target, current.text, current.text,
                    f"smllm is not installed in {target.path} (no change)")
    record = load_record(target.path)
    original = record.get("original") if record else None
    after: str | None
    if record is not None and _same_data(original, remaining):
        after = original
        how = "restored byte for byte"
    else:
        after = current.layout.dump(remaining)
        how = "other content kept"
    return Plan("uninstall", target, current.text, after,
                f"removed smllm's hooks ({removed}) from {target.path}; {how}", record)


def _pruned(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` without empty event lists or an empty ``hooks`` object (which removing our
    hooks may or may not leave behind, depending on what was there before)."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return data
    kept = {e: g for e, g in hooks.items() if g != []}
    return {k: v for k, v in data.items() if k != "hooks"} | ({"hooks": kept} if kept else {})


def _same_data(original: Any, data: dict[str, Any]) -> bool:
    """Is what is left after removing our hooks the original (nobody changed anything)?"""
    if original is None or not str(original).strip():
        return _pruned(data) == {}
    try:
        before = json.loads(original)
    except ValueError:
        return False
    return isinstance(before, dict) and _pruned(before) == _pruned(data)


def diff(plan: Plan) -> str:
    """A unified diff of the planned change."""
    import difflib  # noqa: PLC0415

    name = str(plan.target.path)
    before = (plan.before or "").splitlines(keepends=True)
    lines = difflib.unified_diff(
        before, (plan.after or "").splitlines(keepends=True),
        fromfile=name if plan.before is not None else "/dev/null",
        tofile=name if plan.after is not None else "/dev/null")
    text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)
    return text


def apply(plan: Plan) -> None:
    """Carry out a plan: atomic write (only when the bytes change) and the record."""
    if not plan.changed:
        return
    path = plan.target.path
    if plan.action == "install":
        if plan.record is not None:
            _save_record(path, plan.record)
        settings.write_atomic(path, plan.after or "")
        return
    if plan.after is None:
        path.unlink(missing_ok=True)
        if plan.record and plan.record.get("created_dir"):
            with contextlib.suppress(OSError):  # not empty: something else lives there
                path.parent.rmdir()
    else:
        settings.write_atomic(path, plan.after)
    _drop_record(path)
