"""The approval policy: where it lives, its compiled (cached) form, and ``check()``.

Two levels, read in this order (the later wins for settings; rules of both apply):

* user: ``<config dir>/policy.toml`` (``$SMLLM_HOME/policy.toml`` under ``SMLLM_HOME``)
* project: ``.smllm/policy.toml`` in the project (``CLAUDE_PROJECT_DIR`` or the cwd and
  its parents)

plus the built-in rules in ``smllm/data/policy_defaults.toml``. The hot path
(:func:`load`) stats the files, and reads the compiled JSON from
``paths.cache_dir()`` keyed by path + mtime_ns + size; only a cache miss imports the
TOML parser (:mod:`smllm.policy._compile`). A broken file compiles to an ``error``
(``file:line: what (how to fix)``) that the gate turns into a deny for every call.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from smllm import paths

PROJECT_FILE = (".smllm", "policy.toml")
USER_FILE = "policy.toml"
_DEFAULTS = Path(__file__).resolve().parent.parent / "data" / "policy_defaults.toml"


def project_root(cwd: str | None = None) -> Path:
    """The project folder: ``CLAUDE_PROJECT_DIR``, else the nearest folder with ``.smllm/``
    or ``.git`` above ``cwd``, else ``cwd``."""
    env = os.environ.get("CLAUDE_PROJECT_DIR")
    if env and os.path.isabs(env):
        return Path(env)
    start = Path(cwd or os.getcwd())
    for folder in (start, *start.parents):
        if (folder / ".smllm").is_dir() or (folder / ".git").exists():
            return folder
    return start


def files(project: Path) -> list[Path]:
    """The policy files in effect, lowest precedence first (existing ones only)."""
    out = [paths.config_dir() / USER_FILE, project.joinpath(*PROJECT_FILE)]
    return [p for p in out if p.is_file()]


def _stamp(path: Path) -> str:
    try:
        st = path.stat()
    except OSError:
        return f"{path}:missing"
    return f"{path}:{st.st_mtime_ns}:{st.st_size}"


def load(project: Path) -> dict[str, Any]:
    """The compiled policy for ``project`` (cached; never raises for a bad file)."""
    candidates = [paths.config_dir() / USER_FILE, project.joinpath(*PROJECT_FILE)]
    key_src = "\n".join([_stamp(_DEFAULTS), *(_stamp(p) for p in candidates)])
    key = hashlib.sha256(key_src.encode()).hexdigest()[:32]
    cache = paths.cache_dir() / f"policy-{key}.json"
    try:
        data: dict[str, Any] = json.loads(cache.read_bytes())
        if data.get("version") == 1:
            return data
    except (OSError, ValueError):
        pass
    data = _build([p for p in candidates if p.is_file()])
    _save(cache, data)
    return data


def _build(policy_files: list[Path]) -> dict[str, Any]:
    from smllm.errors import SmllmError  # noqa: PLC0415
    from smllm.policy import _compile as compiler  # noqa: PLC0415

    try:
        return compiler.compile_files(policy_files)
    except SmllmError as exc:
        return {"version": 1, "error": exc.render(), "sources": {}}


def _save(cache: Path, data: dict[str, Any]) -> None:
    try:
        paths.ensure_private_tree(cache.parent, paths.state_dir())
        tmp = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, sort_keys=True))
        os.chmod(tmp, 0o600)
        os.replace(tmp, cache)
    except OSError:
        pass  # a cache is an optimisation


def check(project: Path | None = None) -> list[str]:
    """Human-readable problems of the policy in effect for ``project`` (for ``doctor``)."""
    root = project if project is not None else project_root()
    data = _build(files(root))
    return [str(data["error"])] if data.get("error") else []
