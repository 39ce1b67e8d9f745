"""Settings that switch smllm off, or run programs outside the agent's sandbox.

Claude Code merges every settings file it reads: the user's (``~/.claude/settings.json``),
the project's (``.claude/settings.json``, which a repository ships), the local one
(``.claude/settings.local.json``) and the managed ones (``/etc/claude-code/
managed-settings.json`` and ``managed-settings.d/``). smllm's hooks live in one of them;
the others can undo them. :func:`scan` names each such setting, the file it is in and how
to fix it; ``smllm install`` prints them (and does not report plain success over them),
``smllm doctor`` lists them.

What is looked for (:class:`Hostile`, ``error`` when smllm is off or the sandbox is, else
``warn``):

* ``disableAllHooks`` (every hook off: no gate, no journal), and managed
  ``allowManagedHooksOnly`` where smllm's hooks are not managed;
* the sandbox turned off or opened in a file other than the one smllm wrote it in:
  ``sandbox.enabled: false``, ``allowUnsandboxedCommands: true``, ``excludedCommands`` beyond
  smllm's own, ``enableWeakerNestedSandbox`` (the host's ``/proc`` in the sandbox);
* other hooks, in every file: they run beside smllm's, in parallel and outside the
  sandbox, and a PreToolUse hook's ``updatedInput`` replaces a call's input after smllm
  decided on it; and smllm's own hooks when the program they run lies in the project (the
  agent could rewrite it);
* ``permissions.defaultMode: bypassPermissions``: Claude Code asks nobody, smllm's gate is
  the only check;
* in a project's files (what a repository ships): ``env`` entries that set smllm's own
  variables (the hooks ignore them: :mod:`smllm.base.knobs`) or that load code into every
  program Claude Code starts outside the sandbox (``LD_PRELOAD``, ``PYTHONPATH``,
  ``NODE_OPTIONS``, ``BASH_ENV``, ...; a ``PATH`` with a folder in the project or a relative
  one), and the commands Claude Code runs itself (``apiKeyHelper``, ``statusLine``,
  ``otelHeadersHelper``, ...);
* other plugins enabled anywhere (their hooks and MCP servers run outside the sandbox),
  and MCP servers of the project's ``.mcp.json`` other than smllm's.

Claude Code itself refuses ``HOME``, the ``XDG_*`` folders, ``CLAUDE_CONFIG_DIR`` and
``TMPDIR`` from a project's ``env`` (its ``PROJECT_SCOPE_BLOCKED_ENV_VARS``, 2.1.332), so a
repository cannot move smllm's folders that way.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from smllm.base import knobs
from smllm.setup import firing, install, sandbox, settings

Severity = Literal["error", "warn"]
MANAGED = Path("/etc/claude-code/managed-settings.json")
MANAGED_DIR = Path("/etc/claude-code/managed-settings.d")

#: ``env`` names that load code into a program as it starts (every hook, MCP server and
#: helper Claude Code runs outside the sandbox)
LOADERS = ("LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PYTHONPATH", "PYTHONHOME",
           "PYTHONSTARTUP", "NODE_OPTIONS", "NODE_PATH", "BASH_ENV", "ENV", "ZDOTDIR",
           "PERL5OPT", "PERL5LIB", "RUBYOPT", "RUBYLIB", "GIT_CONFIG_GLOBAL", "JAVA_TOOL_OPTIONS")
LOADER_PREFIXES = ("DYLD_",)
#: settings whose value is a command Claude Code runs itself, outside the sandbox
COMMANDS = ("apiKeyHelper", "proxyAuthHelper", "awsCredentialExport", "awsAuthRefresh",
            "gcpAuthRefresh", "otelHeadersHelper", "processWrapper")
#: settings objects whose ``command`` Claude Code runs itself
COMMAND_OBJECTS = ("statusLine", "subagentStatusLine", "fileSuggestion")


@dataclass(frozen=True)
class Hostile:
    """One hostile setting: where, which key, what it does, how to fix it."""

    path: Path
    key: str
    severity: Severity
    what: str
    fix: str

    def text(self) -> str:
        return f"{self.path}: {self.key}: {self.what} ({self.fix})"

    def as_json(self) -> dict[str, str]:
        return {"file": str(self.path), "key": self.key, "severity": self.severity,
                "what": self.what, "fix": self.fix}


def sources(project: Path) -> list[tuple[str, Path]]:
    """Every settings file Claude Code merges for ``project``, as (scope, path)."""
    out: list[tuple[str, Path]] = [(s, settings.settings_path(s, project))
                                   for s in settings.SCOPES]
    out.append(("managed", MANAGED))
    try:
        extra = sorted(p for p in MANAGED_DIR.iterdir() if p.suffix == ".json")
    except OSError:
        extra = []
    out += [("managed", p) for p in extra]
    return out


def _read(path: Path) -> dict[str, Any] | None:
    """The settings in ``path`` (None when it is missing, unreadable or malformed: doctor
    reports a malformed file on its own)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def scan(project: Path) -> list[Hostile]:
    """Every hostile setting in the files Claude Code merges for ``project``, and in its
    ``.mcp.json``."""
    files = [(scope, path, data) for scope, path in sources(project)
             if (data := _read(path)) is not None]
    managed_hooks = any(install.owned(d) for s, _, d in files if s == "managed")
    out: list[Hostile] = []
    for scope, path, data in files:
        out += _switches(path, data, scope, managed_hooks)
        out += _sandbox(path, data)
        out += _other_hooks(path, data)
        out += _own_hooks_in_project(path, data, project)
        out += _plugins(path, data)
        if scope in ("project", "local"):
            out += _env(path, data, project)
            out += _host_commands(path, data)
    out += _mcp_servers(project)
    return out


