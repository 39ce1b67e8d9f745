"""``smllm doctor``: what is installed where, and whether Claude Code would run the hooks.

Each finding is a :class:`Finding` (``ok``, ``info``, ``warn`` or ``error``). The
important failure is silent on Claude Code's side: a settings file that does not parse
is ignored **whole**, so no hook in it fires and ``claude -p`` still exits 0. Doctor
parses every settings file Claude Code would read and flags such a file as an error.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import smllm
from smllm import machine
from smllm.base import paths, protected
from smllm.base.errors import ConfigError
from smllm.hooks import GATING
from smllm.machine import catalog
from smllm.setup import firing, hostile, install, sandbox, settings

Status = Literal["ok", "info", "warn", "error"]
MANAGED = Path(protected.MANAGED_SETTINGS[0])
#: optional check functions of other features: module -> function name
FEATURE_CHECKS: dict[str, str] = {"smllm.gate.policy": "check"}


@dataclass(frozen=True)
class Finding:
    status: Status
    text: str


@dataclass(frozen=True)
class Registration:
    """smllm's hooks found in one settings file."""

    scope: str
    path: Path
    events: tuple[str, ...]
    commands: tuple[str, ...]


def smllm_itself() -> Finding:
    where = Path(smllm.__file__).parent
    python = install.canonical_python(sys.executable) if sys.executable else ""
    return Finding("ok", f"smllm {smllm.VERSION} at {where} (python {python})")


def _run_probe(label: str, python: str, flags: list[str], setup: str,
               short: str | None = None) -> Finding:
    """Does ``python`` (with ``flags`` and the hook's ``sys.path`` set-up) import smllm?
    (``short``: how an error names it, default ``label``)"""
    short = short or label
    code = setup + "import smllm, smllm.hooks; print(smllm.VERSION, smllm.__file__)"
    try:
        out = subprocess.run([python, *flags, "-c", code], capture_output=True, text=True,
                             timeout=30, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Finding("error", f"  hooks run {short}: cannot start it ({exc})")
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["?"])[-1]
        return Finding("error", f"  hooks run {short}: it cannot import smllm ({last}); "
                                f"reinstall smllm into it or re-run `smllm install`")
    version, _, location = out.stdout.strip().partition(" ")
    return Finding("ok", f"  hooks run {label}: smllm {version} from {Path(location).parent}")


def worker_status(exe: str, home: str | None = None) -> Finding:
    """What the native client ``exe`` hands the hooks to: smllm's resident worker, running
    or started by the next hook (its stats in smllm's key folder)."""
    from smllm import worker  # noqa: PLC0415 - doctor only

    if home:
        folder = os.path.join(home, "key")
    elif sys.platform.startswith("linux"):  # the platform's folders, as --home platform pins
        folder = os.path.join(paths._xdg("XDG_STATE_HOME", ".local/state"), "key")
    else:
        folder = paths.key_root()
    hook = str(install.python_hook(Path(exe)))
    stats = next(iter(worker.workers(folder, hook)), None)
    head = ("  hooks run through the native client: smllm's resident worker "
            + (f"serves them (pid {stats['pid']}, {stats.get('calls', 0)} calls)" if stats
               else "starts with the next hook"))
    return Finding("info", f"{head}; {worker.SWITCH}=0 runs the Python hook {hook} alone")


