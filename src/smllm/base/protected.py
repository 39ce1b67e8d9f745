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


def unreadable() -> tuple[str, ...]:
    """What the agent's commands must not even read (the sandbox's ``denyRead``; the hooks,
    outside it, still write them): smllm's journal key and Claude Code's transcripts
    (``projects/`` in its user folder).

    The journals stay readable (never writable): the agent's ``smllm ledger --last``,
    ``export --last`` and ``verify`` read the session they run in, and Claude Code's
    sandbox has no way to hide the other sessions while showing that one."""
    return tuple(dict.fromkeys(os.path.abspath(p) for p in (
        paths.key_root(), os.path.join(paths.claude_root(), "projects"))))


def with_policy(project: str, sensitive: list[str] | tuple[str, ...],
                guard: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The protected set (``guard``: ``protected_set(project)`` already computed) plus the
    paths the policy lists as ``sensitive`` (relative ones from the project): what no call
    may write without review."""
    extra = [p if os.path.isabs(p) else os.path.join(project, p) for p in sensitive]
    base = protected_set(project) if guard is None else guard
    return tuple(dict.fromkeys([*base, *(os.path.normpath(p) for p in extra)]))
