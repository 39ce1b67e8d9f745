"""smllm's self-protection: the protected set, and the calls that would change it.

The protected set is what the agent must never write, whatever the policy says (even in
``yolo`` mode): the project's ``.claude/`` and ``.smllm/``, the user's Claude Code folder
and ``~/.claude.json``, smllm's data, state and config folders, and smllm's own code.
``smllm install`` makes the same set read-only inside Claude Code's sandbox
(:mod:`smllm.setup.sandbox`); this module is the gate's half, for what it can see:

* file tools (Write, Edit, MultiEdit, NotebookEdit, and MCP tools that write) naming a
  path in the set, directly or through a link (``ln -s .claude cfg`` then ``cfg/x``):
  paths are resolved with :func:`os.path.realpath` as well as lexically; and, in a hook's
  session, a file tool whose path under the project goes through a link or folder the
  agent's commands made in this session (:func:`fresh_component`: the check-then-use race);
* MCP tools as the gate judges them (:func:`smllm.gate.mcp.judge`): the paths they write,
  delete or move, and the commands or code they run, checked like a Bash command;
* ``smllm install`` / ``uninstall`` run by the agent, in any spelling that names them
  (``python -m smllm``, the plugin's launcher, inside ``bash -c``).

* shell commands whose writes, deletes, moves, links or mode changes (as the shell analyser
  resolves them: ``~``, variables, ``cd``, links) land in the set, by any program.

Hot path: standard library basics only (the analyser loads for Bash calls, as the gate's).
"""

from __future__ import annotations

from smllm.base import catalogue as tools
from smllm.base import osfast as os
from smllm.base import protected as protected_set

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from smllm.base.catalogue import ToolCall
    from smllm.gate.analysis import CallAnalysis
    from smllm.gate.shell import Analysis

#: argument names of MCP tools that hold a path (any case), and lists of paths
MCP_PATH_KEYS = frozenset(k.lower() for k in (*tools.MCP_PATH_KEYS, *tools.MCP_PATH_LIST_KEYS))
#: words in an MCP tool's name that say it changes files
MCP_WRITE_WORDS = ("write", "edit", "create", "move", "rename", "delete", "remove", "copy",
                   "mkdir", "append", "patch", "put", "upload", "save", "replace", "chmod")
#: smllm's commands only a person runs: (un)install, and the answer to a tripwire violation
SELF_COMMANDS = frozenset({"install", "uninstall", "tripwire"})
#: what the agent runs of smllm itself, outside the sandbox: the sandbox's
#: ``excludedCommands`` (setup/sandbox.py), and the subcommands they name
EXCLUDED_COMMANDS = ("smllm fire *", "smllm status", "smllm status *", "smllm reconcile *")
OWN_COMMANDS = frozenset(c.split()[1] for c in EXCLUDED_COMMANDS)
_SEPARATORS = ";&|()`$<>{}\n\t\"'\\"


def protected_paths(project: str) -> tuple[str, ...]:
    """The protected set, as absolute paths (:func:`smllm.base.protected.protected_set`)."""
    return protected_set.protected_set(project)


def _under(path: str, roots: tuple[str, ...]) -> str | None:
    for root in roots:
        if path == root or path.startswith(root.rstrip(os.sep) + os.sep):
            return root
    return None


def reaches(path: str, cwd: str, protected: tuple[str, ...]) -> str | None:
    """The protected root ``path`` lands in, lexically or through links, if any."""
    full = os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))
    hit = _under(full, protected)
    if hit is not None:
        return hit
    try:
        real = os.path.realpath(full)
    except (UnicodeError, ValueError):  # a name no file can have (a lone surrogate, NUL)
        return None
    if real != full:
        return _under(real, tuple(os.path.realpath(p) for p in protected))
    return None


def _mcp_paths(tool_input: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for key, value in tool_input.items():
        if str(key).lower() not in MCP_PATH_KEYS:
            continue
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, list):
            out += [v for v in value if isinstance(v, str)]
    return out