def _switches(path: Path, data: dict[str, Any], scope: str,
              managed_hooks: bool) -> list[Hostile]:
    out = []
    if data.get("disableAllHooks") is True:
        out.append(Hostile(path, "disableAllHooks", "error",
                           "turns every hook off: smllm neither gates nor journals a call",
                           "remove it"))
    if scope == "managed" and data.get("allowManagedHooksOnly") is True and not managed_hooks:
        out.append(Hostile(path, "allowManagedHooksOnly", "error",
                           "only managed hooks run, and smllm's are not managed: smllm "
                           "neither gates nor journals a call",
                           "ask whoever manages this machine to add smllm's hooks to the "
                           "managed settings"))
    mode = data.get("permissions", {}).get("defaultMode") if isinstance(
        data.get("permissions"), dict) else None
    if mode == "bypassPermissions":
        out.append(Hostile(path, "permissions.defaultMode", "warn",
                           "bypassPermissions: Claude Code asks nobody before a call, so "
                           "smllm's gate is the only check",
                           "remove it unless you mean it"))
    return out


def _sandbox(path: Path, data: dict[str, Any]) -> list[Hostile]:
    """The sandbox weakened in a file whose sandbox is not the one smllm wrote (smllm's own
    block is judged by :func:`smllm.setup.sandbox.status`)."""
    box = data.get("sandbox")
    if not isinstance(box, dict) or install.is_ours(box):
        return []
    out = []
    if box.get("enabled") is False:
        out.append(Hostile(path, "sandbox.enabled", "error",
                           "false turns off the sandbox: the agent's commands can change "
                           "smllm's policy, hooks and journal, and read every journal",
                           "remove it"))
    if box.get("allowUnsandboxedCommands") is True:
        out.append(Hostile(path, "sandbox.allowUnsandboxedCommands", "error",
                           "true lets a command ask to run outside the sandbox",
                           "remove it"))
    extra = [c for c in box.get("excludedCommands") or [] if c not in sandbox.OWN_COMMANDS]
    if extra:
        out.append(Hostile(path, "sandbox.excludedCommands", "warn",
                           f"{', '.join(map(str, extra))} run outside the sandbox, with "
                           "anything chained to them", "remove them"))
    if box.get("enableWeakerNestedSandbox") is True:
        out.append(Hostile(path, "sandbox.enableWeakerNestedSandbox", "warn",
                           "true shows the host's /proc inside the sandbox",
                           "remove it unless Claude Code runs in a container without "
                           "namespaces"))
    return out


def _other_hooks(path: Path, data: dict[str, Any]) -> list[Hostile]:
    """Hooks that are not smllm's, per event."""
    hooks = data.get("hooks")
    out = []
    for event, groups in (hooks.items() if isinstance(hooks, dict) else []):
        theirs = [h for g in (groups if isinstance(groups, list) else [])
                  if isinstance(g, dict) for h in (g.get("hooks") or [])
                  if isinstance(h, dict) and settings.smllm_event_of(h) is None]
        if not theirs:
            continue
        runs = ", ".join(str(h.get("command") or h.get("url") or h.get("type")) for h in theirs)
        after = (": its updatedInput replaces a call's input after smllm decided on it"
                 if event == "PreToolUse" else "")
        out.append(Hostile(path, f"hooks.{event}", "warn",
                           f"{runs} runs beside smllm's hook, outside the sandbox{after}",
                           "remove it unless you trust it"))
    return out


