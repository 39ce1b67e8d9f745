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

Gemini CLI hands its hooks its own environment, into which it has loaded the project's
dotenv file (the first of ``.gemini/.env`` and ``.env`` in the project or a folder above
it), and each hook object's ``env`` of its settings (a project's ``.gemini/settings.json``
is a file the agent may write): for Gemini's hooks :func:`scrub` drops the ``SMLLM_*``
names those set (:func:`shipped_gemini`).

Hot path: ``os`` only, and the JSON decoder only when an ``SMLLM_*`` variable is set.
"""

from __future__ import annotations

from smllm.base import osfast as os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import MutableMapping

PREFIX = "SMLLM_"
#: the project settings files whose ``env`` Claude Code applies, relative to the project
PROJECT_SETTINGS = (".claude/settings.json", ".claude/settings.local.json")
_LIMIT = 1 << 20


def _read(path: str) -> bytes | None:
    """The bytes of a file that names an ``SMLLM_*`` variable (None when it is missing, not
    readable, too large, or names none)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        data = os.read(fd, _LIMIT + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if PREFIX.encode() in data and len(data) <= _LIMIT else None


def _json(data: bytes) -> object:
    from smllm.base import jsonfast  # noqa: PLC0415 - only when the file names one

    try:
        return jsonfast.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


def _names(env: object) -> list[str]:
    return [k for k in env if isinstance(k, str) and k.startswith(PREFIX)] \
        if isinstance(env, dict) else []


def _env_of(path: str) -> list[str]:
    """The ``SMLLM_*`` names in the ``env`` object of one settings file (none when the file
    is missing, not a regular file, too large or not JSON: Claude Code would not apply it
    either)."""
    data = _read(path)
    obj = _json(data) if data is not None else None
    return _names(obj.get("env")) if isinstance(obj, dict) else []


def _hook_envs_of(path: str) -> list[str]:
    """The ``SMLLM_*`` names in the ``env`` of any hook object of a Gemini settings file."""
    data = _read(path)
    obj = _json(data) if data is not None else None
    events = obj.get("hooks") if isinstance(obj, dict) else None
    found: list[str] = []
    for groups in events.values() if isinstance(events, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            hooks = group.get("hooks") if isinstance(group, dict) else None
            for hook in hooks if isinstance(hooks, list) else ():
                found += _names(hook.get("env")) if isinstance(hook, dict) else []
    return found


def _dotenv_names(path: str) -> list[str]:
    """The ``SMLLM_*`` names a dotenv file sets (``NAME=value``, ``export NAME=value``)."""
    data = _read(path)
    if data is None:
        return []
    out = []
    for raw in data.decode("utf-8", "replace").splitlines():
        line = raw.strip()
        if line.startswith("export "):
            line = line[7:].lstrip()
        name = line.partition("=")[0].strip()
        if "=" in line and name.startswith(PREFIX):
            out.append(name)
    return out


def gemini_dotenv(project: str, home: str | None = None) -> str | None:
    """The dotenv file Gemini CLI 0.61 loads for a (trusted) project: the first of
    ``.gemini/.env`` and ``.env`` in the project or a folder above it, up to (not including)
    the user's home folder, whose files are the user's own; None when there is none."""
    home = os.path.abspath(home or os.path.expanduser("~"))
    folder = os.path.abspath(project)
    while folder != home:
        for rel in (os.path.join(".gemini", ".env"), ".env"):
            path = os.path.join(folder, rel)
            if os.path.isfile(path):
                return path
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return None


def shipped_gemini(project: str, home: str | None = None) -> dict[str, list[str]]:
    """File -> the ``SMLLM_*`` variables it sets for Gemini CLI's hooks, for ``project``:
    its dotenv file (:func:`gemini_dotenv`) and the hook objects of its
    ``.gemini/settings.json``."""
    out: dict[str, list[str]] = {}
    dotenv = gemini_dotenv(project, home)
    for path, names in ((dotenv, _dotenv_names(dotenv) if dotenv else []),
                        (os.path.join(project, ".gemini", "settings.json"),
                         _hook_envs_of(os.path.join(project, ".gemini", "settings.json")))):
        if path and names:
            out[path] = names
    return out


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


def scrub(environ: MutableMapping[str, str] | None = None, harness: str = "claude"
          ) -> list[str]:
    """Remove from ``environ`` (this process's) every ``SMLLM_*`` variable that the
    project's settings set (for Gemini CLI's hooks: :func:`shipped_gemini`); return their
    names."""
    env = os.environ if environ is None else environ
    if not any(k.startswith(PREFIX) for k in env):
        return []
    gemini = harness == "gemini"
    declared = env.get("GEMINI_PROJECT_DIR" if gemini else "CLAUDE_PROJECT_DIR") or ""
    project = declared if os.path.isabs(declared) else os.getcwd()
    home = env.get("GEMINI_CLI_HOME") or env.get("HOME")
    found = shipped_gemini(project, home) if gemini else shipped(project)
    names = sorted({n for listed in found.values() for n in listed})
    for name in names:
        env.pop(name, None)
    return names