def _targets(tool_name: str, tool_input: dict[str, Any]) -> list[str]:
    if tools.kind(tool_name) == tools.WRITE:
        keys = tools.path_keys(tool_name)
        return [v for k in keys if isinstance(v := tool_input.get(k), str)]
    lowered = tool_name.lower()
    if tool_name.startswith("mcp__") and any(w in lowered for w in MCP_WRITE_WORDS):
        return _mcp_paths(tool_input)
    return []


def _subcommands(command: str) -> list[str]:
    """Every smllm subcommand the text of ``command`` names (``smllm X``, ``-m smllm X``,
    the plugin's launcher or entry script), however it is quoted or nested."""
    words = command
    for ch in _SEPARATORS:
        words = words.replace(ch, " ")
    tokens = words.split()
    found = []
    for i, tok in enumerate(tokens[:-1]):
        name = tok.rsplit("/", 1)[-1]
        if name in ("smllm", "launcher", "smllm_entry.py") or (
                name == "-m" and tokens[i + 1] == "smllm"):
            rest = [t for t in tokens[i + 1:] if t != "smllm" and not t.startswith("-")]
            if rest:
                found.append(rest[0])
    return found


def self_command(command: str) -> str | None:
    """``install``/``uninstall``/``tripwire`` when ``command`` runs one of smllm's commands
    that only a person runs."""
    return next((c for c in _subcommands(command) if c in SELF_COMMANDS), None)


def unsandboxed_fire(command: str) -> bool:
    """Does ``command`` name ``smllm fire``/``status``/``reconcile`` without being one plain
    such command?

    ``smllm install`` lists them in the sandbox's ``excludedCommands`` (they must write
    smllm's state or the journal), and Claude Code then runs the *whole* command outside
    the sandbox: so the gate lets through only the plain form (one simple command, no
    operator, variable, substitution or redirection).
    """
    if "smllm" not in command or not any(c in OWN_COMMANDS for c in _subcommands(command)):
        return False
    from smllm.machine import tools  # noqa: PLC0415 - only for commands naming smllm

    return not tools.own_fire("Bash", {"command": command})


#: effects of a command the protected set must not receive (a link *to* it is harmless)
WRITE_EFFECTS = frozenset({"write", "delete", "move", "chmod", "link"})
#: programs that write a whole tree into the folder they are given: an archive or a sync
#: into a folder above the protected set may carry it (``tar -xf x.tar`` in the project)
TREE_WRITERS = frozenset({"tar", "bsdtar", "unzip", "7z", "7za", "cpio", "pax", "rsync",
                          "cp", "ditto", "busybox"})


def shell_effects(command: str, analysis: Analysis, cwd: str,
                  protected: tuple[str, ...]) -> str | None:
    """The first write ``analysis`` (of ``command``) sees into the protected set, or None.

    The analyser resolves ``~``, variables, ``cd`` and links in each effect's path; an
    effect whose path is only known at run time is refused when the command's text names
    a protected place (a variable or substitution could then reach it).
    """
    lowered = command.lower()
    named = "smllm" in lowered or "claude" in lowered or any(
        os.path.basename(p) in command for p in protected)
    for effect in analysis.effects:
        if effect.kind not in WRITE_EFFECTS:
            continue
        if effect.path is None:
            if named:
                return (f"smllm protects itself: {effect.by} {effect.kind}s a path known only "
                        f"at run time in a command that names smllm's protected set")
            continue
        root = reaches(effect.path, cwd, protected)
        if root is None and effect.by in TREE_WRITERS:  # unpacks or syncs a tree into it
            folder = os.path.normpath(os.path.join(cwd, effect.path))
            held = next((p for p in protected if _under(p, (folder,))), None)
            if held is not None:
                return (f"smllm protects itself: {effect.by} writes a tree into {folder}, "
                        f"which holds {held}: it could replace what the agent may not change")
        if root is not None:
            return (f"smllm protects itself: {effect.by} would {effect.kind} {effect.path}, "
                    f"inside {root}, which the agent may not change")
    return None


