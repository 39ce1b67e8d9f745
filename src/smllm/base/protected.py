"""smllm's protected set: what the agent must never write, whatever the policy says.

One definition, used by the gate's self-protection (:mod:`smllm.gate.protect`), the
sandbox settings install writes (:mod:`smllm.setup.sandbox`: the same set read-only to
the agent's commands) and doctor. It holds:

* the project's ``.claude/`` and ``.smllm/`` folders, and its ``.mcp.json`` (Claude Code
  starts the servers it names, outside the sandbox);
* the user's Claude Code folder and its state file (:func:`smllm.base.paths.claude_root`);
* smllm's own folders (:func:`own_folders`: data, state, config, cache);
* smllm's code: the package, the virtual environment it runs from, the hook executable
  beside its interpreter, and the ``smllm`` command wherever the installer linked it (the
  links ``smllm install`` recorded in smllm's state folder, :func:`recorded_commands`, and
  the installer's default ``~/.local/bin/smllm``: never found through ``PATH``);
* Claude Code's managed settings (:data:`MANAGED_SETTINGS`), which override every other;
* the tripwire's manifests and copies (:mod:`smllm.tripwire`), in the state folder.

>>> import os
>>> s = protected_set("/work/p")
>>> "/work/p/.smllm" in s and "/work/p/.mcp.json" in s
True

Hot path: ``os`` and ``sys`` only.
"""

from __future__ import annotations

import sys

from smllm.base import osfast as os
from smllm.base import paths

#: what ``smllm install`` adds to a project and the agent must not change
PROJECT_PARTS = (".claude", ".smllm", ".mcp.json")
#: Claude Code's managed settings (Linux), which no other settings file can override
MANAGED_SETTINGS = ("/etc/claude-code/managed-settings.json",
                    "/etc/claude-code/managed-settings.d")
#: the hook executable ``smllm install`` writes beside the interpreter (setup/install.py)
HOOK_EXE = "smllm-hook"
#: the Python hook the native client runs beside it (smllm.worker)
PYTHON_HOOK = "smllm-hook.py"
#: where ``smllm install`` records the ``smllm`` links it found (a line each), in the
#: state folder: the protected set knows them without consulting ``PATH``
COMMANDS_FILE = ("install", "commands")


def own_folders() -> tuple[str, ...]:
    """smllm's data (journals, index), state (audit, grants, logs), config and cache
    folders, wherever ``SMLLM_HOME`` or the platform puts them."""
    return (paths.data_root(), paths.state_root(), paths.config_root(), paths.cache_root())


def code_paths() -> tuple[str, ...]:
    """smllm's code as this process runs it: the package (and where a link to it leads),
    the virtual environment, and the ``smllm`` command's usual links."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = [package, os.path.realpath(package)]
    if sys.prefix != sys.base_prefix:  # a virtual environment: its interpreter and packages
        out.append(sys.prefix)
        out.append(os.path.join(sys.prefix, "bin", "smllm"))
    out.append(hook_executable())
    out.append(python_hook())
    link = os.path.join(os.path.expanduser("~"), ".local", "bin", "smllm")  # the installer's
    out.append(link)
    out += recorded_commands()
    return tuple(out)


def hook_executable() -> str:
    """The hook executable of this interpreter, as ``smllm install`` writes it beside it
    (where that folder is not writable, install writes it in the state folder, which is
    protected whole)."""
    return os.path.join(os.path.dirname(sys.executable), HOOK_EXE)


def python_hook() -> str:
    """The Python hook beside the native hook client (:mod:`smllm.worker`), which the
    client runs when no worker takes a call."""
    return os.path.join(os.path.dirname(sys.executable), PYTHON_HOOK)


def commands_file() -> str:
    return os.path.join(paths.state_root(), *COMMANDS_FILE)


def recorded_commands() -> list[str]:
    """The ``smllm`` links ``smllm install`` (or ``/smllm:cli``) recorded: absolute paths,
    one a line; none when the file is missing or unreadable."""
    try:
        fd = paths.open_regular(commands_file(), os.O_RDONLY)
    except OSError:
        return []
    try:
        text = os.read(fd, 1 << 16).decode("utf-8", "replace")
    finally:
        os.close(fd)
    return [line for line in text.splitlines() if os.path.isabs(line)]


def record_command(link: str) -> bool:
    """Add ``link`` (an ``smllm`` command on the user's PATH) to :func:`recorded_commands`;
    True if it was not there yet."""
    link = os.path.abspath(link)
    known = recorded_commands()
    if link in known:
        return False
    target = commands_file()
    paths.ensure_private_tree(os.path.dirname(target), paths.state_root())
    paths.write_private(target, "".join(f"{p}\n" for p in [*known, link]).encode())
    return True


def protected_set(project: str) -> tuple[str, ...]:
    """The protected set for ``project``, as absolute paths without repeats."""
    out = [
        *(os.path.join(project, part) for part in PROJECT_PARTS),
        paths.claude_root(),
        paths.claude_json(),
        *own_folders(),
        *code_paths(),
        *MANAGED_SETTINGS,
    ]
    return tuple(dict.fromkeys(os.path.abspath(p) for p in out))


#: the index database beside the journals, and SQLite's files beside it (write-ahead log,
#: shared memory): rows derived from every session (:mod:`smllm.index.database`)
INDEX_FILES = ("index.sqlite3", "index.sqlite3-wal", "index.sqlite3-shm")


def journals() -> tuple[str, ...]:
    """Where the journals of every session of every project live, and the index of them:
    ``sessions/`` and the index files of smllm's data folder."""
    data = paths.data_root()
    return (os.path.join(data, "sessions"), *(os.path.join(data, f) for f in INDEX_FILES))


def unreadable() -> tuple[str, ...]:
    """What the agent's commands must not even read (the sandbox's ``denyRead``; the hooks,
    outside it, still write them): smllm's journal key, its locks folder (a lock file a
    sandboxed process could open, it could hold and starve the hooks), the tripwire's
    folder (its lock and manifests), the journals of every session and their index, and
    Claude Code's transcripts (``projects/`` in its user folder).

    The agent's own ``smllm ledger --last``, ``export --last`` and ``verify`` still work:
    smllm's PreToolUse hook runs them, outside the sandbox, on the session the agent runs in
    (:mod:`smllm.harness.journal_commands`)."""
    return tuple(dict.fromkeys(os.path.abspath(p) for p in (
        paths.key_root(), os.path.join(paths.state_root(), "tripwire"), paths.locks_root(),
        *journals(), os.path.join(paths.claude_root(), "projects"))))


def hidden_folders() -> tuple[str, ...]:
    """The folders of :func:`unreadable` that are smllm's: ``smllm install`` creates them
    (0700), so that every sandbox built after it hides them, even before a hook first
    writes there."""
    return (paths.key_root(), paths.locks_root(), journals()[0])


def with_policy(project: str, sensitive: list[str] | tuple[str, ...],
                guard: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The protected set (``guard``: ``protected_set(project)`` already computed) plus the
    paths the policy lists as ``sensitive`` (relative ones from the project): what no call
    may write without review."""
    extra = [p if os.path.isabs(p) else os.path.join(project, p) for p in sensitive]
    base = protected_set(project) if guard is None else guard
    return tuple(dict.fromkeys([*base, *(os.path.normpath(p) for p in extra)]))
