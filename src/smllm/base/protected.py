"""smllm's protected set: what the agent must never write, whatever the policy says.

One definition, used by the gate's self-protection (:mod:`smllm.gate.protect`), the
sandbox settings install writes (:mod:`smllm.setup.sandbox`: the same set read-only to
the agent's commands) and doctor. It holds:

* the project's ``.claude/`` and ``.smllm/`` folders, and its ``.mcp.json`` (Claude Code
  starts the servers it names, outside the sandbox);
* the user's Claude Code folder and its state file (:func:`smllm.base.paths.claude_root`);
* smllm's own folders (:func:`own_folders`: data, state, config, cache);
* smllm's code: the package, the virtual environment it runs from, and the ``smllm``
  command where the installer links it (found without consulting ``PATH``).

>>> import os
>>> s = protected_set("/work/p")
>>> "/work/p/.smllm" in s and "/work/p/.mcp.json" in s
True

Hot path: ``os`` and ``sys`` only.
"""

from __future__ import annotations

import os
import sys

from smllm.base import paths

#: what ``smllm install`` adds to a project and the agent must not change
PROJECT_PARTS = (".claude", ".smllm", ".mcp.json")


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
    link = os.path.join(os.path.expanduser("~"), ".local", "bin", "smllm")  # the installer's
    out.append(link)
    return tuple(out)


def protected_set(project: str) -> tuple[str, ...]:
    """The protected set for ``project``, as absolute paths without repeats."""
    out = [
        *(os.path.join(project, part) for part in PROJECT_PARTS),
        paths.claude_root(),
        paths.claude_json(),
        *own_folders(),
        *code_paths(),
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
    sandboxed process could open, it could hold and starve the hooks), the journals of
    every session and their index, and Claude Code's transcripts (``projects/`` in its
    user folder).

    The agent's own ``smllm ledger --last``, ``export --last`` and ``verify`` still work:
    smllm's PreToolUse hook runs them, outside the sandbox, on the session the agent runs in
    (:mod:`smllm.harness.journal_commands`)."""
    return tuple(dict.fromkeys(os.path.abspath(p) for p in (
        paths.key_root(), paths.locks_root(), *journals(),
        os.path.join(paths.claude_root(), "projects"))))


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