def planted_config(command: str, cwd: str, protected: tuple[str, ...]) -> str | None:
    """The nearest ``.smllm/config.toml`` above ``cwd`` when a plain ``smllm fire``/
    ``status``/``reconcile`` is run there and that config lies outside the protected set:
    one the agent planted in a subfolder. The commands themselves read only the bound
    session's project config (:func:`smllm.machine.project_configs`); this is the second
    layer, for an smllm that would still load it."""
    if "smllm" not in command or not any(c in OWN_COMMANDS for c in _subcommands(command)):
        return None
    from smllm import machine  # noqa: PLC0415 - only for smllm's own commands

    config = machine.nearest_config(cwd)
    if config is not None and reaches(config, cwd, protected) is None:
        return config
    return None


def agent_reconcile(call: ToolCall) -> bool:
    """Is ``call`` the agent recording the outcome of an unknown effect: one plain ``smllm
    reconcile SEQ --outcome …`` in Bash (journaled as the agent's claim, with its
    evidence, by the command itself: :mod:`smllm.commands.reconcile`)?"""
    command = call.command
    if command is None or "reconcile" not in command:
        return False
    from smllm.machine import tools  # noqa: PLC0415 - only for commands naming reconcile

    return tools.own_fire(call.tool, call.input) and _subcommands(command)[:1] == ["reconcile"]


def _bash(command: str | None, analysed: CallAnalysis, cwd: str,
          protected: tuple[str, ...]) -> str | None:
    if command is None:
        return None
    which = self_command(command)
    if which is not None:
        return (f"smllm protects itself: the agent may not run `smllm {which}` (a person "
                f"runs it outside the session)")
    if unsandboxed_fire(command):
        return ("smllm protects itself: `smllm fire`, `smllm status` and `smllm reconcile` "
                "run outside the sandbox, so they must be one plain command (no other "
                "command, operator, variable, substitution or redirection)")
    planted = planted_config(command, cwd, protected)
    if planted is not None:
        return (f"smllm protects itself: `smllm {_subcommands(command)[0]}` runs outside the "
                f"sandbox and, from {cwd}, would load {planted}, a machine config the agent "
                "can write (only the project's .smllm/ and the user's config are read); run "
                "it from the project folder")
    if analysed.shell is None:
        return None
    return shell_effects(command, analysed.shell, cwd, protected)


def _mcp_judged(tool_name: str, analysed: CallAnalysis, cwd: str,
                protected: tuple[str, ...]) -> str | None:
    """What the gate's judgement of an MCP tool (:func:`smllm.gate.mcp.judge`) finds it
    changes: the paths it writes, deletes or moves, and what a command or code it runs
    writes, checked as a Bash command's writes are."""
    for command, analysis in analysed.commands:
        found = shell_effects(command, analysis, cwd, protected)
        if found is not None:
            return f"{found} (a command the MCP tool {tool_name} runs)"
    judgement = analysed.judgement
    for target in judgement.targets if judgement is not None else ():
        path = target["path"]
        root = reaches(path, cwd, protected) if path is not None else None
        if root is not None and target["effect"] in WRITE_EFFECTS:
            return (f"smllm protects itself: {tool_name} would {target['effect']} {path}, "
                    f"inside {root}, which the agent may not change")
    return None


class Fresh:
    """What "created in this session" is measured against: when the session (or its
    resume) started, in ns, and the folders Claude Code's own file tools were to create
    (recorded at PreToolUse, :func:`host_folders`): the host made those, not the agent."""

    __slots__ = ("host_dirs", "since_ns")

    def __init__(self, since_ns: int, host_dirs: frozenset[str]) -> None:
        self.since_ns = since_ns
        self.host_dirs = host_dirs


_S_IFMT, _S_IFDIR, _S_IFLNK = 0o170000, 0o040000, 0o120000