def _probe_executable(exe: str) -> Finding:
    """The hook executable: is it there, and does the interpreter of its ``#!`` line import
    smllm the way the executable sets it up? Where it is the native client
    (:mod:`smllm.worker`), the Python hook beside it, which the client and the worker run
    (reported under the client's name)."""
    if install.is_native(exe):
        script = str(install.python_hook(Path(exe)))
        found = _probe_executable(script)
        return Finding(found.status, found.text.replace(f"hooks run {script}",
                                                        f"hooks run {exe}", 1))
    try:
        with open(exe, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except (OSError, UnicodeDecodeError):
        lines = []
    if not (lines and lines[0].startswith("#!") and os.access(exe, os.X_OK)):
        return Finding("error", f"  hooks run {exe}: not an executable file (re-run "
                                f"`smllm install` with the Python smllm lives in)")
    python, _, flag = lines[0][2:].strip().partition(" ")
    flags = [f"-{c}" for c in flag.strip().lstrip("-")] if flag.strip() else []
    shown = " ".join([python, *flags])
    if not (os.path.isabs(python) and os.access(python, os.X_OK)):
        return Finding("error", f"  hooks run {exe}, whose interpreter {python} is not an "
                                f"executable file (re-run `smllm install` with the Python "
                                f"smllm lives in)")
    setup = "".join(f"{ln}; " for ln in lines if ln.startswith("sys.path"))
    return _run_probe(f"{exe} ({shown})", python, flags, "import sys; " + setup)


def _probe(command: str) -> Finding:
    """Does a hook command's interpreter exist and import smllm's hook entry point?"""
    try:
        words = shlex.split(command)
    except ValueError as exc:
        return Finding("error", f"  hook command cannot be parsed ({exc}): {command}")
    if settings.is_executable_form(command):
        return _probe_executable(words[0])
    python = words[0] if words else ""
    # the interpreter's own flags: the words before `-c CODE` (or `-m smllm`)
    end = next((i for i, w in enumerate(words) if w in ("-c", "-m")), len(words))
    flags = words[1:end]
    if not (os.path.isabs(python) and os.access(python, os.X_OK)):
        return Finding("error", f"  hooks run {python}: not an executable file "
                                f"(re-run `smllm install` with the Python smllm lives in)")
    setup = ""
    if "-c" in words[:-1]:  # the hook's own code, with its sys.path set-up (for -S)
        hook_code = words[words.index("-c") + 1]
        head, sep, _ = hook_code.partition(install.HOOK_ENTRY)
        if sep:
            setup = head.replace(install.HOOK_GUARD, "import sys; ")
    return _run_probe(" ".join([python, *flags]), python, flags, setup, python)


def registration(scope: str, sf: settings.SettingsFile) -> Registration:
    found = install.owned(sf.data)
    commands = sorted({str(h.get("command")) for hooks in found.values() for h in hooks})
    return Registration(scope, sf.path, tuple(found), tuple(commands))


def settings_file(scope: str, path: Path) -> tuple[list[Finding], Registration | None]:
    """Findings about one settings file, and smllm's registration in it."""
    label = f"{scope} settings {path}"
    try:
        sf = settings.read(path)
    except ConfigError as exc:
        return [Finding("error", f"{scope} settings {exc.render()}")], None
    if not sf.exists:
        return [Finding("info", f"{label}: not present")], None
    out: list[Finding] = []
    reg = registration(scope, sf)
    if not reg.events:
        out.insert(0, Finding("ok", f"{label}: parses; no smllm hooks"))
        return out, None
    missing = [e for e in install.EVENTS if e not in reg.events]
    status: Status = "warn" if missing else "ok"
    text = f"{label}: parses; smllm hooks for {len(reg.events)}/{len(install.EVENTS)} events"
    if missing:
        text += f" (missing: {', '.join(missing)}; re-run `smllm install`)"
    out.insert(0, Finding(status, text))
    out += _fail_open(sf.data, label)
    if sum(map(len, install.owned(sf.data).values())) > len(reg.events):
        out.append(Finding("warn", f"{label}: an event has more than one smllm hook "
                                   f"(re-run `smllm install`: it keeps one per event)"))
    out += firing_rules(scope, sf, label)
    out += _what_runs(sf.data)
    for command in _one_per_interpreter(reg.commands):
        out.append(_probe(command))
        out += _through_worker(command)
    flags = scope_flags(scope, path)
    if scope == "managed":  # not smllm's to change: whoever manages the machine
        return out, reg
    return [Finding(f.status, f.text.replace("`smllm install`", f"`smllm install {flags}`"))
            for f in out], reg


def _fail_open(data: dict[str, Any], label: str) -> list[Finding]:
    """A gating hook of smllm's without ``"onFailure": "block"``: the pinned Claude Code
    then lets the call run when the hook is killed by a signal or times out."""
    found = install.owned(data)
    return [Finding("warn", f"{label}: the {event} hook has no \"onFailure\": "
                            f"\"{install.ON_FAILURE}\", so Claude Code lets a call run when "
                            "that hook is killed by a signal or times out (re-run "
                            "`smllm install`)")
            for event in sorted(GATING) for hook in found.get(event, [])
            if hook.get("onFailure") != install.ON_FAILURE]


def scope_flags(scope: str, path: Path) -> str:
    """The ``smllm install``/``uninstall`` flags that name this settings file."""
    if scope == "user":
        return "--user"
    project = shlex.quote(str(path.parent.parent))
    return f"--project {project} --local" if scope == "local" else f"--project {project}"


def _what_runs(data: dict[str, Any]) -> list[Finding]:
    """For each of smllm's hooks in a settings file: the event and the command it runs."""
    found = install.owned(data)
    width = max(map(len, found), default=0)
    return [Finding("info", f"  {event + ':':<{width + 1}} {hook.get('command')}")
            for event in [*install.EVENTS, *(e for e in found if e not in install.EVENTS)]
            for hook in found.get(event, [])]


def firing_rules(scope: str, sf: settings.SettingsFile, label: str) -> list[Finding]:
    """The allow rules an earlier install added: Claude Code ignores them in a project's
    settings until the folder is trusted, and says so on every ``claude -p``; smllm's hook
    allows its own firing without them, and ``smllm install`` removes them."""
    rules = firing.old_rules(sf.data)
    if not rules:
        return []
    gated = " (Claude Code ignores them until you trust this folder, and prints \"Ignoring " \
            f"{len(rules)} permissions.allow entries\" on every claude -p)" \
        if scope != "user" else ""
    return [Finding("warn" if gated else "info",
                    f"{label}: allow rules an earlier smllm install added, no longer "
                    f"needed{gated}: {', '.join(rules)}; re-run `smllm install` to "
                    f"remove them")]


def _through_worker(command: str) -> list[Finding]:
    """For a hook command that runs the native client: the worker's line."""
    if not settings.is_executable_form(command):
        return []
    words = shlex.split(command)
    if not install.is_native(words[0]):
        return []
    home = words[words.index("--home") + 1] if "--home" in words[:-1] else None
    pinned = home if home and home != "platform" and os.path.isabs(home) else None
    return [worker_status(words[0], pinned)]


def _interpreter(command: str) -> tuple[str, ...]:
    """The interpreter and its flags a hook command runs (the words before -c / -m), or the
    hook executable."""
    try:
        words = shlex.split(command)
    except ValueError:
        return (command,)
    if settings.is_executable_form(command):
        return tuple(words[:1])
    end = next((i for i, w in enumerate(words) if w in ("-c", "-m")), len(words))
    return tuple(words[:end])


def _one_per_interpreter(commands: tuple[str, ...]) -> list[str]:
    """One command for each interpreter the hooks run: every event's hook names the same
    interpreter, which is probed (and reported) once."""
    found: dict[tuple[str, ...], str] = {}
    for c in commands:
        found.setdefault(_interpreter(c), c)
    return list(found.values())


def _enabled_plugins(paths: list[Path]) -> list[str]:
    names: list[str] = []
    for path in paths:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        enabled = data.get("enabledPlugins") if isinstance(data, dict) else None
        if isinstance(enabled, dict):
            names += [k for k, v in enabled.items() if v and k.split("@")[0] == "smllm"]
    return sorted(set(names))


def _installed_plugins() -> dict[str, list[dict[str, Any]]]:
    path = settings.claude_config_dir() / "plugins" / "installed_plugins.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    plugins = data.get("plugins") if isinstance(data, dict) else None
    return plugins if isinstance(plugins, dict) else {}


def private_env(data: Path) -> Finding:
    """The state of the plugin's private environment under ``$CLAUDE_PLUGIN_DATA``."""
    if list(data.glob("venv/.smllm-ready-*")):
        return Finding("ok", f"  private environment {data / 'venv'}: ready")
    failed = data / "bootstrap.failed"
    if failed.exists():
        reason = failed.read_text(errors="replace").strip().splitlines()[-1:] or ["?"]
        return Finding("warn", f"  private environment: the bootstrap failed ({reason[0]}); "
                               f"hooks run on python3 from PATH meanwhile; see "
                               f"{data / 'bootstrap.log'}")
    return Finding("info", f"  private environment {data / 'venv'}: not built yet (hooks run "
                           f"on python3 from PATH meanwhile)")


def _marketplace_source(market: str) -> tuple[str, str] | None:
    """(kind, where) a marketplace's plugins come from: ``directory`` and a folder, or
    ``github``/``git``/``url`` and a repository."""
    path = settings.claude_config_dir() / "plugins" / "known_marketplaces.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    entry = data.get(market) if isinstance(data, dict) else None
    source = entry.get("source") if isinstance(entry, dict) else None
    if not isinstance(source, dict):
        return None
    found = source.get("path") or source.get("repo") or source.get("url")
    return (str(source.get("source") or ""), str(found)) if found else None


def plugin_names() -> list[str]:
    """The installed plugins named smllm (``smllm@<marketplace>``)."""
    return sorted(n for n in _installed_plugins() if n.split("@")[0] == "smllm")


def reads_from(name: str) -> str | None:
    """The folder Claude Code reads an installed plugin from. Claude Code 2.1.332 reads a
    plugin of a local-folder marketplace in place, from that folder (``claude plugin list``:
    "Read from"); any other it runs from its copy under ``~/.claude/plugins/cache``."""
    source = _marketplace_source(name.partition("@")[2])
    if source is not None and source[0] == "directory":
        return os.path.realpath(source[1])
    for entry in _installed_plugins().get(name, []):
        if entry.get("installPath"):
            return os.path.realpath(str(entry["installPath"]))
    return None


def _plugin_installs(name: str) -> list[Finding]:
    out = []
    source = _marketplace_source(name.partition("@")[2])
    in_place = source is not None and source[0] == "directory"
    for entry in _installed_plugins().get(name, []):
        root = Path(reads_from(name) or "") if in_place \
            else Path(str(entry.get("installPath", "")))
        launcher = root / "hooks" / "launcher"
        ok = os.access(launcher, os.X_OK)
        if in_place:
            how = (f"{root}, the marketplace folder itself (read in place: edits apply from "
                   f"the next session)")
        else:
            how = f"{root} (Claude Code's copy of {source[1]})" if source else str(root)
        fix = (f"{launcher} is missing; run `claude plugin marketplace update "
               f"{name.partition('@')[2]}`" if in_place
               else f"{launcher} is missing; run `claude plugin update {name}`")
        out.append(Finding("ok" if ok else "error",
                           f"  {entry.get('scope', '?')} install, version "
                           f"{entry.get('version', '?')}: Claude Code runs it from {how}: "
                           + ("launcher present" if ok else fix)))
    plugin_name, _, market = name.partition("@")
    data = settings.claude_config_dir() / "plugins" / "data" / f"{plugin_name}-{market}"
    if out and data.is_dir():
        out.append(private_env(data))
    return out


def running_plugin() -> list[Finding]:
    """When doctor itself runs from the plugin (a slash command), say so, and how Claude
    Code loaded it."""
    root = os.environ.get("CLAUDE_PLUGIN_ROOT")
    if not root or Path(root).resolve() not in Path(smllm.__file__).resolve().parents:
        return []
    here = os.path.realpath(root)
    cache = (settings.claude_config_dir() / "plugins" / "cache").resolve()
    installed = [n for n in plugin_names() if reads_from(n) == here]
    if installed:
        copy = Path(here).is_relative_to(cache)
        how = f"installed as {installed[0]}, " + (
            "Claude Code's copy" if copy else "its marketplace folder read in place")
    elif Path(here).is_relative_to(cache):
        how = "Claude Code's installed copy"
    else:
        how = "the folder itself, loaded with --plugin-dir (no copy)"
    out = [Finding("ok", f"plugin: this smllm runs from the plugin at {root} ({how})")]
    data = os.environ.get("CLAUDE_PLUGIN_DATA")
    if data:
        out.append(private_env(Path(data)))
    out.append(command_on_path(here))
    return out


def command_on_path(root: str) -> Finding:
    """The plugin route: does a shell find an ``smllm`` command, and is it this plugin's?"""
    from smllm.setup import onpath  # noqa: PLC0415 - the plugin route only

    found = shutil.which("smllm")
    step = "run /smllm:cli once in Claude Code (it links ~/.local/bin/smllm to the plugin)"
    if found is None:
        return Finding("warn", f"smllm command: not on your PATH, so a shell has no smllm "
                               f"export, serve or resume ({step})")
    runs = onpath.plugin_root_of(found)
    if runs is None:
        return Finding("warn", f"smllm command: {found} is not this plugin's (another smllm "
                               f"install: the settings route too?)")
    if os.path.realpath(runs) != root:
        return Finding("warn", f"smllm command: {found} runs the plugin at {runs}, not this one "
                               f"({step} again)")
    return Finding("ok", f"smllm command: {found} runs this plugin")


def plugin(paths: list[Path], regs: list[Registration]) -> list[Finding]:
    names = _enabled_plugins(paths)
    if not names:
        return [Finding("info", "plugin smllm: not enabled in these settings")]
    out = [Finding("ok", f"plugin {', '.join(names)}: enabled")]
    for name in names:
        out += _plugin_installs(name)
    if regs:
        files = ", ".join(str(r.path) for r in regs)
        undo = " and ".join(f"`smllm uninstall {scope_flags(r.scope, r.path)}`" for r in regs)
        out.append(Finding("warn", f"double registration: smllm's hooks are in {files} and in "
                                   f"the plugin {names[0]}, so every event runs twice (keep "
                                   f"one route: {undo}, or `claude plugin uninstall "
                                   f"{names[0]}`)"))
    return out


def _call_check(func: Callable[..., Any], project: Path) -> list[str]:
    params = inspect.signature(func).parameters
    result = func(project) if params else func()
    return [str(p) for p in (result or [])]


def features(project: Path) -> list[Finding]:
    """Policy and machine problems, from their modules' ``check()`` when they offer one."""
    out: list[Finding] = []
    for module_name, func_name in FEATURE_CHECKS.items():
        if importlib.util.find_spec(module_name) is None:
            continue
        module = importlib.import_module(module_name)
        func = getattr(module, func_name, None)
        if not callable(func):
            continue
        label = module_name.rsplit(".", 1)[1]
        try:
            problems = _call_check(func, project)
        except Exception as exc:  # doctor reports, it does not crash
            problems = [f"{type(exc).__name__}: {exc}"]
        out += [Finding("error", f"{label}: {p}") for p in problems]
        if not problems:
            out.append(Finding("ok", f"{label}: no problems"))
    return out


def machines(project: Path) -> list[Finding]:
    """The state machines configured for ``project``: each problem with file:line:col (an
    error: the Stop hook blocks while they cannot be loaded), or which ones load."""

    configs = machine.project_configs(str(project))
    if not configs:
        return [Finding("info", "machines: none configured (no .smllm/config.toml)")]
    problems = machine.check(str(project))
    if problems:
        return [Finding("error", f"machines: {p}") for p in problems]

    loaded = catalog.load(configs)
    ids = ", ".join(loaded) or "none named"
    return [Finding("ok", f"machines: {ids} ({', '.join(configs)})"), *guard_sandbox(loaded)]


def guard_sandbox(loaded: dict[str, Any]) -> list[Finding]:
    """Where the machines run programs (command guards): do those run in the sandbox?"""
    from smllm.base import bwrap  # noqa: PLC0415 - doctor only
    from smllm.base.errors import SmllmError  # noqa: PLC0415 - doctor only
    from smllm.machine import guards  # noqa: PLC0415 - doctor only

    if not guards.runs_commands(loaded):
        return []
    try:
        sandboxed, binary = guards.settings()
        if not sandboxed:
            return [Finding("warn", "guards: command guards run without a sandbox ([guards] "
                                    f"sandbox = false in {paths.user_config_file()}): the "
                                    "agent's tests and conftest.py run outside its sandbox "
                                    "(remove the line to sandbox them)")]
        found = bwrap.find(binary)
    except SmllmError as exc:
        return [Finding("error", f"guards: command guards cannot run, so their events are "
                                 f"refused: {exc.render()}")]
    return [Finding("ok", f"guards: command guards run in bubblewrap ({found})")]


def install_command(project: Path, regs: list[Registration]) -> str:
    """The one ``smllm install`` that writes the sandbox where the route in use keeps it,
    without registering the hooks a second time: the settings file that holds smllm's hooks
    (updated in place), or, on the plugin route (hooks from the plugin), the project's
    settings with ``--sandbox-only``."""
    if regs:
        reg = regs[0]
        where = {"user": "--user", "local": f"--project {shlex.quote(str(project))} --local"}
        return f"`smllm install {where.get(reg.scope, f'--project {shlex.quote(str(project))}')}`"
    return f"`smllm install --sandbox-only --project {shlex.quote(str(project))}`"


def boundary(project: Path, regs: list[Registration], plugin_on: bool) -> list[Finding]:
    """Is the trust boundary enforced (Claude Code's sandbox) or advisory (the gate alone)?
    And which hosts may the agent's commands reach?"""
    if not regs and not plugin_on:
        return []
    data: dict[str, Any] = {}
    for scope in ("local", "project", "user"):  # the most specific file that sets it
        try:
            found = settings.read(settings.settings_path(scope, project)).data
        except (ConfigError, OSError):
            continue
        if "sandbox" in found:
            data = found
            break
    status, text = sandbox.status(data, install_command(project, regs))
    out = [Finding("ok" if status == "ok" else "error" if status == "error" else "warn", text)]
    box = data.get("sandbox")
    if isinstance(box, dict) and box.get("enabled"):
        out.append(Finding("info", sandbox.network_text(box)))
    return out


def permission_rules(regs: list[Registration]) -> list[Finding]:
    """What lets the agent fire events: smllm's own hook, no permission rule."""
    if not regs:
        return []
    return [Finding("info", f"permission rules: none needed; {firing.OWN_FIRE}")]


def mcp_server(project: Path) -> list[Finding]:
    """smllm's MCP server in the project's .mcp.json, when install registered it there."""
    path = project / firing.MCP_FILE
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return []
    entry = (data.get("mcpServers") or {}).get(firing.MCP_SERVER) if isinstance(
        data, dict) and isinstance(data.get("mcpServers"), dict) else None
    if not firing.is_ours(entry):
        return []
    return [Finding("info", f"MCP server {firing.MCP_SERVER}: in {path}, its tool "
                            f"{firing.MCP_TOOL} fires state-machine events")]


def tripwire(project: Path, harness: str = "claude") -> list[Finding]:
    """The tripwire: armed or not (for another host: with that host's files among the
    watched ones), and every violation still open (gated calls are denied until a person
    answers it)."""
    from smllm import tripwire as wire  # noqa: PLC0415 - doctor only
    from smllm.tripwire import keeper, watched  # noqa: PLC0415 - doctor only

    manifest = wire.read_manifest(wire.scope_of(str(project)))
    flag = "" if harness == "claude" else f" --harness {harness}"
    if manifest is None:
        return [Finding("info", f"tripwire: not armed for this project (`smllm install{flag}` "
                                f"arms it: changes to the protected files are then noticed)")]
    if "damaged" in manifest:
        return [Finding("error", f"tripwire: its record is damaged ({manifest['damaged']}), "
                                 "so every tool call is denied (re-record it: `smllm tripwire "
                                 "accept`)")]
    found = []
    for v in keeper.open_violations(str(project)):
        call = v.get("preceding") or {}
        after = f" after the {call.get('tool_name')} call {call.get('tool_use_id')}" \
            if call else ""
        fate = "smllm put its copy back" if v.get("restored") else \
            f"smllm could not put its copy back ({v.get('error')})"
        found.append(Finding("error", f"tripwire: {v['path']} was {v['change']} outside "
                                      f"smllm{after} ({v['id']}); {fate}, and every tool "
                                      "call is denied until you answer: `smllm tripwire "
                                      "revert` keeps smllm's copy, `smllm tripwire accept` "
                                      "keeps the change"))
    if not found and harness in watched.HOSTS and harness not in keeper.hosts_of(manifest):
        found.append(Finding("warn", f"tripwire: armed, but not for {harness}'s own files "
                                     f"(its hooks and settings): a change to them is not "
                                     f"noticed (re-run `smllm install{flag}`)"))
    if not found:
        found.append(Finding("ok", f"tripwire: armed, {len(manifest.get('files', {}))} "
                                   "protected files watched, no change outside smllm"))
    return found


#: the rows of the guarantees table (docs/security.md, "Guarantees by harness"), in order
GUARANTEES = ("journal before effect", "gate", "stop enforcement", "protected set", "resume")


def tripwire_armed(project: Path, harness: str) -> bool:
    """Is the tripwire armed in ``project`` with ``harness``'s own files among the watched
    ones (``smllm install --harness NAME`` arms it)?"""
    from smllm import tripwire as wire  # noqa: PLC0415 - doctor only
    from smllm.tripwire import keeper  # noqa: PLC0415 - doctor only

    return harness in keeper.hosts_of(wire.read_manifest(wire.scope_of(str(project))))


def guarantee_lines(found: list[tuple[str, Status, str]]) -> list[tuple[Status, str]]:
    """Another host's doctor lines for its guarantees, given as ``(name, status,
    "standing: why")`` in the table's order: ``guarantee: NAME: STANDING: why``."""
    assert [name for name, _, _ in found] == list(GUARANTEES)
    return [(status, f"  guarantee: {name}: {text}") for name, status, text in found]


def store_folders() -> list[Finding]:
    """smllm's own folders: private (0700), ours, no links; and repairs the hooks made."""
    out: list[Finding] = []
    roots = dict.fromkeys([paths.data_root(), paths.state_root(), paths.config_root()])
    for root in roots:
        try:
            st = os.stat(root)
        except FileNotFoundError:
            continue
        if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
            out.append(Finding("error", f"store folder {root} belongs to user {st.st_uid}: "
                                        f"smllm refuses it (chown it back or set SMLLM_HOME)"))
        elif st.st_mode & 0o077:
            out.append(Finding("warn", f"store folder {root} is {st.st_mode & 0o777:04o}: "
                                       f"others can read or change journals and policy (smllm "
                                       f"sets it to 0700 on its next write; or chmod 700 it)"))
    try:
        with open(os.path.join(paths.logs_root(), paths.REPAIR_LOG), encoding="utf-8",
                  errors="replace") as fh:
            repairs = dict.fromkeys(line.rstrip("\n") for line in fh)
    except OSError:
        repairs = {}
    for line in repairs:
        mode, _, folder = line.partition(" ")
        out.append(Finding("warn", f"store folder {folder} was {mode}: smllm set it to 0700 "
                                   f"(who loosened it?)"))
    if not out:
        out.append(Finding("ok", "store folders: private (0700), owned by this user"))
    return out


def diagnose(project: Path) -> list[Finding]:
    """Every finding, in display order."""
    found = [smllm_itself()]
    regs: list[Registration] = []
    files: list[Path] = []
    scoped: list[tuple[str, Path]] = [(s, settings.settings_path(s, project))
                                      for s in settings.SCOPES]
    if MANAGED.exists():
        scoped.append(("managed", MANAGED))
    for scope, path in scoped:
        findings, reg = settings_file(scope, path)
        found += findings
        files.append(path)
        if reg is not None:
            regs.append(reg)
    if len(regs) > 1:
        where = ", ".join(str(r.path) for r in regs)
        keep = next((r for r in regs if r.scope == "project"), regs[-1])
        undo = " and ".join(f"`smllm uninstall {scope_flags(r.scope, r.path)}`"
                            for r in regs if r is not keep)
        found.append(Finding("warn", f"double registration: smllm's hooks are in {where}, so "
                                     f"every event runs more than once (keep one: {undo} "
                                     f"leaves those of {keep.path})"))
    from_plugin = running_plugin()
    if not regs and not _enabled_plugins(files) and not from_plugin:
        found.append(Finding("warn", f"smllm is not installed for {project} (run "
                                     f"`smllm install --project {project}` or add the plugin)"))
    found += plugin(files, regs)
    found += from_plugin
    found += features(project)
    found += machines(project)
    found += permission_rules(regs)
    found += mcp_server(project) if regs else []
    found += boundary(project, regs, bool(_enabled_plugins(files)) or bool(from_plugin))
    found += tripwire(project)
    found += hostile_settings(project)
    found += store_folders()
    return found


def hostile_settings(project: Path) -> list[Finding]:
    """Each setting that switches smllm off or runs programs outside the sandbox
    (:mod:`smllm.setup.hostile`), with how to fix it."""
    return [Finding(h.severity, h.text()) for h in hostile.scan(project)]
