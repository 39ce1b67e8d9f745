"""The approval policy: where it lives, its compiled (cached) form, and ``check()``.

Two levels, read in this order (the later wins for settings; rules of both apply):

* user: ``<config dir>/policy.toml`` (``$SMLLM_HOME/policy.toml`` under ``SMLLM_HOME``)
* project: ``.smllm/policy.toml`` in the project (``CLAUDE_PROJECT_DIR`` or the cwd and
  its parents)

plus the built-in rules in ``smllm/data/policy_defaults.toml``. The hot path
(:func:`load`) stats the files, and reads the compiled JSON from the cache folder
keyed by path + mtime_ns + size; only a cache miss imports the TOML parser
(:mod:`smllm.gate.policy._compile`). A broken file compiles to an ``error``
(``file:line: what (how to fix)``) that the gate turns into a deny for every call.
Only ``os`` and smllm's light ``jsonfast``/``digest`` are imported here.
"""

from __future__ import annotations

from smllm.base import jsonfast, paths
from smllm.base import osfast as os
from smllm.base.digest import sha256_hex
from smllm.base.errors_hot import SmllmError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from smllm.base.shapes import CompiledPolicy

PROJECT_FILE = os.path.join(".smllm", "policy.toml")
USER_FILE = "policy.toml"
_DEFAULTS = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "data",
    "policy_defaults.toml"
)


def project_root(cwd: str | None = None) -> str:
    """The project folder (:func:`smllm.base.paths.project_root`)."""
    return paths.project_root(cwd)


def _candidates(project: str | os.PathLike[str]) -> list[str]:
    return [
        os.path.join(paths.config_root(), USER_FILE),
        os.path.join(os.fspath(project), PROJECT_FILE),
    ]


def files(project: str | os.PathLike[str]) -> list[str]:
    """The policy files in effect, lowest precedence first (existing ones only)."""
    return [p for p in _candidates(project) if os.path.isfile(p)]


def _stamp(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return f"{path}:missing"
    return f"{path}:{st.st_mtime_ns}:{st.st_size}"


def load(project: str | os.PathLike[str]) -> CompiledPolicy:
    """The compiled policy for ``project`` (cached; never raises for a bad file)."""
    candidates = _candidates(project)
    key_src = "\n".join([_stamp(_DEFAULTS), *(_stamp(p) for p in candidates)])
    key = sha256_hex(key_src.encode())[:32]
    cache = os.path.join(paths.cache_root(), f"policy-{key}.json")
    try:
        with open(cache, "rb") as fh:
            data: CompiledPolicy = jsonfast.loads(fh.read())
        if data.get("version") == 1:
            return data
    except (OSError, ValueError):
        pass
    data = _build([p for p in candidates if os.path.isfile(p)])
    _save(cache, data)
    return data


def _build(policy_files: list[str]) -> CompiledPolicy:
    from pathlib import Path  # noqa: PLC0415 - a cache miss only

    from smllm.gate.policy import _compile as compiler  # noqa: PLC0415 - re, TOML: cache miss

    try:
        return compiler.compile_files([Path(p) for p in policy_files])
    except SmllmError as exc:
        return {"version": 1, "error": exc.render(), "sources": {}}


def _save(cache: str, data: CompiledPolicy) -> None:
    try:
        paths.ensure_private_tree(os.path.dirname(cache), paths.state_root())
        paths.write_private(cache, jsonfast.dumps(data).encode())
    except OSError:
        pass  # a cache is an optimisation


def check(project: str | os.PathLike[str] | None = None) -> list[str]:
    """Human-readable problems of the policy in effect for ``project`` (for ``doctor``)."""
    root = os.fspath(project) if project is not None else project_root()
    data = _build(files(root))
    return [str(data["error"])] if data.get("error") else []
