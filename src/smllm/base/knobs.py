"""smllm's environment variables that a project must not set for the hooks.

Claude Code passes the ``env`` of every settings file to the hooks it runs, and a
project's own settings (``.claude/settings.json``, ``.claude/settings.local.json``) are
files a repository ships and an agent may have written. Through them a repository could
make every hook kill itself (``SMLLM_FAULT``), move the journals into the project
(``SMLLM_HOME``), stamp every record with a chosen time (``SMLLM_NOW``), or change the
hooks' deadlines and limits. So a hook takes no ``SMLLM_*`` variable that a project
settings file names in its ``env``: :func:`scrub` removes them from the hook's
environment before anything reads it (SMLLM_HOME then falls back to the platform's
folders), and ``smllm doctor`` names them (:func:`shipped`).

Hot path: ``os`` only, and the JSON decoder only when an ``SMLLM_*`` variable is set.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import MutableMapping

PREFIX = "SMLLM_"
#: the project settings files whose ``env`` Claude Code applies, relative to the project
PROJECT_SETTINGS = (".claude/settings.json", ".claude/settings.local.json")
_LIMIT = 1 << 20


def _env_of(path: str) -> list[str]:
    """The ``SMLLM_*`` names in the ``env`` object of one settings file (none when the file
    is missing, not a regular file, too large or not JSON: Claude Code would not apply it
    either)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return []
    try:
        data = os.read(fd, _LIMIT + 1)
    except OSError:
        return []
    finally:
        os.close(fd)
    if PREFIX.encode() not in data or len(data) > _LIMIT:
        return []
    from smllm.base import jsonfast  # noqa: PLC0415 - only when the file names one

    try:
        obj = jsonfast.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return []
    env = obj.get("env") if isinstance(obj, dict) else None
    return [k for k in env if isinstance(k, str) and k.startswith(PREFIX)] \
        if isinstance(env, dict) else []


def shipped(project: str) -> dict[str, list[str]]:
    """Settings file -> the ``SMLLM_*`` variables its ``env`` sets, for ``project``."""
    out: dict[str, list[str]] = {}
    for rel in PROJECT_SETTINGS:
        path = os.path.join(project, rel)
        names = _env_of(path)
        if names:
            out[path] = names
    return out


#: the knobs the tests turn (crash points, the clock, ids, deadlines, input and wait
#: limits): a hook honours them only where smllm's own config allows it (:data:`SWITCH`)
TEST_KNOBS = ("SMLLM_FAULT", "SMLLM_NOW", "SMLLM_IDS", "SMLLM_HOOK_DEADLINE",
              "SMLLM_MAX_INPUT", "SMLLM_TRANSCRIPT_WAIT")
#: the file in smllm's config folder whose presence lets the hooks honour :data:`TEST_KNOBS`
#: from their environment (the test suite creates it in its scratch home); the config
#: folder is in the protected set, so no agent can create it
SWITCH = "allow-test-knobs"


def untested(environ: MutableMapping[str, str] | None = None) -> list[str]:
    """Remove from ``environ`` (this process's) the :data:`TEST_KNOBS` it holds, unless
    :data:`SWITCH` is in smllm's config folder; return their names.

    A hook inherits its environment from whoever started Claude Code: a shell whose rc
    file, ``.envrc`` or terminal profile a repository or the agent may have written. So a
    knob that makes hooks kill themselves (``SMLLM_FAULT``) or stamps a false time
    (``SMLLM_NOW``) is nobody's order but the test suite's."""
    env = os.environ if environ is None else environ
    present = [k for k in TEST_KNOBS if k in env]
    if not present:
        return []
    from smllm.base import paths  # noqa: PLC0415 - only when a knob is set

    if os.path.isfile(os.path.join(paths.config_root(), SWITCH)):
        return []
    for name in present:
        env.pop(name, None)
    return present


def scrub(environ: MutableMapping[str, str] | None = None) -> list[str]:
    """Remove from ``environ`` (this process's) every ``SMLLM_*`` variable that the
    project's settings set; return their names."""
    env = os.environ if environ is None else environ
    if not any(k.startswith(PREFIX) for k in env):
        return []
    declared = env.get("CLAUDE_PROJECT_DIR") or ""
    project = declared if os.path.isabs(declared) else os.getcwd()
    names = sorted({n for found in shipped(project).values() for n in found})
    for name in names:
        env.pop(name, None)
    return names