def _own_hooks_in_project(path: Path, data: dict[str, Any], project: Path) -> list[Hostile]:
    """smllm's hooks (by their command's form) whose program lies in the project, where the
    agent can rewrite it: a repository shipping settings that point there."""
    inside = str(project.absolute()) + os.sep
    programs = sorted({w for hooks in install.owned(data).values() for h in hooks
                       if (w := _program(str(h.get("command", "")))).startswith(inside)})
    return [Hostile(path, "hooks", "error",
                    f"smllm's hooks run {program}, inside the project, where the agent can "
                    "rewrite it to run anything outside the sandbox",
                    "run `smllm install` from smllm's own environment, outside the project")
            for program in programs]


def _program(command: str) -> str:
    """The first word of a hook command (the program it runs)."""
    import shlex  # noqa: PLC0415 - install and doctor only

    try:
        words = shlex.split(command)
    except ValueError:
        return ""
    return os.path.abspath(words[0]) if words else ""


def _plugins(path: Path, data: dict[str, Any]) -> list[Hostile]:
    enabled = data.get("enabledPlugins")
    names = [k for k, v in enabled.items() if v and k.split("@")[0] != "smllm"] \
        if isinstance(enabled, dict) else []
    if not names:
        return []
    return [Hostile(path, "enabledPlugins", "warn",
                    f"{', '.join(names)}: their hooks and MCP servers run outside the sandbox",
                    "disable the ones you do not trust: claude plugin disable NAME")]


def _loader(name: str) -> bool:
    upper = name.upper()
    return upper in LOADERS or upper.startswith(LOADER_PREFIXES)


def _agent_path(value: str, project: Path) -> list[str]:
    """The folders of a ``PATH`` value the agent can write: relative ones, or inside the
    project."""
    inside = str(project.absolute()) + os.sep
    return [p for p in value.split(os.pathsep)
            if p and "$" not in p and (not os.path.isabs(p) or (p + os.sep).startswith(inside))]


def _env(path: Path, data: dict[str, Any], project: Path) -> list[Hostile]:
    env = data.get("env")
    if not isinstance(env, dict):
        return []
    out = []
    ours = sorted(k for k in env if isinstance(k, str) and k.startswith(knobs.PREFIX))
    if ours:
        out.append(Hostile(path, "env", "warn",
                           f"sets {', '.join(ours)}, which smllm's hooks ignore (a project "
                           "cannot give them orders: fault points, the clock, smllm's home)",
                           "remove them from this file"))
    loaders = sorted(k for k in env if isinstance(k, str) and _loader(k))
    if loaders:
        out.append(Hostile(path, "env", "warn",
                           f"sets {', '.join(loaders)}, which load code into every hook, MCP "
                           "server and helper Claude Code starts outside the sandbox",
                           "remove them from this file"))
    value = env.get("PATH")
    folders = _agent_path(value, project) if isinstance(value, str) else []
    if folders:
        out.append(Hostile(path, "env.PATH", "warn",
                           f"puts {', '.join(folders)} first, a folder the agent can write: a "
                           "program it leaves there runs wherever Claude Code starts one by "
                           "name, outside the sandbox", "keep PATH to folders outside the "
                           "project"))
    return out


def _host_commands(path: Path, data: dict[str, Any]) -> list[Hostile]:
    found = [(key, data[key]) for key in COMMANDS if isinstance(data.get(key), str)]
    found += [(f"{key}.command", data[key]["command"]) for key in COMMAND_OBJECTS
              if isinstance(data.get(key), dict) and isinstance(data[key].get("command"), str)]
    return [Hostile(path, key, "warn", f"Claude Code runs {command!r} itself, outside the "
                                       "sandbox", "remove it unless you trust it")
            for key, command in found]


def _mcp_servers(project: Path) -> list[Hostile]:
    path = project / firing.MCP_FILE
    data = _read(path)
    servers = data.get("mcpServers") if data is not None else None
    names = [n for n, e in servers.items() if not (n == firing.MCP_SERVER and firing.is_ours(e))] \
        if isinstance(servers, dict) else []
    if not names:
        return []
    return [Hostile(path, "mcpServers", "warn",
                    f"{', '.join(names)} run outside the sandbox once approved (smllm's gate "
                    "judges their tools by what they do, but cannot see inside them)",
                    "remove the ones you do not trust")]


def errors(found: list[Hostile]) -> list[Hostile]:
    return [h for h in found if h.severity == "error"]


def summary(found: list[Hostile]) -> str:
    """Install's last line over hostile settings: ``installed, but ...``."""
    if errors(found):
        return (f"installed, but not in force: {len(errors(found))} setting(s) above switch "
                "smllm or its sandbox off; remove them, then check with `smllm doctor`")
    return (f"installed, but {len(found)} setting(s) above run programs outside the sandbox "
            "or weaken it; `smllm doctor` lists them")