def _under_project(target: str, cwd: str, project: str) -> list[str]:
    """The paths from ``project`` down to ``target`` (its folders, then itself), when
    ``target`` lies under ``project``; else none."""
    full = os.path.normpath(os.path.join(cwd, os.path.expanduser(target)))
    if not full.startswith(project.rstrip(os.sep) + os.sep):
        return []
    parts = full[len(project.rstrip(os.sep)) + 1:].split(os.sep)
    return [os.path.join(project, *parts[:i]) for i in range(1, len(parts) + 1)]


def _born_in_session(path: str, ctime_ns: int, link: bool, fresh: Fresh) -> bool:
    if ctime_ns < fresh.since_ns:
        return False  # not even changed since the session began
    from smllm.base import birth  # noqa: PLC0415 - a folder or link changed in this session

    born = birth.born_ns(path)
    if born is None:  # no birth time here: a link's ctime moves only when it is made (or
        return link   # renamed); a folder's with every entry, so it is given the benefit
    return born >= fresh.since_ns


def fresh_component(target: str, cwd: str, project: str, fresh: Fresh) -> str | None:
    """The link or folder on ``target``'s path under ``project`` that was created in this
    session by anything but Claude Code's own file tools, or None.

    Claude Code writes outside the sandbox: a folder the agent's commands made (or a link
    they planted) can be swapped for a link into smllm's protected set between the gate's
    check and the write, so a file tool writing through one is denied outright. Links and
    folders that existed before the session (``node_modules/.bin``) are not; nor are the
    folders a file tool itself created (Write makes missing folders). Missing parts end
    the check (Claude Code will create them). "Created" is the birth time (``statx`` on
    Linux, ``st_birthtime`` on macOS) against the session's start (or its resume)."""
    for path in _under_project(target, cwd, project):
        try:
            st = os.lstat(path)
        except (OSError, ValueError):
            return None  # missing (or unnamable): nothing there to swap yet
        kind = st.st_mode & _S_IFMT
        if kind not in (_S_IFDIR, _S_IFLNK):
            return None  # the target itself (or a file where a folder should be)
        if path in fresh.host_dirs and kind == _S_IFDIR:
            continue
        if _born_in_session(path, st.st_ctime_ns, kind == _S_IFLNK, fresh):
            return path if kind == _S_IFLNK else path + os.sep
    return None


def host_folders(call: ToolCall) -> list[str]:
    """The missing folders of a file tool's path under the project: Claude Code's own file
    tool will create them (recorded, so that later writes through them pass)."""
    out = []
    for target in _targets(call.tool, call.input):
        out += [p for p in _under_project(target, call.cwd, call.project)[:-1]
                if not os.path.lexists(p)]
    return out


def check(call: ToolCall, analysed: CallAnalysis, protected: tuple[str, ...],
          fresh: Fresh | None = None) -> str | None:
    """Why ``call`` would change smllm's protected set, or None (``analysed``: the call's
    one analysis, :func:`smllm.gate.analysis.of`; ``fresh``: the session, for the file
    tools' check of links and folders created in it, :func:`fresh_component`)."""
    if call.kind == tools.SHELL:
        return _bash(call.command, analysed, call.cwd, protected)
    for target in _targets(call.tool, call.input):
        root = reaches(target, call.cwd, protected)
        if root is not None:
            return (f"smllm protects itself: {call.tool} of {target} would change {root}, "
                    f"which the agent may not write")
        made = fresh_component(target, call.cwd, call.project, fresh) if fresh else None
        if made is not None:
            what = "link" if not made.endswith(os.sep) else "folder"
            return (f"smllm protects itself: {call.tool} of {target} goes through "
                    f"{made.rstrip(os.sep)}, a {what} made in this session by a command: "
                    f"Claude Code writes outside the sandbox, and such a {what} can be swapped "
                    "for a link into smllm's protected set before the write lands. Let the "
                    "file tool create missing folders itself (write the file without making "
                    "its folder first), or write the file with a command")
    if call.kind == tools.MCP:
        return _mcp_judged(call.tool, analysed, call.cwd, protected)
    return None
